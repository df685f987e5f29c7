package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cleanads/cleanads/internal/browsertest"
	"github.com/cleanads/cleanads/internal/model"
)

// TestPlatformSettingsInBrowser fills an ad platform's section of a site's
// page in real Chromium, on a desktop and a phone, in English and Turkish:
// a required field left empty is marked next to it in the owner's language
// with nothing saved; filled in, the save keeps the settings, shows the
// secret as set (never its value), and the test button shows the
// platform's answer; nothing is wider than the screen.
func TestPlatformSettingsInBrowser(t *testing.T) {
	ctx := browsertest.New(t)
	fake := newFakeAds(t, "fakeads", "FakeAds")
	e := newAdminEnv(t, withPlatforms(fake))
	base := e.srv.URL
	bg := context.Background()
	do, text := browserSteps(t, ctx)
	user, err := e.db.UserByEmail(bg, adminEmail)
	if err != nil {
		t.Fatal(err)
	}
	browserLogIn(t, ctx, base, "#main")
	save := chromedp.CSS(`form[action^="/admin/sites/dent/platforms/fakeads#"] button[type=submit]`)
	words := map[string]map[string]string{
		"en": {"required": "Needed to send to FakeAds.", "set": "Set. Leave this empty to keep it", "test": "FakeAds received the test event."},
		"tr": {"required": "FakeAds platformuna göndermek için gerekli.", "set": "Girili. Korumak için boş bırakın", "test": "FakeAds test olayını aldı."},
	}
	for _, view := range []struct {
		name string
		w, h int64
	}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
		for _, lang := range []string{"en", "tr"} {
			name := view.name + "-" + lang
			w := words[lang]
			if err := e.db.UserSetLang(bg, user.ID, lang, time.Now()); err != nil {
				t.Fatal(err)
			}
			// Each run starts with the platform off.
			site, err := e.db.SiteByID(bg, "dent")
			if err != nil {
				t.Fatal(err)
			}
			delete(site.Settings.Platforms, "fakeads")
			site.Secrets = map[string]string{"fakeads.access_token": ""}
			if err := e.db.SiteUpsert(bg, site, time.Now()); err != nil {
				t.Fatal(err)
			}
			opts := []chromedp.EmulateViewportOption{}
			if view.w < 500 {
				opts = append(opts, chromedp.EmulateMobile)
			}
			do(name+": screen", chromedp.EmulateViewport(view.w, view.h, opts...))
			do(name+": the page", chromedp.Navigate(base+"/admin/sites/dent"), chromedp.WaitVisible(chromedp.CSS("#platform-fakeads")))

			// The pixel code forgotten: marked next to it, nothing saved,
			// the typed token not sent back.
			do(name+": a field left out",
				chromedp.SendKeys(chromedp.CSS("#pf-fakeads-access_token"), fakeToken),
				chromedp.SetValue(chromedp.CSS("#pf-fakeads-mode"), "test"),
				chromedp.Click(save),
				chromedp.WaitVisible(chromedp.CSS("#pf-fakeads-pixel_code-err")))
			if got := text("#pf-fakeads-pixel_code-err"); got != w["required"] {
				t.Errorf("%s: the field's error %q, want %q", name, got, w["required"])
			}
			if s, _ := e.db.SiteByID(bg, "dent"); len(s.Secrets) != 0 || s.Settings.Platforms["fakeads"] != nil {
				t.Errorf("%s: a refused form saved %v %s", name, s.Secrets, s.Settings.Platforms["fakeads"])
			}
			if v := value(t, ctx, "#pf-fakeads-access_token"); v != "" {
				t.Errorf("%s: the token came back into the page: %q", name, v)
			}
			if got := value(t, ctx, "#pf-fakeads-mode"); got != "test" {
				t.Errorf("%s: the choice did not come back: %q", name, got)
			}
			if over := pageOverflow(t, ctx); over > 0 {
				t.Errorf("%s: the page with an error reaches %.0f px past the screen's edge", name, over)
			}
			browsertest.Screenshot(t, ctx, "platform-"+name+"-error")

			do(name+": filled in",
				chromedp.SendKeys(chromedp.CSS("#pf-fakeads-pixel_code"), "123456"),
				chromedp.SendKeys(chromedp.CSS("#pf-fakeads-access_token"), fakeToken),
				chromedp.SetValue(chromedp.CSS("#pf-fakeads-stages"), "won = CompletePayment"),
				chromedp.Click(save),
				chromedp.WaitVisible(chromedp.CSS(".alert.ok")),
				chromedp.WaitVisible(chromedp.CSS("#platform-fakeads")))
			s, _ := e.db.SiteByID(bg, "dent")
			if d := fake.doc(s); s.Secrets["fakeads.access_token"] != fakeToken || d.PixelCode != "123456" || d.Mode != "test" ||
				d.Stages["won"] != "CompletePayment" {
				t.Errorf("%s: saved %v %s", name, s.Secrets, s.Settings.Platforms["fakeads"])
			}
			if got := text("#pf-fakeads-access_token-help"); !strings.HasPrefix(got, w["set"]) {
				t.Errorf("%s: the secret's state %q", name, got)
			}
			html, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(html, fakeToken) || strings.Contains(html, "secret-token") {
				t.Errorf("%s: the page shows the secret", name)
			}
			browsertest.Screenshot(t, ctx, "platform-"+name+"-saved")

			do(name+": send a test event",
				chromedp.Click(chromedp.CSS(`form[action^="/admin/sites/dent/platforms/fakeads/test"] button`)),
				chromedp.WaitVisible(chromedp.CSS("#platform-fakeads .test-result")))
			if got := text("#platform-fakeads .test-result"); !strings.Contains(got, w["test"]) || !strings.Contains(got, `"pixel_code": "123456"`) {
				t.Errorf("%s: the test's answer %q", name, got)
			}
			if over := pageOverflow(t, ctx); over > 0 {
				t.Errorf("%s: the page with the test's answer reaches %.0f px past the screen's edge", name, over)
			}
			browsertest.Screenshot(t, ctx, "platform-"+name+"-test")
		}
	}
	if got := fake.seen(); len(got) != 4 {
		t.Errorf("the stand-in took %d test events, want 4", len(got))
	}
	var s *model.Site
	if s, err = e.db.SiteByID(bg, "dent"); err != nil || s.Secrets["fakeads.access_token"] != fakeToken {
		t.Errorf("at the end: %v %v", s, err)
	}
}

// value is an input's current value.
func value(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("value of %s: %v", sel, err)
	}
	return v
}

// pageOverflow is how far the page reaches past the screen's right edge.
func pageOverflow(t *testing.T, ctx context.Context) float64 {
	t.Helper()
	over, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`(function () {
		var w = document.documentElement.clientWidth, worst = 0;
		document.querySelectorAll("body, body *").forEach(function (e) {
			var r = e.getBoundingClientRect();
			if (r.width > 0 && r.right > w + 1) { worst = Math.max(worst, r.right - w); }
		});
		return Math.max(worst, document.documentElement.scrollWidth - w);
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	return over
}
