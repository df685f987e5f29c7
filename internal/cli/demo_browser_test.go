package cli_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cleanads/cleanads/internal/browsertest"
)

// TestDemoInABrowser: a newcomer's first lead, in real Chromium. The demo
// website's form, which loads t.js through the one-line snippet and has no
// data-cleanads, is filled in and sent as a person would; the site's own
// back end gets its fields and nothing of ours; the lead is judged in the
// inbox the printed password opens.
func TestDemoInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	ctx := browsertest.New(t)
	server, page, out, _ := startDemo(t, t.TempDir())
	m := regexp.MustCompile(`(?m)^Password: (\S+)$`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no password printed:\n%s", out)
	}
	run := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatal(err)
		}
	}
	run(chromedp.Navigate(page+"/"), chromedp.Poll[chromedp.Void](`window.cleanads && window.cleanads.ready`),
		chromedp.Evaluate[chromedp.Void](`cleanads.ready`, chromedp.EvalAwaitPromise))
	version, err := chromedp.Run(ctx, chromedp.Evaluate[int](`cleanads.v`))
	if err != nil {
		t.Fatal(err)
	}
	if version < 2 {
		// t.v1.js takes only forms marked data-cleanads; finding a form by
		// its contact fields is t.v2.js's.
		t.Skipf("the server's t.js is v%d, which does not find a form without data-cleanads", version)
	}
	run(chromedp.SendKeys(chromedp.CSS("#name"), "Ayşe Yılmaz"),
		chromedp.SendKeys(chromedp.CSS("#phone"), "0532 412 87 19"),
		chromedp.SendKeys(chromedp.CSS("#email"), "ayse.yilmaz@gmail.com"),
		chromedp.SendKeys(chromedp.CSS("#message"), "Merhaba, implant tedavisi için randevu almak istiyorum. Hafta içi öğleden sonra uygundur."),
		// A person takes a few seconds; the server's form token wants two.
		chromedp.Sleep(2100*time.Millisecond),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS("#fields")))
	fields, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#fields")))
	if err != nil {
		t.Fatal(err)
	}
	if fields != "email, message, name, phone" {
		t.Errorf("the site's own back end got the fields %q: ours among them?", fields)
	}
	run(chromedp.Navigate(server+"/admin/"), chromedp.WaitVisible(chromedp.CSS("#password")),
		chromedp.SendKeys(chromedp.CSS("#email"), "demo@cleanads.example"),
		chromedp.SendKeys(chromedp.CSS("#password"), m[1]),
		chromedp.Submit(chromedp.CSS("#password")),
		chromedp.WaitVisible(chromedp.CSS("ul.leads")))
	inbox, err := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("ul.leads")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(inbox, "Ayşe Yılmaz") || !regexp.MustCompile(`badge (clean|review)">`).MatchString(inbox) {
		t.Errorf("the lead is not in the inbox, judged clean or review:\n%s", inbox)
	}
	browsertest.Screenshot(t, ctx, "demo-inbox")
}
