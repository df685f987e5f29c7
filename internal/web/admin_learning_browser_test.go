package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/cleanads/cleanads/internal/browsertest"
)

// TestLearningAndConflictScreens shows issue 19's new screens as the owner
// sees them on a desktop and on a phone: the dashboard's card of what their
// word teaches (with a CRM stage that overturned a rule), and the conflict
// of the CRM's stage with their junk in the inbox and on the lead page.
// Nothing may be wider than a phone's screen. Screenshots go to testoutput/.
func TestLearningAndConflictScreens(t *testing.T) {
	ctx := browsertest.New(t)
	e := newAdminEnv(t)
	e.ownerWords()
	fast := e.crmWonFastFill()
	conflict := e.conflictLead()
	if _, err := e.svc.RebuildTextModels(context.Background()); err != nil {
		t.Fatal(err)
	}
	base := e.srv.URL
	do, text := browserSteps(t, ctx)
	card := `section[aria-labelledby="h-learning"]`
	row := `li.lead-row:has(a.name[href="/admin/leads/` + string(conflict.ID) + `"])`
	// fits fails the test when a part of what sel matches reaches past the
	// right edge of the screen (hidden or needing a sideways scroll).
	fits := func(where, sel string) {
		t.Helper()
		over, err := chromedp.Run(ctx, chromedp.Evaluate[float64](fmt.Sprintf(`(function () {
			var w = document.documentElement.clientWidth, worst = 0;
			document.querySelectorAll(%q).forEach(function (e) {
				var r = e.getBoundingClientRect();
				if (r.width > 0 && r.right > w + 1) { worst = Math.max(worst, r.right - w); }
			});
			return worst;
		})()`, sel+", "+sel+" *")))
		if err != nil || over > 0 {
			t.Errorf("%s: %s reaches %.0f px past the screen's edge (%v)", where, sel, over, err)
		}
	}

	browserLogIn(t, ctx, base, row+" .conflict")
	for _, view := range []struct {
		name  string
		phone bool
	}{{"desktop", false}, {"phone", true}} {
		if view.phone {
			do("a phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
		}
		do("dashboard", chromedp.Navigate(base+"/admin/dashboard?site=dent"), chromedp.WaitVisible(chromedp.CSS(card)))
		if got := text(card); !strings.Contains(got, "Filled in too fast: 2 leads, 1 turned out a real customer (1 shown by the CRM)") ||
			!strings.Contains(got, "Only asks for a price: 1 lead, it turned out a real customer") {
			t.Errorf("%s: the card: %q", view.name, got)
		}
		fits(view.name+" dashboard", card)
		browsertest.ScreenshotOf(t, ctx, "learning-card-"+view.name, card)

		do("inbox", chromedp.Navigate(base+"/admin/"), chromedp.WaitVisible(chromedp.CSS(row+" .conflict")))
		fits(view.name+" inbox", row)
		browsertest.ScreenshotOf(t, ctx, "conflict-row-"+view.name, row)

		do("the lead", chromedp.Navigate(base+"/admin/leads/"+string(conflict.ID)), chromedp.WaitVisible(chromedp.CSS("#h-conflict")))
		fits(view.name+" lead", "section.conflict")
		browsertest.ScreenshotOf(t, ctx, "conflict-lead-"+view.name, "section.conflict")
		if view.phone {
			browsertest.Screenshot(t, ctx, "conflict-lead-phone-page")
		}

		do("the fast fill", chromedp.Navigate(base+"/admin/leads/"+string(fast.ID)), chromedp.WaitVisible(chromedp.CSS("#h-story")))
		if got := text("body"); !strings.Contains(got, "measured by our tracker in the visitor's browser") {
			t.Errorf("%s: the fast fill's page does not say who measured it", view.name)
		}
	}
}
