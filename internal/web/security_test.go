package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/testkit"
	"github.com/cleanads/cleanads/internal/web"
)

// limitedEnv is newEnv's server with limits and a fake clock: buckets
// refill only when the test says.
func limitedEnv(t *testing.T, limits web.Limits) (*env, *testkit.Clock) {
	t.Helper()
	e := newEnv(t)
	clock := testkit.NewClock(time.Now())
	svc := app.New(app.Options{Store: e.db})
	h := web.New(web.Options{App: svc, Store: e.db, Now: clock.Now, Limits: limits,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}).Handler()
	e.srv.Close()
	e.srv = httptest.NewServer(h)
	t.Cleanup(e.srv.Close)
	return e, clock
}

func rate(n int, per time.Duration) model.Rate { return model.Rate{N: n, Per: per} }

// from is a browser request from the site's page at a visitor's address
// (through the trusted proxy on 127.0.0.1).
func from(ip string) map[string]string {
	return map[string]string{"Origin": origin, "User-Agent": "Mozilla/5.0 test", "X-Forwarded-For": ip}
}

func TestPublicRateLimit(t *testing.T) {
	e, clock := limitedEnv(t, web.Limits{PublicPerIP: rate(3, time.Minute), APIPerKey: rate(1000, time.Minute)})
	post := func(ip string) (int, http.Header, string) {
		return e.do("POST", "/v1/collect?site=dent", "text/plain", `{"url":"https://www.istanbuldis.example/"}`, from(ip))
	}
	for i := 0; i < 3; i++ {
		if code, _, body := post("203.0.113.7"); code != 200 {
			t.Fatalf("visit %d: %d %s", i, code, body)
		}
	}
	code, hdr, body := post("203.0.113.7")
	var msg struct{ Error string }
	json.Unmarshal([]byte(body), &msg)
	if code != 429 || hdr.Get("Retry-After") != "20" || !strings.Contains(msg.Error, "3/m per address") {
		t.Fatalf("over the limit: %d Retry-After %q %s", code, hdr.Get("Retry-After"), body)
	}
	if hdr.Get("Access-Control-Allow-Origin") != origin {
		t.Errorf("the 429 has no CORS header: the page cannot read it")
	}
	// The limit is per address; an IPv6 visitor is one /64.
	if code, _, _ := post("203.0.113.8"); code != 200 {
		t.Errorf("another address was limited: %d", code)
	}
	for i := 0; i < 3; i++ {
		post("2001:db8:1:2::" + string(rune('a'+i)))
	}
	if code, _, _ := post("2001:db8:1:2::ff"); code != 429 {
		t.Errorf("a fourth address of one /64: %d", code)
	}
	// Leads share the address's budget, and nothing is stored when refused.
	n := e.count()
	if code, _, _ := e.do("POST", "/v1/leads", "application/json", `{"site":"dent","email":"x@example.com"}`, from("203.0.113.7")); code != 429 || e.count() != n {
		t.Errorf("lead over the limit: %d, stored %d", code, e.count()-n)
	}
	clock.Add(20 * time.Second)
	if code, _, _ := post("203.0.113.7"); code != 200 {
		t.Errorf("after Retry-After: %d", code)
	}
	// Preflights and the script are never limited.
	if code, _, _ := e.do("OPTIONS", "/v1/leads?site=dent", "", "", from("203.0.113.7")); code != 204 {
		t.Errorf("preflight: %d", code)
	}
}

func TestAPIRateLimitPerKey(t *testing.T) {
	e, _ := limitedEnv(t, web.Limits{PublicPerIP: rate(1, time.Hour), APIPerKey: rate(2, time.Minute),
		Sites: map[model.SiteID]web.SiteLimits{"other": {APIPerKey: ptr(rate(5, time.Minute))}}})
	auth := map[string]string{"Authorization": "Bearer " + apiKey}
	// The site's server posts leads for many visitors from one address:
	// they count against its key, not against the address.
	var id string
	for i := 0; i < 2; i++ {
		code, _, body := e.do("POST", "/v1/leads", "application/json", `{"site":"dent","email":"a`+string(rune('0'+i))+`@example.com"}`, auth)
		if code != 202 {
			t.Fatalf("lead %d with the key: %d %s", i, code, body)
		}
		var out struct{ ID string }
		json.Unmarshal([]byte(body), &out)
		id = out.ID
	}
	code, hdr, body := e.do("GET", "/v1/leads/"+id, "", "", auth)
	if code != 429 || hdr.Get("Retry-After") != "30" || !strings.Contains(body, "per API key") {
		t.Fatalf("third call of the key: %d %q %s", code, hdr.Get("Retry-After"), body)
	}
	// Another site's key has its own bucket and its own, larger rate.
	other := map[string]string{"Authorization": "Bearer other-key-0123456789abcdef"}
	for i := 0; i < 5; i++ {
		if code, _, body := e.do("GET", "/v1/leads/"+id, "", "", other); code != 404 {
			t.Fatalf("other key call %d: %d %s", i, code, body)
		}
	}
	if code, _, _ := e.do("GET", "/v1/leads/"+id, "", "", other); code != 429 {
		t.Errorf("other key's sixth call: %d", code)
	}
	// A wrong key is not a way around the address limit.
	bad := map[string]string{"Authorization": "Bearer wrong-key-0123456789", "X-Forwarded-For": "198.51.100.1"}
	e.do("POST", "/v1/leads", "application/json", `{"site":"dent"}`, bad)
	if code, _, _ := e.do("POST", "/v1/leads", "application/json", `{"site":"dent"}`, bad); code != 429 {
		t.Errorf("a wrong key escaped the address limit: %d", code)
	}
}

