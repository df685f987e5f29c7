package app_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// reportFixture stores a hand-made week of leads of site dent with known
// campaigns, verdicts, stages and values (and a few that must not count),
// and returns the site and the week.
func reportFixture(t *testing.T, db *store.DB) (site *model.Site, from, to time.Time) {
	t.Helper()
	ctx := context.Background()
	from = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	to = from.AddDate(0, 0, 7)
	day := func(d, h int) time.Time {
		return from.Add(time.Duration(d-1)*24*time.Hour + time.Duration(h)*time.Hour)
	}
	site = testkit.AddSite(t, db, testkit.Site(testkit.WithMeta("111", model.ModeDryRun), func(s *model.Site) {
		s.Settings.Meta.Stages = map[string]model.StageEvent{"qualified": {Event: "QualifiedLead"}, "meeting": {Event: "Schedule"},
			"won": {Event: "Purchase", Currency: "EUR"}}
	}), from.AddDate(0, -2, 0))
	testkit.AddSites(t, db, from.AddDate(0, -2, 0), "other")

	for _, v := range []*model.Visit{
		// v1 came from a Meta ad, then again with nothing: the ad is its
		// landing visit.
		{VisitorID: "v1", At: day(-2, 10), ClickIDs: model.ClickIDs{FBClid: "fb1"},
			UTM: model.UTM{Source: "facebook", Campaign: "Implants – Istanbul", Term: "Women 35+", Content: "Video A"}},
		{VisitorID: "v1", At: day(1, 9)},
		{VisitorID: "v2", At: day(2, 8), ClickIDs: model.ClickIDs{FBClid: "fb2"},
			UTM: model.UTM{Campaign: "Implants – Istanbul", Term: "Women 35+", Content: "Carousel B"}},
		{VisitorID: "v3", At: day(3, 8), ClickIDs: model.ClickIDs{GClid: "g3"}, UTM: model.UTM{Source: "google", Campaign: "Whitening"}},
		// After v4's lead: it did not bring it.
		{VisitorID: "v4", At: day(5, 10), UTM: model.UTM{Campaign: "Late"}},
		// Before the look-back: too old to have brought v6's lead.
		{VisitorID: "v6", At: from.AddDate(0, -2, 0), UTM: model.UTM{Campaign: "Old"}},
	} {
		v.SiteID, v.EventID = site.ID, fmt.Sprintf("pv_%s_%d", v.VisitorID, v.At.Unix())
		if err := db.VisitorUpsert(ctx, &model.Visitor{ID: v.VisitorID, SiteID: site.ID, FirstSeen: v.At, LastSeen: v.At}); err != nil {
			t.Fatal(err)
		}
		if err := db.VisitInsert(ctx, v); err != nil {
			t.Fatal(err)
		}
	}

	clean := model.Decision{Verdict: model.VerdictClean, DecidedBy: model.DecidedByRules}
	junk := func(codes ...string) model.Decision {
		d := model.Decision{Verdict: model.VerdictJunk, DecidedBy: model.DecidedByRules}
		for i, c := range codes {
			// The first is final: it is the main reason however many
			// points the others give.
			d.Reasons = append(d.Reasons, model.Reason{Code: c, Points: 10 * (i + 1), Final: i == 0})
		}
		return d
	}
	type stage struct {
		name     string
		value    float64
		currency string
	}
	leads := []struct {
		site    model.SiteID
		id      model.LeadID
		at      time.Time
		edit    func(*model.Lead)
		stages  []stage
		decided model.Decision
	}{
		{site.ID, "l1", day(2, 12), func(l *model.Lead) { l.VisitorID = "v1" }, []stage{{"qualified", 0, ""}, {"meeting", 0, ""}, {"won", 6000, "EUR"}}, clean},
		{site.ID, "l2", day(2, 13), func(l *model.Lead) { l.VisitorID = "v2" }, nil, junk("FILL_TOO_FAST", "NO_MESSAGE")},
		{site.ID, "l3", day(3, 9), func(l *model.Lead) { l.VisitorID = "v3" }, []stage{{"won", 1500.5, "TRY"}}, clean},
		{site.ID, "l4", day(3, 10), func(l *model.Lead) { l.VisitorID = "v3" }, nil, junk("DUPLICATE")},
		{site.ID, "l5", day(5, 9), func(l *model.Lead) { l.VisitorID = "v4" }, nil, model.Decision{Verdict: model.VerdictReview}},
		{site.ID, "l6", day(4, 9), func(l *model.Lead) { l.VisitorID = "v6"; l.PageURL = testkit.Origin + "/?gclid=g6" },
			nil, model.Decision{Verdict: model.VerdictJunk, DecidedBy: model.DecidedByOwner,
				Reasons: []model.Reason{{Code: "FILL_TIME_MISSING", Points: 90, Final: true}, {Code: "OWNER_JUNK"}}}},
		{site.ID, "l7", day(6, 9), func(l *model.Lead) {
			l.Source, l.SourceDetail = model.SourceLeadAds, map[string]string{model.DetailCampaign: "120", model.DetailCampaignName: "Lead form – Dec",
				model.DetailAdSet: "121", model.DetailAdSetName: "Istanbul", model.DetailAd: "122", model.DetailAdName: "Form ad"}
		}, []stage{{"qualified", 0, ""}, {"won", 2000, "EUR"}}, clean},
		{site.ID, "l8", day(6, 10), func(l *model.Lead) {
			// Renamed since: the ids keep it in the same rows.
			l.Source, l.SourceDetail = model.SourceLeadAds, map[string]string{model.DetailCampaign: "120", model.DetailCampaignName: "Lead form",
				model.DetailAdSet: "121", model.DetailAd: "122"}
		}, nil, junk("PHONE_PATTERN")},
		{site.ID, "l9", day(7, 9), func(l *model.Lead) {
			l.Source, l.SourceDetail = model.SourceWhatsApp, map[string]string{model.DetailAdID: "999", model.DetailAdHeadline: "Chat with us", model.DetailCTWAClid: "c9"}
		}, []stage{{"meeting", 0, ""}}, clean},
		{site.ID, "l14", day(6, 11), func(l *model.Lead) {
			l.Source, l.SourceDetail = model.SourceLeadAds, map[string]string{model.DetailOrganic: "true", model.DetailForm: "77"}
		}, nil, model.Decision{Verdict: model.VerdictReview}},
		{site.ID, "l10", day(7, 23), func(l *model.Lead) { l.PageURL = testkit.Origin + "/?utm_source=google&utm_campaign=Whitening" }, nil, clean},
		// Outside the week, and another site's: not counted.
		{site.ID, "l11", from.Add(-time.Millisecond), func(l *model.Lead) { l.VisitorID = "v1" }, []stage{{"won", 100, "EUR"}}, clean},
		{site.ID, "l12", to, func(l *model.Lead) { l.VisitorID = "v1" }, nil, clean},
		{"other", "l13", day(2, 12), nil, []stage{{"won", 50, "EUR"}}, clean},
	}
	for _, c := range leads {
		l := testkit.Lead(c.site, c.id, c.at)
		if c.edit != nil {
			c.edit(l)
		}
		l.Decision = c.decided
		if err := db.LeadInsert(ctx, l); err != nil {
			t.Fatal(err)
		}
		for _, s := range c.stages {
			st := &model.LeadStage{LeadID: l.ID, SiteID: l.SiteID, Stage: s.name, At: c.at.Add(time.Hour), EventName: "E",
				EventID: string(l.ID) + s.name, Currency: s.currency, CreatedAt: c.at.Add(time.Hour)}
			if s.currency != "" {
				v := s.value
				st.Value = &v
			}
			if ok, err := db.LeadStageInsert(ctx, st); err != nil || !ok {
				t.Fatalf("stage %s of %s: %v %v", s.name, l.ID, ok, err)
			}
		}
	}
	return site, from, to
}

