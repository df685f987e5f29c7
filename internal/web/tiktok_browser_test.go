package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/browsertest"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
	"github.com/cleanads/cleanads/internal/tiktok"
	"github.com/cleanads/cleanads/internal/web"
)

// tiktokPage is a site's page with TikTok's pixel (a stub that keeps its
// calls across navigations), the _ttp cookie that pixel sets on the site's
// domain, a plain contact form and only the one-line snippet.
const tiktokPage = `<!doctype html><html><head><meta charset="utf-8"><title>Clinic</title>
<script>
document.cookie = '_ttp=2ZttpBrowserId0001; domain=.example.test; path=/';
window.ttq = { track: function () {
  var c = JSON.parse(sessionStorage.getItem('ttq') || '[]');
  c.push([].slice.call(arguments));
  sessionStorage.setItem('ttq', JSON.stringify(c));
} };
</script>
<script src="%s/t.js" data-site="dent" async></script>
</head><body>
<form action="/thanks" method="post">
<input id="email" name="email" type="email"><input id="phone" name="phone" type="tel">
<textarea id="msg" name="message"></textarea><button id="send">Send</button>
</form></body></html>`

// TestBrowserTikTokPixelPairs: on a site that sends to TikTok, a lead sent
// from a real page fires TikTok's pixel with the lead's event_id, the
// TikTok event queued for the server carries the same id (TikTok counts
// the two once) and the _ttp cookie the page had.
func TestBrowserTikTokPixelPairs(t *testing.T) {
	db := storetest.New(t)
	ctx := context.Background()
	svc := app.New(app.Options{Store: db})
	tracker := httptest.NewServer(web.New(web.Options{App: svc, Store: db}).Handler())
	defer tracker.Close()
	trackerURL := "http://t.example.test:" + portOf(tracker.URL)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/thanks" {
			fmt.Fprint(w, `<!doctype html><p id="thanks">Thank you</p>`)
			return
		}
		fmt.Fprintf(w, tiktokPage, trackerURL)
	}))
	defer page.Close()
	origin := "http://www.example.test:" + portOf(page.URL)
	settings, _ := json.Marshal(tiktok.Settings{PixelCode: "CTIKTOKPIXEL0000001", CRMEventSetID: "7300000000000000001"})
	testkit.AddSite(t, db, testkit.Site(func(s *model.Site) {
		s.Settings.Origins, s.Settings.CookieDomain = []string{origin}, ".example.test"
		s.Settings.Platforms = map[string]json.RawMessage{tiktok.Name: settings}
		s.Secrets = map[string]string{platform.SecretName(tiktok.Name, tiktok.SecretAccessToken): "tt-token-0123456789"}
	}), time.Now())

	guard := browsertest.New(t,
		chromedp.Flag("disable-features", "HttpsUpgrades,HttpsFirstBalancedModeAutoEnable"),
		chromedp.Flag("host-resolver-rules", "MAP *.example.test 127.0.0.1"),
	)
	if err := chromedp.Do(guard,
		chromedp.Navigate(origin+"/implant"),
		chromedp.Poll[chromedp.Void](`window.cleanads && window.cleanads.ready`),
		chromedp.Evaluate[chromedp.Void](`cleanads.ready`, chromedp.EvalAwaitPromise),
		chromedp.SendKeys(chromedp.CSS("#email"), "ayse.yilmaz@gmail.com"),
		chromedp.SendKeys(chromedp.CSS("#phone"), "0532 412 87 19"),
		chromedp.SendKeys(chromedp.CSS("#msg"), implantMessage),
	); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2200 * time.Millisecond) // a person's fill time, over the 2 s a bot takes
	if err := chromedp.Do(guard, chromedp.Click(chromedp.CSS("#send")), chromedp.WaitVisible(chromedp.CSS("#thanks"))); err != nil {
		t.Fatal(err)
	}

	var lead *model.Lead
	for deadline := time.Now().Add(20 * time.Second); lead == nil; time.Sleep(50 * time.Millisecond) {
		if ls, err := db.LeadList(ctx, store.LeadFilter{Site: "dent", Limit: 5}); err == nil && len(ls) == 1 {
			lead = ls[0]
		} else if time.Now().After(deadline) {
			t.Fatalf("no lead arrived: %v %v", ls, err)
		}
	}
	var calls [][]json.RawMessage
	raw, err := chromedp.Run(guard, chromedp.Evaluate[string](`sessionStorage.getItem('ttq') || '[]'`))
	if err != nil || json.Unmarshal([]byte(raw), &calls) != nil {
		t.Fatalf("ttq calls %q %v", raw, err)
	}
	var pixelID string
	for _, c := range calls {
		var name string
		var opts struct {
			EventID string `json:"event_id"`
		}
		if len(c) == 3 && json.Unmarshal(c[0], &name) == nil && name == tiktok.DefaultLeadEvent && json.Unmarshal(c[2], &opts) == nil {
			pixelID = opts.EventID
		}
	}
	if pixelID == "" || pixelID != lead.EventID {
		t.Fatalf("TikTok's pixel got %s, the lead's event_id is %s", raw, lead.EventID)
	}
	ds, err := db.DeliveriesByLead(ctx, lead.ID)
	if err != nil {
		t.Fatal(err)
	}
	var server *model.Delivery
	for _, d := range ds {
		if d.Destination == tiktok.Name && d.Kind == model.KindLead {
			server = d
		}
	}
	if server == nil || server.EventID != lead.EventID || !strings.Contains(string(server.Payload), "2ZttpBrowserId0001") {
		t.Fatalf("the TikTok row: %+v (lead %s)", server, lead.EventID)
	}
}
