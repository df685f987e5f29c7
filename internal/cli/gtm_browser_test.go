package cli_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/cleanads/cleanads/internal/browsertest"
)

// TestGTMCustomHTMLTag: the Custom HTML tag of packaging/gtm, put on a
// page as Tag Manager puts it, installs t.js from the server with the
// site, in real Chromium: the visit is stored (the answer carries the
// PageView's event_id, which only a stored visit has).
func TestGTMCustomHTMLTag(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	ctx := browsertest.New(t)
	tag, err := os.ReadFile(filepath.Join("..", "..", "packaging", "gtm", "custom-html.html"))
	if err != nil {
		t.Fatal(err)
	}
	var serverURL string
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		html := strings.NewReplacer("https://t.example.com", serverURL, "YOUR_SITE_ID", "gtm").Replace(string(tag))
		if r.URL.Path == "/template" {
			// What template.tpl's injectScript does: a script element
			// with the site in its address and no data-site.
			html = fmt.Sprintf(`<script>var s = document.createElement('script'); s.src = %q; s.async = true; document.head.appendChild(s);</script>`,
				serverURL+"/t.js?site=gtm")
		}
		fmt.Fprintf(w, "<!doctype html><html><head><meta charset=\"utf-8\"><title>GTM</title></head><body><p>A page of a site whose tags live in Tag Manager.</p>%s</body></html>", html)
	}))
	t.Cleanup(page.Close)
	dir := t.TempDir()
	cfg := fmt.Sprintf("listen: \"127.0.0.1:0\"\ndatabase: \"sqlite:%s\"\nsites:\n  - id: gtm\n    origins: [%q]\n    country: TR\n    meta:\n      mode: dry_run\n",
		filepath.Join(dir, "cleanads.db"), page.URL)
	base, _, stderr, _ := startServe(t, dir, cfg, nil)
	serverURL = base
	run := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
	}
	// The Custom HTML tag at /, the template's way of loading t.js at
	// /template: each must store the visit.
	for _, path := range []string{"/", "/template"} {
		run(chromedp.Navigate(page.URL+path), chromedp.Poll[chromedp.Void](`window.cleanads && window.cleanads.ready`))
		visit, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](`cleanads.ready`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		if id, _ := visit["event_id"].(string); id == "" {
			t.Errorf("%s: the visit was not stored: %v\n%s", path, visit, stderr)
		}
	}
}
