package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/cleanads/cleanads/internal/browsertest"
)

// TestPeopleInBrowser adds a member limited to one site on the people page
// in real Chromium (no mail server: the link is shown once), opens the link,
// sets the password and lands in the member's inbox; then the used link
// says so. At 1280 and 390 px, in English and Turkish, the people page, the
// set-password page and the used link's page are no wider than the screen.
// Screenshots go to testoutput/ (people-<lang>-<width>-*.png).
func TestPeopleInBrowser(t *testing.T) {
	for _, lang := range []string{"en", "tr"} {
		t.Run(lang, func(t *testing.T) {
			ctx := browsertest.New(t, chromedp.Flag("accept-lang", lang), chromedp.Flag("lang", lang))
			e := newAdminEnv(t)
			base := e.srv.URL
			do, text := browserSteps(t, ctx)
			for _, w := range []int{1280, 390} {
				name := fmt.Sprintf("people-%s-%d", lang, w)
				opts := []chromedp.EmulateViewportOption{}
				if w < 500 {
					opts = append(opts, chromedp.EmulateMobile)
				}
				do(name+": screen", chromedp.EmulateViewport(int64(w), 844, opts...))
				fits := func(page string) {
					t.Helper()
					browsertest.Screenshot(t, ctx, name+"-"+page)
					res, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](`(function () {
						var vw = `+fmt.Sprint(w)+`, wide = [];
						document.querySelectorAll('body *').forEach(function (el) {
							var r = el.getBoundingClientRect();
							if (r.width > 0 && r.right > vw + 0.5) {
								wide.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + ' ' + Math.round(r.right) + 'px');
							}
						});
						return [document.documentElement.scrollWidth, window.innerWidth, document.documentElement.lang, wide.slice(0, 8).join('; ')];
					})()`))
					if err != nil {
						t.Fatalf("%s %s: %v", name, page, err)
					}
					// A phone zooms out to show an over-wide page, widening
					// innerWidth with it: both must stay at the screen's width.
					sw, iw := res[0].(float64), res[1].(float64)
					if sw > float64(w) || iw != float64(w) || res[3] != "" {
						t.Errorf("%s %s: %v px wide (window %v px) on a %d px screen: %v", name, page, sw, iw, w, res[3])
					}
					if res[2] != lang {
						t.Errorf("%s %s: page in %v, want %s", name, page, res[2], lang)
					}
				}
				browserLogIn(t, ctx, base, "ul.leads")
				email := fmt.Sprintf("mutfak.tasarim.ekibi.koordinatoru.%d@ankara-kitchens-and-bathrooms.example", w)
				do(name+": people", chromedp.Navigate(base+"/admin/people"), chromedp.WaitVisible(chromedp.CSS("#h-add")))
				fits("list")
				do(name+": add",
					chromedp.SendKeys(chromedp.CSS(`form[action="/admin/people"] #email`), email),
					chromedp.Click(chromedp.CSS(`form[action="/admin/people"] input[name=role][value=member]`)),
					chromedp.Click(chromedp.CSS(`form[action="/admin/people"] input[name=sites][value=some]`)),
					chromedp.Click(chromedp.CSS(`form[action="/admin/people"] input[name=site][value=kitchen]`)),
					chromedp.Click(chromedp.CSS(`form[action="/admin/people"] button[type=submit]`)),
					chromedp.WaitVisible(chromedp.CSS("#password-link")),
				)
				fits("link")
				do(name+": open every change form", chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('details').forEach(function (d) { d.open = true })`))
				fits("list-open")
				if got := text(".people"); !strings.Contains(got, email) || !strings.Contains(got, "Ankara Kitchens") {
					t.Errorf("%s: the list: %q", name, got)
				}
				link := strings.TrimSpace(text("#password-link"))
				do(name+": log out", chromedp.Click(chromedp.CSS(`form[action="/admin/logout"] button`)), chromedp.WaitVisible(chromedp.CSS(`form[action="/admin/login"]`)))
				do(name+": open the link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#password2")))
				fits("set")
				do(name+": set the password",
					chromedp.SendKeys(chromedp.CSS("#password"), "kitchen password"),
					chromedp.SendKeys(chromedp.CSS("#password2"), "kitchen password"),
					chromedp.Click(chromedp.CSS("button.primary")),
					chromedp.WaitVisible(chromedp.CSS(`form[action="/admin/logout"]`)),
				)
				if got := text("main"); strings.Contains(got, "Ayşe") || strings.Contains(got, "Istanbul Dental") {
					t.Errorf("%s: the member sees dent: %q", name, got)
				}
				fits("member-inbox")
				do(name+": log out the member", chromedp.Click(chromedp.CSS(`form[action="/admin/logout"] button`)), chromedp.WaitVisible(chromedp.CSS(`form[action="/admin/login"]`)))
				do(name+": the used link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS(".alert.danger")))
				fits("used")
				want := map[string]string{"en": "used already", "tr": "zaten kullanıldı"}[lang]
				if got := text(".alert.danger"); !strings.Contains(got, want) {
					t.Errorf("%s: the used link says %q", name, got)
				}
			}
		})
	}
}
