package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/browsertest"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/web"
)

// The test site: its pages at http://www.example.test:PORT, the tracker at
// http://t.example.test:PORT2 (different origins, the same site, as in
// production); both names resolve to 127.0.0.1 inside the browser.
var testPage = template.Must(template.New("page").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Test clinic</title>
<script>
// The page's clock is the test's: fill times are exact, not raced.
window.__t = 1000000;
Date.now = function () { return window.__t; };
// A stub pixel that keeps its calls across the form's navigation.
window.fbq = function () {
  var c = JSON.parse(sessionStorage.getItem({{.Key}}) || '[]');
  c.push([].slice.call(arguments));
  sessionStorage.setItem({{.Key}}, JSON.stringify(c));
};
</script>
<script src="{{.Tracker}}/t.js" data-site="{{.Site}}" async></script>
</head><body>
<form data-cleanads action="/thanks" method="post">
  <input id="name" name="your-name" autocomplete="name">
  <input id="email" type="email" name="email">
  <input id="phone" type="tel" name="phone">
  <textarea id="msg" name="message"></textarea>
  <input type="hidden" name="treatment" value="implant">
  <button id="send" type="submit">Send</button>
</form>
</body></html>`))

var thanksPage = `<!doctype html><meta charset="utf-8"><title>Thanks</title><p id="thanks">Thank you</p>`

// siteServer serves the advertiser's pages and records the form posts that
// reach its own /thanks (the form going on to wherever it was going).
type siteServer struct {
	srv     *httptest.Server
	tracker string
	mu      sync.Mutex
	posts   []url.Values
}

func (s *siteServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	switch r.URL.Path {
	case "/landing":
		testPage.Execute(w, map[string]string{"Tracker": s.tracker, "Site": "dent", "Key": "fbq"})
	case "/strict":
		testPage.Execute(w, map[string]string{"Tracker": s.tracker, "Site": "strict", "Key": "fbq_strict"})
	case "/thanks":
		r.ParseForm()
		s.mu.Lock()
		s.posts = append(s.posts, r.PostForm)
		s.mu.Unlock()
		fmt.Fprint(w, thanksPage)
	default:
		http.NotFound(w, r)
	}
}

func portOf(u string) string {
	_, p, _ := net.SplitHostPort(strings.TrimPrefix(u, "http://"))
	return p
}

// fbqCall is one call the stub pixel received.
type fbqCall []json.RawMessage

func fbqCalls(ctx context.Context, t *testing.T, key string) []fbqCall {
	t.Helper()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`sessionStorage.getItem('`+key+`') || '[]'`))
	if err != nil {
		t.Fatal(err)
	}
	var calls []fbqCall
	if err := json.Unmarshal([]byte(raw), &calls); err != nil {
		t.Fatal(err)
	}
	return calls
}

// eventIDOf returns the eventID the pixel got for event, or "".
func eventIDOf(calls []fbqCall, event string) string {
	for _, c := range calls {
		var verb, name string
		var opts struct {
			EventID string `json:"eventID"`
		}
		if len(c) == 4 && json.Unmarshal(c[0], &verb) == nil && json.Unmarshal(c[1], &name) == nil &&
			json.Unmarshal(c[3], &opts) == nil && verb == "track" && name == event {
			return opts.EventID
		}
	}
	return ""
}

func cookiesOf(ctx context.Context, t *testing.T, urls ...string) map[string]*network.Cookie {
	t.Helper()
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: urls})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*network.Cookie{}
	for _, c := range res.Cookies {
		m[c.Name] = c
	}
	return m
}

// waitLead waits for the lead with the event_id to be stored (the browser
// posts it with keepalive while it navigates on).
func waitLead(t *testing.T, db *store.DB, site model.SiteID, eventID string) *model.Lead {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		l, err := db.LeadByEventID(context.Background(), site, eventID)
		if err == nil {
			return l
		}
		if !errors.Is(err, model.ErrNotFound) || time.Now().After(deadline) {
			t.Fatalf("lead %s never arrived: %v", eventID, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func hasReason(l *model.Lead, code string) bool {
	for _, r := range l.Reasons {
		if r.Code == code {
			return true
		}
	}
	return false
}

func fill(ms *int64) string {
	if ms == nil {
		return "none"
	}
	return fmt.Sprint(*ms)
}

func TestBrowser(t *testing.T) {
	db := storetest.New(t)
	ctx := context.Background()

	svc := app.New(app.Options{Store: db})
	tracker := httptest.NewServer(web.New(web.Options{App: svc, Store: db}).Handler())
	defer tracker.Close()
	site := &siteServer{tracker: "http://t.example.test:" + portOf(tracker.URL)}
	site.srv = httptest.NewServer(site)
	defer site.srv.Close()
	pageOrigin := "http://www.example.test:" + portOf(site.srv.URL)
	trackerURL := site.tracker + "/"

	for _, s := range []*model.Site{
		{ID: "dent", Name: "Dent", Settings: model.SiteSettings{Origins: []string{pageOrigin}, Country: "TR",
			CookieDomain: ".example.test", Meta: model.MetaSettings{PixelID: "123456789012345", Mode: model.ModeDryRun}}},
		{ID: "strict", Name: "Strict", Settings: model.SiteSettings{Origins: []string{pageOrigin}, Country: "TR",
			CookieDomain: ".example.test", Consent: model.ConsentRequired,
			Meta: model.MetaSettings{PixelID: "123456789012345", Mode: model.ModeDryRun}}},
	} {
		if err := db.SiteUpsert(ctx, s, time.Now()); err != nil {
			t.Fatal(err)
		}
	}

	guard := browsertest.New(t,
		chromedp.Flag("disable-features", "HttpsUpgrades,HttpsFirstBalancedModeAutoEnable"),
		chromedp.Flag("host-resolver-rules", "MAP *.example.test 127.0.0.1"),
	)
	run := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(guard, steps...); err != nil {
			t.Fatal(err)
		}
	}
	ready := func() map[string]any {
		t.Helper()
		run(chromedp.Poll[chromedp.Void](`window.cleanads && window.cleanads.ready`))
		v, err := chromedp.Run(guard, chromedp.Evaluate[map[string]any](`cleanads.ready`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	t.Run("click identity and the fill time", func(t *testing.T) {
		run(chromedp.Navigate(pageOrigin + "/landing?fbclid=IwAR_browser-1&utm_source=facebook"))
		visit := ready()
		cookies := cookiesOf(guard, t, trackerURL, pageOrigin+"/")
		fbc, fbp, vid := cookies["_fbc"], cookies["_fbp"], cookies["cleanads_vid"]
		if fbc == nil || fbp == nil || vid == nil {
			t.Fatalf("cookies after the visit: %v", cookies)
		}
		if !regexp.MustCompile(`^fb\.1\.\d{13}\.IwAR_browser-1$`).MatchString(fbc.Value) || !fbpRE.MatchString(fbp.Value) {
			t.Errorf("_fbc %q, _fbp %q", fbc.Value, fbp.Value)
		}
		trackerPort := portOf(tracker.URL)
		for _, c := range []*network.Cookie{fbc, fbp, vid} {
			// Set by the server's answer (the tracker's port), not by a
			// script on the page; for the whole site; for 390 days.
			if fmt.Sprint(c.SourcePort) != trackerPort || c.Domain != ".example.test" || c.SameSite != network.CookieSameSiteLax ||
				c.Session || time.Unix(int64(c.Expires), 0).Before(time.Now().Add(389*24*time.Hour)) {
				t.Errorf("cookie %s: source port %d, domain %q, samesite %q, expires %v", c.Name, c.SourcePort, c.Domain,
					c.SameSite, time.Unix(int64(c.Expires), 0))
			}
		}
		if !vid.HTTPOnly {
			t.Errorf("the visitor cookie is readable by scripts")
		}
		seen, _ := chromedp.Run(guard, chromedp.Evaluate[string](`document.cookie`))
		if !strings.Contains(seen, "_fbc="+fbc.Value) || !strings.Contains(seen, "_fbp="+fbp.Value) {
			t.Errorf("the page's pixel cannot read the cookies: %q", seen)
		}
		if pv := eventIDOf(fbqCalls(guard, t, "fbq"), "PageView"); pv == "" || pv != visit["event_id"] {
			t.Errorf("pixel PageView eventID %q, visit %v", pv, visit["event_id"])
		}
		if d, err := db.VisitPageView(ctx, "dent", fmt.Sprint(visit["event_id"])); err != nil || d.EventName != "PageView" {
			t.Errorf("server PageView: %v %v", d, err)
		}

		// Typed in 4.2 s of the page's clock.
		run(chromedp.SendKeys(chromedp.CSS("#name"), "Ayşe Yılmaz"),
			chromedp.Evaluate[chromedp.Void](`window.__t += 4200`),
			chromedp.SendKeys(chromedp.CSS("#email"), "ayse@example.com"),
			chromedp.SendKeys(chromedp.CSS("#phone"), "0532 412 87 19"),
			chromedp.SendKeys(chromedp.CSS("#msg"), "Implant fiyatı nedir?"),
			chromedp.Click(chromedp.CSS("#send")),
			chromedp.WaitVisible(chromedp.CSS("#thanks")))
		eventID := eventIDOf(fbqCalls(guard, t, "fbq"), "Lead")
		if !uuidRE.MatchString(eventID) {
			t.Fatalf("pixel Lead eventID %q", eventID)
		}
		l := waitLead(t, db, "dent", eventID)
		if l.FBC != fbc.Value || l.FBP != fbp.Value || l.VisitorID != vid.Value {
			t.Errorf("lead's click identity: fbc %q fbp %q visitor %q; cookies %q %q %q", l.FBC, l.FBP, l.VisitorID, fbc.Value, fbp.Value, vid.Value)
		}
		if l.FillMS == nil || *l.FillMS != 4200 || l.Honeypot != "" {
			t.Errorf("fill_ms %s, hp %q", fill(l.FillMS), l.Honeypot)
		}
		if l.Name != "Ayşe Yılmaz" || l.Email != "ayse@example.com" || l.Phone != "0532 412 87 19" ||
			l.Message != "Implant fiyatı nedir?" || l.Fields["treatment"] != "implant" {
			t.Errorf("lead fields: %+v", l)
		}
		if !strings.Contains(l.PageURL, "fbclid=IwAR_browser-1") || l.ClientIP != "127.0.0.1" || !strings.Contains(l.UserAgent, "Chrome") {
			t.Errorf("lead page/IP/agent: %q %q %q", l.PageURL, l.ClientIP, l.UserAgent)
		}
		h, _ := db.HistoryByLead(ctx, l.ID)
		if tc, _ := h[0].Data["form_token"].(map[string]any); tc["valid"] != true || tc["server_fill_ms"] == 0.0 {
			t.Errorf("form token: %v", h[0].Data)
		}
		site.mu.Lock()
		defer site.mu.Unlock()
		if len(site.posts) != 1 || site.posts[0].Get("email") != "ayse@example.com" {
			t.Errorf("the form did not go on to the site: %v", site.posts)
		}
	})

	t.Run("a filled honeypot", func(t *testing.T) {
		run(chromedp.Navigate(pageOrigin + "/landing"))
		ready()
		// The honeypot is there for bots only: off-screen, out of the tab
		// order, hidden from screen readers.
		hidden, err := chromedp.Run(guard, chromedp.Evaluate[bool](`(function () {
			var hp = document.querySelector('form input[name=website_url]');
			return !!hp && hp.form === null && hp.tabIndex === -1 && hp.parentNode.getAttribute('aria-hidden') === 'true' &&
				hp.getBoundingClientRect().right <= 0 && hp.autocomplete === 'off';
		})()`))
		if err != nil || !hidden {
			t.Errorf("honeypot not hidden: %v %v", hidden, err)
		}
		run(chromedp.Evaluate[chromedp.Void](`document.querySelector('input[name=website_url]').value = 'https://seo.example'`),
			chromedp.SendKeys(chromedp.CSS("#email"), "bot@example.com"),
			chromedp.Evaluate[chromedp.Void](`window.__t += 8000`),
			chromedp.Click(chromedp.CSS("#send")),
			chromedp.WaitVisible(chromedp.CSS("#thanks")))
		// No pixel Lead for a filled honeypot: the lead is the site's newest.
		var l *model.Lead
		for deadline := time.Now().Add(15 * time.Second); l == nil || l.Email != "bot@example.com"; time.Sleep(50 * time.Millisecond) {
			ls, _ := db.LeadList(ctx, store.LeadFilter{Site: "dent", Limit: 1})
			if len(ls) == 1 {
				l = ls[0]
			}
			if time.Now().After(deadline) {
				t.Fatalf("the honeypot's lead never arrived: %+v", l)
			}
		}
		if l.Honeypot != "https://seo.example" || l.FillMS == nil || *l.FillMS != 8000 || l.Email != "bot@example.com" {
			t.Errorf("honeypot lead: hp %q fill %s email %q", l.Honeypot, fill(l.FillMS), l.Email)
		}
		if !hasReason(l, "HONEYPOT") {
			t.Errorf("the filled honeypot is not among the reasons: %+v", l.Reasons)
		}
		// No fbclid this time: the first click is kept.
		if !strings.HasSuffix(l.FBC, ".IwAR_browser-1") {
			t.Errorf("fbc lost on a later visit: %q", l.FBC)
		}
	})

	t.Run("consent required", func(t *testing.T) {
		if _, err := chromedp.Call(guard, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
			t.Fatal(err)
		}
		run(chromedp.Navigate(pageOrigin + "/strict?fbclid=IwAR_strict"))
		visit := ready()
		if visit["consent"] != false || visit["form_token"] == "" {
			t.Errorf("visit without consent: %v", visit)
		}
		if c := cookiesOf(guard, t, trackerURL, pageOrigin+"/"); len(c) != 0 {
			t.Errorf("cookies without consent: %v", c)
		}
		run(chromedp.SendKeys(chromedp.CSS("#email"), "quiet@example.com"),
			chromedp.Click(chromedp.CSS("#send")),
			chromedp.WaitVisible(chromedp.CSS("#thanks")))
		if calls := fbqCalls(guard, t, "fbq_strict"); len(calls) != 0 {
			t.Errorf("the pixel was told without consent: %s", calls)
		}
		if c := cookiesOf(guard, t, trackerURL, pageOrigin+"/"); len(c) != 0 {
			t.Errorf("cookies without consent: %v", c)
		}
		// The lead is stored all the same, for the owner. The page moved on
		// while its keepalive post may still be in flight: wait for it.
		var n int
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if n, _ = db.LeadCount(ctx, "strict"); n == 1 {
				break
			}
		}
		if n != 1 {
			t.Errorf("strict leads: %d", n)
		}

		// The visitor says yes: now the cookies come.
		run(chromedp.Navigate(pageOrigin + "/strict?fbclid=IwAR_strict"))
		ready()
		run(chromedp.Evaluate[chromedp.Void](`cleanads.consent(true)`, chromedp.EvalAwaitPromise))
		c := cookiesOf(guard, t, trackerURL)
		if c["_fbc"] == nil || !strings.HasSuffix(c["_fbc"].Value, ".IwAR_strict") || c["cleanads_vid"] == nil {
			t.Errorf("cookies after consent: %v", c)
		}
		if pv := eventIDOf(fbqCalls(guard, t, "fbq_strict"), "PageView"); pv == "" {
			t.Errorf("no PageView for the pixel after consent")
		}
	})
}
