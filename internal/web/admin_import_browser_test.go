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
)

// importCSV is a CRM's export as Excel in Turkish writes it: semicolons, a
// byte order mark, Turkish headers, amounts with a decimal comma. The
// stage's column is called "Pipeline", which no guess finds: the owner maps
// it. Rows 2 and 3 are new stages of two leads, 4 matches no lead, 5 to 7
// are bad rows (an unknown stage, a time past Meta's 7 days, a time in no
// form) and 8 repeats row 2.
func importCSV(now time.Time) string {
	at := func(d time.Duration) string { return now.Add(-d).Format("02.01.2006 15:04") }
	return "\uFEFFKişi;E-posta;Telefon;Pipeline;Tarih;Tutar;Para birimi\r\n" +
		"Ayşe Yılmaz;AYSE.YILMAZ@gmail.com;;Meeting;" + at(48*time.Hour) + ";;\r\n" +
		"Mehmet Demir;;+90 533 218 44 90;Won;" + at(24*time.Hour) + ";12.500,50;try\r\n" +
		"Nobody;nobody@example.com;;won;" + at(24*time.Hour) + ";;\r\n" +
		"Ayşe Yılmaz;ayse.yilmaz@gmail.com;;signed;" + at(24*time.Hour) + ";;\r\n" +
		"X;x@example.com;;won;" + at(20*24*time.Hour) + ";;\r\n" +
		"X;x@example.com;;won;next week;;\r\n" +
		"Ayşe Yılmaz;ayse.yilmaz@gmail.com;;meeting;" + at(47*time.Hour) + ";;\r\n"
}

