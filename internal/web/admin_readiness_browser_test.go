package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cleanads/cleanads/internal/browsertest"
)

// TestReadinessScreens walks the Conversion Leads readiness page in
// Chromium, in English and Turkish, on a desktop (1280 px) and a phone
// (390 px): every requirement and Meta's own figures are shown, and neither
// the page nor any part of it is wider than the screen. Screenshots go to
// testoutput/.
func TestReadinessScreens(t *testing.T) {
	ctx := browsertest.New(t)
	e := readyEnv(t)
	base := e.srv.URL
	do, text := browserSteps(t, ctx)
	browserLogIn(t, ctx, base, "main")
	// wider is how far the page, or its widest part, reaches past the
	// screen's right edge.
	wider := func() float64 {
		t.Helper()
		over, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`(function () {
			var w = document.documentElement.clientWidth;
			var worst = Math.max(0, document.documentElement.scrollWidth - w, document.body.scrollWidth - w);
			document.querySelectorAll("main, main *").forEach(function (e) {
				var r = e.getBoundingClientRect();
				if (r.width > 0 && r.right > w + 1) { worst = Math.max(worst, r.right - w); }
			});
			// A box that scrolls sideways hides what is past its edge.
			document.querySelectorAll(".table-scroll").forEach(function (e) {
				worst = Math.max(worst, e.scrollWidth - e.clientWidth);
			});
			return worst;
		})()`))
		if err != nil {
			t.Fatalf("measuring the page: %v", err)
		}
		return over
	}
	for _, lang := range []struct{ code, asks, emq string }{
		{"en", "What Meta asks", "Event Match Quality 6.4 of 10"},
		{"tr", "Meta'nın istedikleri", "Olay Eşleşme Kalitesi 10 üzerinden 6.4"},
	} {
		// The language is the user's setting, set here as the language form
		// would: a script submitting that form raced the page's own
		// navigation and, on a loaded machine, waited out the test's deadline.
		user, err := e.db.UserByEmail(context.Background(), adminEmail)
		if err == nil {
			err = e.db.UserSetLang(context.Background(), user.ID, lang.code, time.Now())
		}
		if err != nil {
			t.Fatal(err)
		}
		do("language "+lang.code, chromedp.Navigate(base+"/admin/sites/dent/readiness"),
			chromedp.WaitVisible(chromedp.CSS(`html[lang="`+lang.code+`"] #h-req`)))
		for _, view := range []struct {
			name string
			w, h int64
			opts []chromedp.EmulateViewportOption
		}{{"desktop", 1280, 900, nil}, {"phone", 390, 844, []chromedp.EmulateViewportOption{chromedp.EmulateMobile}}} {
			name := lang.code + " " + view.name
			do(name, chromedp.EmulateViewport(view.w, view.h, view.opts...),
				chromedp.Navigate(base+"/admin/sites/dent/readiness"), chromedp.WaitVisible(chromedp.CSS("#h-meta")))
			if got := text("#h-req"); got != lang.asks {
				t.Errorf("%s: heading %q, want %q", name, got, lang.asks)
			}
			if got := text(`section[aria-labelledby="h-meta"]`); !strings.Contains(got, lang.emq) {
				t.Errorf("%s: Meta's figures: %q", name, got)
			}
			n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(".ready-item").length`))
			if err != nil || n != 8 {
				t.Errorf("%s: %d requirements shown (%v), want 8", name, n, err)
			}
			if over := wider(); over > 0 {
				t.Errorf("%s: the page reaches %.0f px past the %d px screen", name, over, view.w)
			}
			browsertest.Screenshot(t, ctx, "readiness-"+lang.code+"-"+view.name)
			browsertest.ScreenshotOf(t, ctx, "readiness-stages-"+lang.code+"-"+view.name, `section[aria-labelledby="h-stages"]`)
		}
	}
}
