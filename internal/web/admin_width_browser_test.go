package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/cleanads/cleanads/internal/browsertest"
)

// TestAdminFitsAPhone walks every admin page in real Chromium at a phone's
// 390 px, in English and in Turkish, with a lead whose page address and
// strings are long and unbroken and a wall of failed deliveries, and wants
// no page wider than the screen. Screenshots go to testoutput/
// (width-<lang>-<page>.png); a failure names the widest elements, and the
// tiles, cards, tabs and buttons whose text spills over them.
func TestAdminFitsAPhone(t *testing.T) {
	for _, lang := range []string{"en", "tr"} {
		t.Run(lang, func(t *testing.T) {
			ctx := browsertest.New(t, chromedp.Flag("accept-lang", lang), chromedp.Flag("lang", lang))
			e := newAdminEnv(t)
			l := addStoryLead(t, e)
			base := e.srv.URL
			do, _ := browserSteps(t, ctx)
			do("a phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
			fits := func(name string) {
				t.Helper()
				browsertest.Screenshot(t, ctx, "width-"+lang+"-"+name)
				res, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](`(function () {
					var vw = 390, wide = [];
					document.querySelectorAll('body *').forEach(function (el) {
						var r = el.getBoundingClientRect();
						if (r.right > vw + 0.5 && r.width > 0) {
							wide.push(el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).replace(/ /g, '.') : '') +
								' ' + Math.round(r.right) + 'px');
						}
					});
					// A label that does not fit its tile spills over it
					// without widening the page: a tile's content must fit.
					document.querySelectorAll('.stat, .card, .alert, .tabs a, .health li, button').forEach(function (el) {
						if (el.scrollWidth > el.clientWidth + 1) {
							wide.push('inside ' + el.tagName.toLowerCase() + '.' + String(el.className).replace(/ /g, '.') +
								' ' + el.scrollWidth + '>' + el.clientWidth + 'px: ' + el.textContent.trim().slice(0, 40));
						}
					});
					return [document.documentElement.scrollWidth, window.innerWidth, document.documentElement.lang, wide.slice(0, 8).join('; '), wide.length];
				})()`))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				// A phone zooms out to show a page wider than its screen, so
				// window.innerWidth grows with the page: both must stay at
				// the screen's 390 px.
				sw, vw := res[0].(float64), res[1].(float64)
				if res[2] != lang {
					t.Errorf("%s: page in %v, want %s", name, res[2], lang)
				}
				if sw > 390 || vw > 390 || res[4].(float64) > 0 {
					t.Errorf("%s: %v px wide (window %v px) on a 390 px screen; wider than the screen: %v", name, sw, vw, res[3])
				}
			}
			do("the login page", chromedp.Navigate(base+"/admin/login"), chromedp.WaitVisible(chromedp.CSS("#email")))
			fits("login")
			browserLogIn(t, ctx, base, "ul.leads")
			for _, p := range []struct{ name, path, sel string }{
				{"inbox", "/admin/", "ul.leads"},
				{"lead-long", "/admin/leads/" + string(l.ID), "#h-story"},
				{"lead-clean", "/admin/leads/" + string(e.leads["clean"].ID), "#h-story"},
				{"lead-junk", "/admin/leads/" + string(e.leads["junk"].ID), "#h-story"},
				{"dashboard", "/admin/dashboard?site=dent", "#h-learning"},
				{"deliveries", "/admin/deliveries", "h1"},
				{"deliveries-retry", "/admin/deliveries?state=retry", "h1"},
				{"sites", "/admin/sites", "h1"},
				{"site", "/admin/sites/dent", "h1"},
				{"site-pinned", "/admin/sites/kitchen", "h1"},
				{"not-found", "/admin/nothing-here", "h1"},
			} {
				do(p.name, chromedp.Navigate(base+p.path), chromedp.WaitVisible(chromedp.CSS(p.sel)))
				// Open every fold: technical details must fit too.
				do("open "+p.name, chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('details').forEach(function (d) { d.open = true })`))
				fits(p.name)
			}
			// The page is the language asked for, so the Turkish labels were
			// the ones measured.
			if lang == "tr" {
				got, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("h1")))
				if err != nil || strings.TrimSpace(got) == "Not found" {
					t.Errorf("Turkish page: %q %v", got, err)
				}
			}
		})
	}
}
