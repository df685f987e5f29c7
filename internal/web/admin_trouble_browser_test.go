package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/cleanads/cleanads/internal/browsertest"
	"github.com/cleanads/cleanads/internal/capi/graphtest"
)

// TestTroubleBannerInBrowser: with Meta unreachable, the dashboard and the
// deliveries page show one banner naming Meta and the cause in the page's
// language (beside the banner of the fixture's refused event), in real Chromium at a desktop's and a phone's width, and
// neither page is wider than the screen.
func TestTroubleBannerInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	causes := map[string]string{
		"en": "Meta could not be reached: its servers did not answer.",
		"tr": "Meta: ulaşılamadı, sunucuları yanıt vermedi.",
	}
	e, _ := troubledEnv(t, func(g *graphtest.Server) { g.Close() }, causes["en"])
	for _, lang := range []string{"en", "tr"} {
		t.Run(lang, func(t *testing.T) {
			ctx := browsertest.New(t, chromedp.Flag("accept-lang", lang), chromedp.Flag("lang", lang))
			do, _ := browserSteps(t, ctx)
			browserLogIn(t, ctx, e.srv.URL, "ul.leads")
			for _, width := range []int64{1280, 390} {
				do("the screen", chromedp.EmulateViewport(width, 900, chromedp.EmulateMobile))
				for _, path := range []string{"/admin/dashboard?site=dent", "/admin/deliveries"} {
					do(path, chromedp.Navigate(e.srv.URL+path), chromedp.WaitVisible(chromedp.CSS(".alert.trouble")))
					// One banner per platform and cause: the fixture's refused
					// event has its own; the outage has one.
					banners, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('.alert.trouble'), function (b) { return b.innerText; })`))
					if err != nil {
						t.Fatal(err)
					}
					n := 0
					for _, b := range banners {
						n += strings.Count(b, causes[lang])
					}
					if n != 1 {
						t.Errorf("%d px %s: the outage is said %d times in the banners, want once: %q", width, path, n, banners)
					}
					size, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[document.documentElement.scrollWidth, window.innerWidth]`))
					if err != nil {
						t.Fatal(err)
					}
					// Phone-mode Chromium widens innerWidth to an over-wide
					// page: both must stay at the screen's width.
					if size[0] > float64(width) || size[1] != float64(width) {
						t.Errorf("%d px %s: the page is %v px wide (window %v px)", width, path, size[0], size[1])
					}
					browsertest.Screenshot(t, ctx, "trouble-"+lang+"-"+strings.Trim(strings.NewReplacer("/admin/", "", "?site=dent", "").Replace(path), "/")+"-"+map[int64]string{1280: "desktop", 390: "phone"}[width])
				}
			}
		})
	}
}