// TestRedirectOnlyToSiteOrigins: a form post's _redirect must be an
// absolute URL on one of the site's origins; tricky spellings are refused
// and nothing is stored for them.
func TestRedirectOnlyToSiteOrigins(t *testing.T) {
	e := newEnv(t)
	good := map[string]string{
		origin + "/tesekkurler":                origin + "/tesekkurler",
		origin + "/t?x=1#done":                 origin + "/t?x=1#done",
		"HTTPS://WWW.ISTANBULDIS.EXAMPLE/Path": origin + "/Path",
		origin:                                 origin,
	}
	bad := []string{
		"//evil.example/x",
		"///evil.example",
		"https://www.istanbuldis.example.evil.example/",
		"https://www.istanbuldis.example@evil.example/",
		"https://user:pw@www.istanbuldis.example/",
		`https://www.istanbuldis.example\@evil.example`,
		`https:\\evil.example`,
		`/\evil.example`,
		`\\evil.example`,
		"javascript:alert(1)",
		"JavaScript://www.istanbuldis.example/%0aalert(1)",
		"data:text/html,<script>alert(1)</script>",
		"http://www.istanbuldis.example/", // the site is https only
		"https://www.istanbuldis.example:8443/",
		"https:evil.example",
		"https:/evil.example",
		"/thanks",
		"tesekkurler",
		" https://www.istanbuldis.example/",
		"https://www.istanbuldis.example/\nLocation: https://evil.example",
		"https://www.istanbuldis.example\t.evil.example/",
		"https://evil.example%2f@www.istanbuldis.example/",
		"https://www.istanbuldis.example%2eevil.example/",
	}
	for raw, want := range good {
		form := url.Values{"site": {"dent"}, "email": {"r@example.com"}, "_redirect": {raw}}
		form.Set("event_id", model.NewUUID())
		code, hdr, body := e.do("POST", "/v1/leads", "application/x-www-form-urlencoded", form.Encode(), fromSite)
		if code != 303 || hdr.Get("Location") != want {
			t.Errorf("%q: %d Location %q %s", raw, code, hdr.Get("Location"), body)
		}
	}
	n := e.count()
	for _, raw := range bad {
		form := url.Values{"site": {"dent"}, "email": {"r@example.com"}, "_redirect": {raw}}
		code, hdr, body := e.do("POST", "/v1/leads", "application/x-www-form-urlencoded", form.Encode(), fromSite)
		if code != 400 || hdr.Get("Location") != "" || !strings.Contains(body, "_redirect") {
			t.Errorf("%q: %d Location %q %s", raw, code, hdr.Get("Location"), body)
		}
	}
	if e.count() != n {
		t.Errorf("refused redirects stored %d leads", e.count()-n)
	}
	// A thank-you page edited in the database to another origin is not
	// followed: the lead is kept and answered without a redirect.
	ctx := context.Background()
	site, _ := e.db.SiteByID(ctx, "dent")
	site.Settings.ThankYouURL = "https://evil.example/thanks"
	e.db.SiteUpsert(ctx, site, time.Now())
	// A new server: the running one keeps the site it read for a while.
	e.srv.Close()
	e.srv = httptest.NewServer(web.New(web.Options{App: app.New(app.Options{Store: e.db}), Store: e.db}).Handler())
	t.Cleanup(e.srv.Close)
	form := url.Values{"site": {"dent"}, "email": {"r@example.com"}}
	code, hdr, _ := e.do("POST", "/v1/leads", "application/x-www-form-urlencoded", form.Encode(), fromSite)
	if code != 202 || hdr.Get("Location") != "" || e.count() != n+1 {
		t.Errorf("bad thank-you page: %d Location %q", code, hdr.Get("Location"))
	}
}

func TestSafeRedirectModel(t *testing.T) {
	s := &model.Site{Settings: model.SiteSettings{Origins: []string{"https://site.example", "http://localhost:8080"}}}
	for raw, ok := range map[string]bool{
		"https://site.example/a":             true,
		"http://localhost:8080/x":            true,
		"http://localhost/x":                 false,
		"https://site.example.evil.example/": false,
		"//site.example/a":                   false,
		"https://site.example\\a":            false,
		"javascript:https://site.example/":   false,
		"":                                   false,
	} {
		if _, got := s.SafeRedirect(raw); got != ok {
			t.Errorf("%q: %v, want %v", raw, got, ok)
		}
	}
}

// TestAdminNextStaysOnAdmin: the post-login destination is an admin page of
// this server, however it is spelt.
func TestAdminNextStaysOnAdmin(t *testing.T) {
	for _, ok := range []string{"/admin/", "/admin/leads/ld_1", "/admin/deliveries?state=dead&site=dent", "/admin/sites/"} {
		if got := web.SafeNext(ok); got != ok {
			t.Errorf("%q became %q", ok, got)
		}
	}
	for _, bad := range []string{"", "/", "//evil.example", "https://evil.example/admin/", "/admin/../\t/evil.example",
		"/admin/..//evil.example", "/admin/%2e%2e//evil.example", "/admin/\\evil.example", "/admin/\n/evil", "/admin//evil.example",
		"/admin/../../evil", "javascript:alert(1)", "/adminx/", "/admin/ /x", "http:/admin/"} {
		if got := web.SafeNext(bad); got != "/admin/" {
			t.Errorf("%q passed as %q", bad, got)
		}
	}
}