// TestStageImportInBrowser imports stages from a CSV in real Chromium:
// upload, map the stage's column, preview (nothing recorded yet; each row
// says what it will do and why not), confirm (the two good rows recorded
// as the stage API records them), then the same file again: every row
// says nothing changes, and even a forced confirmation changes nothing. At
// 1280 and 390 px, in English and Turkish, each page fits the screen.
// Screenshots go to testoutput/ (import-<lang>-<width>-*.png).
func TestStageImportInBrowser(t *testing.T) {
	for _, lang := range []string{"en", "tr"} {
		for _, w := range []int{1280, 390} {
			t.Run(fmt.Sprintf("%s-%d", lang, w), func(t *testing.T) {
				ctx := browsertest.New(t, chromedp.Flag("accept-lang", lang), chromedp.Flag("lang", lang))
				e := newAdminEnv(t)
				base := e.srv.URL
				do, text := browserSteps(t, ctx)
				name := fmt.Sprintf("import-%s-%d", lang, w)
				opts := []chromedp.EmulateViewportOption{}
				if w < 500 {
					opts = append(opts, chromedp.EmulateMobile)
				}
				do(name+": screen", chromedp.EmulateViewport(int64(w), 844, opts...))
				file := filepath.Join(t.TempDir(), "deals.csv")
				now := time.Now().UTC().Truncate(time.Minute)
				if err := os.WriteFile(file, []byte(importCSV(now)), 0o644); err != nil {
					t.Fatal(err)
				}
				clean, review := e.leads["clean"], e.leads["review"]
				browserLogIn(t, ctx, base, "ul.leads")

				// From the inbox's link to the upload, map and preview.
				upload := func(step string) {
					t.Helper()
					do(name+": "+step+": open", chromedp.Click(chromedp.CSS(`a[href="/admin/import"]`)),
						chromedp.WaitVisible(chromedp.CSS("#file")))
					fitsScreen(t, ctx, w, lang, name+"-"+step+"-upload")
					do(name+": "+step+": upload", chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{file}),
						chromedp.Click(chromedp.CSS(`button[type=submit].primary`)), chromedp.WaitVisible(chromedp.CSS("#h-map")))
					fitsScreen(t, ctx, w, lang, name+"-"+step+"-map")
					for sel, want := range map[string]string{"#col_email": "1", "#col_phone": "2", "#col_stage": "-1",
						"#col_at": "4", "#col_value": "5", "#col_currency": "6", "#col_lead": "-1"} {
						v, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(sel)))
						if err != nil || v != want {
							t.Errorf("%s: %s guessed %q (%v), want %q", name, sel, v, err, want)
						}
					}
					do(name+": "+step+": map and preview", chromedp.SetValue(chromedp.CSS("#col_stage"), "3"),
						chromedp.Click(chromedp.CSS(`button[value=preview]`)), chromedp.WaitVisible(chromedp.CSS("#h-preview")))
					fitsScreen(t, ctx, w, lang, name+"-"+step+"-preview")
				}
				statuses := func() string {
					t.Helper()
					got, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](`Array.from(document.querySelectorAll('.import-row')).map(function (li) { return li.dataset.line + ':' + li.dataset.status })`))
					if err != nil {
						t.Fatal(err)
					}
					return fmt.Sprint(got)
				}
				upload("first")
				if got, want := statuses(), "[2:new 3:new 4:no_lead 5:invalid 6:invalid 7:invalid 8:repeat]"; got != want {
					t.Fatalf("%s: preview %s, want %s", name, got, want)
				}
				rows := text(".import-rows")
				for _, why := range []string{`unknown stage "signed"`, "older than 7 days", `"next week" is in no known form`, "Mehmet Demir"} {
					if !strings.Contains(rows, why) {
						t.Errorf("%s: the preview does not say %q: %s", name, why, rows)
					}
				}
				if n := e.stages(clean.ID) + e.stages(review.ID); n != 0 {
					t.Fatalf("%s: the preview recorded %d stages", name, n)
				}
				do(name+": confirm", chromedp.Click(chromedp.CSS(`button[value=confirm]`)),
					chromedp.WaitVisible(chromedp.CSS(`a[href="/admin/import"]`)))
				fitsScreen(t, ctx, w, lang, name+"-done")
				if got, want := statuses(), "[2:added 3:added 4:no_lead 5:invalid 6:invalid 7:invalid 8:repeat]"; got != want {
					t.Errorf("%s: result %s, want %s", name, got, want)
				}
				st, err := e.db.LeadStagesByLead(context.Background(), review.ID)
				if err != nil || len(st) != 1 || st[0].Stage != "won" || st[0].Value == nil || *st[0].Value != 12500.5 ||
					st[0].Currency != "TRY" || !st[0].At.Equal(now.Add(-24*time.Hour)) {
					t.Errorf("%s: the won row recorded %+v (%v)", name, st, err)
				}
				st, _ = e.db.LeadStagesByLead(context.Background(), clean.ID)
				if len(st) != 1 || st[0].Stage != "meeting" || !st[0].At.Equal(now.Add(-48*time.Hour)) {
					t.Errorf("%s: the meeting row recorded %+v", name, st)
				}
				if l, _ := e.db.LeadByID(context.Background(), review.ID); l.Verdict != model.VerdictClean || l.DecidedBy != model.DecidedByCRM {
					t.Errorf("%s: the review lead's stage did not make it clean: %s by %s", name, l.Verdict, l.DecidedBy)
				}
				before := e.footprint()

				// The same file again: nothing to record, and a forced
				// confirmation changes nothing either.
				do(name+": back to the inbox", chromedp.Navigate(base+"/admin/"), chromedp.WaitVisible(chromedp.CSS("ul.leads")))
				upload("again")
				if got, want := statuses(), "[2:recorded 3:recorded 4:no_lead 5:invalid 6:invalid 7:invalid 8:repeat]"; got != want {
					t.Errorf("%s: preview again %s, want %s", name, got, want)
				}
				if disabled, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('button[value=confirm]').disabled`)); err != nil || !disabled {
					t.Errorf("%s: the confirmation is offered with nothing to record (%v)", name, err)
				}
				do(name+": force the confirmation", chromedp.Evaluate[chromedp.Void](`document.querySelector('button[value=confirm]').disabled = false`),
					chromedp.Click(chromedp.CSS(`button[value=confirm]`)), chromedp.WaitVisible(chromedp.CSS(`a[href="/admin/import"]`)))
				if after := e.footprint(); after != before {
					t.Errorf("%s: importing again changed the database:\n%s\nwant\n%s", name, after, before)
				}
			})
		}
	}
}

// stages counts a lead's recorded stages.
func (e *adminEnv) stages(id model.LeadID) int {
	e.t.Helper()
	st, err := e.db.LeadStagesByLead(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return len(st)
}

// footprint sums up what an import may write for the fixture's leads: each
// lead's verdict, stages, history entries and events.
func (e *adminEnv) footprint() string {
	e.t.Helper()
	ctx := context.Background()
	var b strings.Builder
	for _, role := range []string{"clean", "review", "junk", "xss"} {
		id := e.leads[role].ID
		l, err := e.db.LeadByID(ctx, id)
		if err != nil {
			e.t.Fatal(err)
		}
		hist, err := e.db.HistoryByLead(ctx, id)
		if err != nil {
			e.t.Fatal(err)
		}
		dels, err := e.db.DeliveriesByLead(ctx, id)
		if err != nil {
			e.t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s: %s by %s, %d stages, %d history entries, %d events\n", role, l.Verdict, l.DecidedBy,
			e.stages(id), len(hist), len(dels))
	}
	return b.String()
}

// fitsScreen screenshots the page and fails the test when anything on it
// is wider than the screen, or the page is not in lang.
func fitsScreen(t *testing.T, ctx context.Context, w int, lang, name string) {
	t.Helper()
	browsertest.Screenshot(t, ctx, name)
	res, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](`(function () {
		var vw = `+fmt.Sprint(w)+`, wide = [];
		document.querySelectorAll('body *').forEach(function (el) {
			if (el.closest('.table-scroll')) { return; }
			var r = el.getBoundingClientRect();
			if (r.width > 0 && r.right > vw + 0.5) {
				wide.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + ' ' + Math.round(r.right) + 'px');
			}
		});
		return [document.documentElement.scrollWidth, window.innerWidth, document.documentElement.lang, wide.slice(0, 8).join('; ')];
	})()`))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	sw, iw := res[0].(float64), res[1].(float64)
	if sw > float64(w) || iw != float64(w) || res[3] != "" {
		t.Errorf("%s: %v px wide (window %v px) on a %d px screen: %v", name, sw, iw, w, res[3])
	}
	if res[2] != lang {
		t.Errorf("%s: page in %v, want %s", name, res[2], lang)
	}
}