// reportLine writes a row of the report for comparison.
func reportLine(name string, f app.Figures) string {
	var reasons, stages, revenue []string
	for _, r := range f.JunkReasons {
		reasons = append(reasons, fmt.Sprintf("%s=%d", r.Code, r.N))
	}
	for _, s := range []string{"qualified", "meeting", "won"} {
		stages = append(stages, fmt.Sprint(f.Stages[s]))
	}
	for _, m := range f.Revenue {
		revenue = append(revenue, fmt.Sprintf("%d %s", m.Cents, m.Currency))
	}
	return fmt.Sprintf("%s: %d leads, %d clean, %d review, %d junk [%s], stages %s, won %d [%s]", name, f.Leads, f.Clean, f.Review, f.Junk,
		strings.Join(reasons, " "), strings.Join(stages, "/"), f.Won, strings.Join(revenue, ", "))
}

// TestCampaignReport: the report of a hand-made week gives, for each
// campaign, ad set and ad (Lead Ads' by their ids, the web's by their
// landing visit's UTM tags, a WhatsApp ad's by its id) and for the leads
// without a campaign by where their click came from, the figures counted
// by hand; the funnel is the site's; nothing of another week or site
// counts; the revenue keeps its currencies apart, the site's first.
func TestCampaignReport(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		site, from, to := reportFixture(t, db)
		svc := app.New(app.Options{Store: db, Now: func() time.Time { return to }})
		r, err := svc.CampaignReport(context.Background(), site, from, to)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, row := range r.Rows {
			name := strings.Repeat("  ", row.Level) + row.Name
			if row.ID != "" {
				name += " #" + row.ID
			}
			if row.Click != "" {
				name += "(no campaign, " + row.Click + ")"
			}
			got = append(got, reportLine(name, row.Figures))
		}
		got = append(got, reportLine("total", r.Total), fmt.Sprintf("visits %d, stages %v, currency %s", r.Visits, r.Stages, r.Currency))
		want := []string{
			"Whitening: 3 leads, 2 clean, 0 review, 1 junk [DUPLICATE=1], stages 0/0/1, won 1 [150050 TRY]",
			"Implants – Istanbul: 2 leads, 1 clean, 0 review, 1 junk [FILL_TOO_FAST=1], stages 1/1/1, won 1 [600000 EUR]",
			"  Women 35+: 2 leads, 1 clean, 0 review, 1 junk [FILL_TOO_FAST=1], stages 1/1/1, won 1 [600000 EUR]",
			"    Video A: 1 leads, 1 clean, 0 review, 0 junk [], stages 1/1/1, won 1 [600000 EUR]",
			"    Carousel B: 1 leads, 0 clean, 0 review, 1 junk [FILL_TOO_FAST=1], stages 0/0/0, won 0 []",
			"Lead form – Dec #120: 2 leads, 1 clean, 0 review, 1 junk [PHONE_PATTERN=1], stages 1/0/1, won 1 [200000 EUR]",
			"  Istanbul #121: 2 leads, 1 clean, 0 review, 1 junk [PHONE_PATTERN=1], stages 1/0/1, won 1 [200000 EUR]",
			"    Form ad #122: 2 leads, 1 clean, 0 review, 1 junk [PHONE_PATTERN=1], stages 1/0/1, won 1 [200000 EUR]",
			"(no campaign, meta): 1 leads, 1 clean, 0 review, 0 junk [], stages 0/1/0, won 0 []",
			"    Chat with us #999: 1 leads, 1 clean, 0 review, 0 junk [], stages 0/1/0, won 0 []",
			"(no campaign, google): 1 leads, 0 clean, 0 review, 1 junk [OWNER_JUNK=1], stages 0/0/0, won 0 []",
			"(no campaign, organic): 2 leads, 0 clean, 2 review, 0 junk [], stages 0/0/0, won 0 []",
			"total: 11 leads, 5 clean, 2 review, 4 junk [DUPLICATE=1 FILL_TOO_FAST=1 OWNER_JUNK=1], stages 2/2/3, won 3 [800000 EUR, 150050 TRY]",
			"visits 4, stages [qualified meeting won], currency EUR",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("report:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// TestCampaignReportCountersAgree: the won deals and revenue the dashboard
// reads from the counters count each deal on the day it was won: the
// report's (the week's leads), and l11, a lead of the day before won
// within the week; not the other site's.
func TestCampaignReportCountersAgree(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		site, from, to := reportFixture(t, db)
		svc := app.New(app.Options{Store: db})
		r, err := svc.CampaignReport(context.Background(), site, from, to)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := db.Counters(context.Background(), site.ID, model.Day(from), model.Day(to)-1)
		if err != nil {
			t.Fatal(err)
		}
		won, revenue := app.WonFromCounters(cs, r.Currency)
		if r.Total.Won != 3 || won != 4 || fmt.Sprint(revenue) != "[{EUR 810000} {TRY 150050}]" {
			t.Errorf("counters: %d won, %v; report: %d won, %v", won, revenue, r.Total.Won, r.Total.Revenue)
		}
	})
}

// TestCampaignReportFromCountersEqualsLeads: the report read from the
// campaign report's counters (and the leads of the part days at a period's
// ends) is the one built from every lead of the period, for whole UTC days
// and for a period of another time zone's days.
func TestCampaignReportFromCountersEqualsLeads(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		site, from, to := reportFixture(t, db)
		svc := app.New(app.Options{Store: db})
		for _, shift := range []time.Duration{0, -3 * time.Hour, 5 * time.Hour, 24*time.Hour + 7*time.Hour} {
			f, tt := from.Add(shift), to.Add(shift)
			if shift > 24*time.Hour {
				tt = f.Add(5 * time.Hour) // within one day
			}
			got, err := svc.CampaignReport(context.Background(), site, f, tt)
			if err != nil {
				t.Fatal(err)
			}
			leads, err := db.ReportLeads(context.Background(), site.ID, f, tt)
			if err != nil {
				t.Fatal(err)
			}
			want := app.BuildReport(site, leads)
			want.From, want.To, want.Visits = got.From, got.To, got.Visits
			if g, w := fmt.Sprintf("%+v", *got), fmt.Sprintf("%+v", *want); g != w {
				t.Errorf("shift %s:\ncounters %s\nleads    %s", shift, g, w)
			}
			if shift == 0 && len(got.Rows) == 0 {
				t.Error("no rows")
			}
		}
	})
}
