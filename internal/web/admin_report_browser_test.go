package web_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cleanads/cleanads/internal/browsertest"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// longCampaign is a campaign name as advertisers write them: long, and in
// part without a space to break at.
const longCampaign = "Implant kampanyası – İstanbul – Kadın 35-55 – Aralık_2026_yeniden_hedefleme_video_v2_uzun_ad"

// campaignLeads adds to the admin env's site dent leads of the last days
// with campaigns, stages and values in two currencies: a Lead Ads lead won
// for 6,000 EUR, a web lead from a Meta ad judged junk, a WhatsApp ad's
// lead at the meeting stage, and the clean lead (campaign implant-spring)
// won for 1,500.50 TRY.
func (e *adminEnv) campaignLeads() {
	e.t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	at := now.Add(-2 * time.Hour)
	if err := e.db.VisitorUpsert(ctx, &model.Visitor{ID: "rv1", SiteID: "dent", FirstSeen: at, LastSeen: at}); err != nil {
		e.t.Fatal(err)
	}
	for i, v := range []*model.Visit{
		{VisitorID: "rv1", At: at.Add(-time.Hour), ClickIDs: model.ClickIDs{FBClid: "fbr1"},
			UTM: model.UTM{Source: "facebook", Campaign: longCampaign, Term: "Kadın 35-55", Content: "Video A"}},
		{VisitorID: "rv1", At: at.Add(-30 * time.Minute)},
	} {
		v.SiteID, v.EventID = "dent", fmt.Sprintf("rpv_%d", i)
		if err := e.db.VisitInsert(ctx, v); err != nil {
			e.t.Fatal(err)
		}
	}
	type stage struct {
		lead     model.LeadID
		name     string
		value    float64
		currency string
	}
	leads := []*model.Lead{
		testkit.Lead("dent", "ld_rep_ads", at, func(l *model.Lead) {
			l.Name, l.Source = "Zeynep Kaya", model.SourceLeadAds
			l.SourceDetail = map[string]string{model.DetailCampaign: "120210000000000001", model.DetailCampaignName: "Lead form – implants – December, Istanbul and Ankara, women 30-60",
				model.DetailAdSet: "120210000000000002", model.DetailAdSetName: "Istanbul", model.DetailAd: "120210000000000003", model.DetailAdName: "Form ad"}
			l.Decision = model.Decision{Verdict: model.VerdictClean, DecidedBy: model.DecidedByRules}
		}),
		testkit.Lead("dent", "ld_rep_web", at, func(l *model.Lead) {
			l.Name, l.VisitorID = "Bot", "rv1"
			l.Decision = model.Decision{Verdict: model.VerdictJunk, DecidedBy: model.DecidedByRules,
				Reasons: []model.Reason{{Code: "FILL_TOO_FAST", Points: 100, Final: true}}}
		}),
		testkit.Lead("dent", "ld_rep_wa", at, func(l *model.Lead) {
			l.Name, l.Source = "Ali", model.SourceWhatsApp
			l.SourceDetail = map[string]string{model.DetailAdID: "120219999999999999", model.DetailCTWAClid: "ctwa1"}
			l.Decision = model.Decision{Verdict: model.VerdictClean, DecidedBy: model.DecidedByRules}
		}),
	}
	err := e.db.InTx(ctx, func(tx *store.Tx) error {
		for _, l := range leads {
			if err := tx.LeadInsert(ctx, l); err != nil {
				return err
			}
		}
		for _, s := range []stage{{"ld_rep_ads", "qualified", 0, ""}, {"ld_rep_ads", "won", 6000, "EUR"},
			{"ld_rep_wa", "meeting", 0, ""}, {e.leads["clean"].ID, "won", 1500.5, "TRY"}} {
			st := &model.LeadStage{LeadID: s.lead, SiteID: "dent", Stage: s.name, At: now.Add(-time.Hour), EventName: "E",
				EventID: string(s.lead) + s.name, Currency: s.currency, CreatedAt: now}
			if s.currency != "" {
				st.Value = &s.value
			}
			if _, err := tx.LeadStageInsert(ctx, st); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// TestCampaignReportScreens shows the campaign report, the funnel and the
// dashboard's won deals as the owner sees them, in English and Turkish, on a
// desktop (1280 px) and a phone (390 px): the figures are there in the
// page's language, long campaign names are cut (with their full name in
// the title) or wrap, and no page is wider than the screen. Screenshots go
// to testoutput/ (report-en-desktop.png, ...).
func TestCampaignReportScreens(t *testing.T) {
	ctx := browsertest.New(t)
	e := newAdminEnv(t)
	e.campaignLeads()
	base := e.srv.URL
	do, rawText := browserSteps(t, ctx)
	// text reads what sel shows, its no-break spaces (an amount and its
	// currency) as spaces.
	text := func(sel string) string { return strings.ReplaceAll(rawText(sel), "\u00a0", " ") }
	// wide returns by how many pixels the page is wider than a screen w
	// px wide: document.documentElement.scrollWidth against innerWidth,
	// and innerWidth against w, since a phone (Chromium's mobile
	// emulation too) zooms out to a page wider than itself and widens
	// innerWidth with it (a 933 px page gave innerWidth 933).
	wide := func(w int64) float64 {
		t.Helper()
		over, err := chromedp.Run(ctx, chromedp.Evaluate[float64](fmt.Sprintf(
			`Math.max(document.documentElement.scrollWidth - window.innerWidth, window.innerWidth - %d)`, w)))
		if err != nil {
			t.Fatal(err)
		}
		return over
	}
	browserLogIn(t, ctx, base, "ul.leads")
	for _, lang := range []string{"en", "tr"} {
		if lang == "tr" {
			do("Turkish", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(base+"/admin/report?site=dent"),
				chromedp.WaitVisible(chromedp.CSS("#lang")), chromedp.SetValue(chromedp.CSS("#lang"), "tr"),
				chromedp.Submit(chromedp.CSS("#lang")), chromedp.WaitVisible(chromedp.CSS(`html[lang="tr"] #funnel`)))
		}
		T := func(en, tr string) string {
			if lang == "tr" {
				return tr
			}
			return en
		}
		for _, view := range []struct {
			name string
			w, h int64
		}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
			where := lang + " " + view.name
			vp := chromedp.EmulateViewport(view.w, view.h)
			if view.w < 500 {
				vp = chromedp.EmulateViewport(view.w, view.h, chromedp.EmulateMobile)
			}
			do(where+": report", vp, chromedp.Navigate(base+"/admin/report?site=dent"), chromedp.WaitVisible(chromedp.CSS("table.report")))
			table, funnel := text("table.report"), text("#funnel")
			for _, want := range []string{T("6,000 EUR", "6.000 EUR"), T("1,500.50 TRY", "1.500,50 TRY"), "Istanbul", "Form ad", "implant-spring",
				T("No campaign", "Kampanya yok"), T("Meta ad click", "Meta reklamı tıklaması"), T("organic or direct", "organik ya da doğrudan"),
				T("Filled too fast (1)", "Çok hızlı dolduruldu (1)"), T("All leads", "Tüm talepler")} {
				if !strings.Contains(table, want) {
					t.Errorf("%s: the report lacks %q: %q", where, want, table)
				}
			}
			if !strings.Contains(funnel, T("Revenue (won)", "Gelir (kazanılan)")) || !strings.Contains(funnel, T("1,500.50 TRY · 6,000 EUR", "1.500,50 TRY · 6.000 EUR")) {
				t.Errorf("%s: the funnel: %q", where, funnel)
			}
			// The funnel's bars: visits, leads, clean, then the stages. The
			// site's currency (its won stage's, TRY) comes first.
			bars, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#funnel svg g > title')).map(function (e) { return e.textContent })`))
			if err != nil || len(bars) != 6 || !strings.HasPrefix(bars[1], T("leads: 7", "başvuru: 7")) || !strings.HasPrefix(bars[5], T("won: 2", "kazanıldı: 2")) {
				t.Errorf("%s: the funnel's bars: %q %v", where, bars, err)
			}
			title, err := chromedp.Run(ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll('.rname')).map(function (e) { return e.title }).join('\n')`))
			if err != nil || !strings.Contains(title, longCampaign) {
				t.Errorf("%s: the long campaign's title: %q %v", where, title, err)
			}
			if over := wide(view.w); over > 0 {
				t.Errorf("%s: the report is %.0f px wider than the screen", where, over)
			}
			browsertest.Screenshot(t, ctx, "report-"+lang+"-"+view.name)
			browsertest.ScreenshotOf(t, ctx, "report-funnel-"+lang+"-"+view.name, "#funnel")
			browsertest.ScreenshotOf(t, ctx, "report-row-"+lang+"-"+view.name, "table.report tbody tr:nth-child(7)")

			do(where+": dashboard", chromedp.Navigate(base+"/admin/dashboard?site=dent"), chromedp.WaitVisible(chromedp.CSS(".stat.won")))
			if got := text(".stats"); !strings.Contains(got, T("deals won", "kazanılan satış")) || !strings.Contains(got, T("1,500.50 TRY\n6,000 EUR", "1.500,50 TRY\n6.000 EUR")) {
				t.Errorf("%s: the dashboard's won deals: %q", where, got)
			}
			if over := wide(view.w); over > 0 {
				t.Errorf("%s: the dashboard is %.0f px wider than the screen", where, over)
			}
			browsertest.ScreenshotOf(t, ctx, "dashboard-stats-"+lang+"-"+view.name, ".stats")
		}
	}
	// The manual's picture: the English report on a desktop, when asked.
	if os.Getenv("CLEANADS_DOCS_IMG") != "" {
		png, err := os.ReadFile(filepath.Join(browsertest.OutputDir(t), "report-en-desktop.png"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "img", "campaign-report.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
