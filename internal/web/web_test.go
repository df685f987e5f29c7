package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/web"
)

const (
	origin = "https://www.istanbuldis.example"
	apiKey = "dent-key-0123456789abcdef"
)

type env struct {
	t   *testing.T
	db  *store.DB
	srv *httptest.Server
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvOn(t, storetest.New(t))
}

// newEnvOn serves the app on db with two sites.
func newEnvOn(t *testing.T, db *store.DB) *env {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	for _, s := range []*model.Site{
		{ID: "dent", Name: "Istanbul Dental", APIKeyHash: model.HashAPIKey(apiKey), Settings: model.SiteSettings{
			Origins: []string{origin}, Country: "TR", ThankYouURL: origin + "/thanks",
			Meta: model.MetaSettings{Mode: model.ModeDryRun}}},
		{ID: "other", Name: "Other", APIKeyHash: model.HashAPIKey("other-key-0123456789abcdef"), Settings: model.SiteSettings{
			Origins: []string{"https://other.example"}, Country: "DE"}},
	} {
		if err := db.SiteUpsert(ctx, s, now); err != nil {
			t.Fatal(err)
		}
	}
	svc := app.New(app.Options{Store: db})
	h := web.New(web.Options{App: svc, Store: db, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}).Handler()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &env{t: t, db: db, srv: srv}
}

// do sends a request and returns the status, headers and body.
func (e *env) do(method, path, ctype, body string, hdr map[string]string) (int, http.Header, string) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func (e *env) lead(id string) map[string]any {
	e.t.Helper()
	code, _, body := e.do("GET", "/v1/leads/"+id, "", "", map[string]string{"Authorization": "Bearer " + apiKey})
	if code != 200 {
		e.t.Fatalf("get lead: %d %s", code, body)
	}
	var m map[string]any
	json.Unmarshal([]byte(body), &m)
	return m
}

func (e *env) count() int {
	n, err := e.db.LeadCount(context.Background(), "dent")
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

var fromSite = map[string]string{"Origin": origin, "User-Agent": "Mozilla/5.0 test"}

func TestLeadJSON(t *testing.T) {
	e := newEnv(t)
	body := `{"site":"dent","email":"ayse@example.com","phone":"0532 412 87 19","name":"Ayşe Yılmaz",
		"message":"Implant fiyatı?","fields":{"treatment":"implant"},"fill_ms":8400,"fbclid":"IwAR123","consent":true}`
	code, hdr, resp := e.do("POST", "/v1/leads", "application/json", body, fromSite)
	if code != 202 {
		t.Fatalf("status %d: %s", code, resp)
	}
	if hdr.Get("Access-Control-Allow-Origin") != origin {
		t.Errorf("no CORS header for the site's origin: %v", hdr)
	}
	var out struct {
		ID      string `json:"id"`
		EventID string `json:"event_id"`
	}
	json.Unmarshal([]byte(resp), &out)
	if out.ID == "" || len(out.EventID) != 36 {
		t.Fatalf("answer %s", resp)
	}
	if strings.Contains(resp, "verdict") || strings.Contains(resp, "score") {
		t.Errorf("answer reveals the judgement: %s", resp)
	}
	l := e.lead(out.ID)
	if l["email"] != "ayse@example.com" || l["name"] != "Ayşe Yılmaz" || l["client_ip"] != "127.0.0.1" ||
		l["user_agent"] != "Mozilla/5.0 test" || l["event_id"] != out.EventID || l["fill_ms"] != 8400.0 {
		t.Errorf("stored lead: %v", l)
	}
	if l["fields"].(map[string]any)["treatment"] != "implant" {
		t.Errorf("fields: %v", l["fields"])
	}
	for _, k := range []string{"verdict", "score", "reasons", "history", "deliveries"} {
		if _, ok := l[k]; !ok {
			t.Errorf("lead view lacks %s: %v", k, l)
		}
	}

	// The same event_id again is the same lead, not a second one.
	again := `{"site":"dent","event_id":"` + out.EventID + `","email":"ayse@example.com"}`
	code, _, resp = e.do("POST", "/v1/leads", "application/json", again, fromSite)
	if code != 202 || !strings.Contains(resp, out.ID) || e.count() != 1 {
		t.Errorf("replay: %d %s, %d leads", code, resp, e.count())
	}
}

func TestLeadForm(t *testing.T) {
	e := newEnv(t)
	form := url.Values{"site": {"dent"}, "email": {"a@example.com"}, "phone": {"+90 532 412 87 19"},
		"message": {"Merhaba"}, "city": {"İzmir"}, "_redirect": {origin + "/tesekkurler"}, "fill_ms": {"5000"}}
	code, hdr, body := e.do("POST", "/v1/leads", "application/x-www-form-urlencoded", form.Encode(), fromSite)
	if code != http.StatusSeeOther || hdr.Get("Location") != origin+"/tesekkurler" {
		t.Fatalf("form post: %d %v %s", code, hdr, body)
	}
	// Without _redirect, the site's thank-you page.
	delete(form, "_redirect")
	code, hdr, _ = e.do("POST", "/v1/leads", "application/x-www-form-urlencoded", form.Encode(), fromSite)
	if code != http.StatusSeeOther || hdr.Get("Location") != origin+"/thanks" {
		t.Errorf("thank-you redirect: %d %v", code, hdr)
	}
	// Never an open redirect.
	form.Set("_redirect", "https://evil.example/phish")
	n := e.count()
	code, _, body = e.do("POST", "/v1/leads", "application/x-www-form-urlencoded", form.Encode(), fromSite)
	if code != 400 || !strings.Contains(body, "_redirect") || e.count() != n {
		t.Errorf("open redirect: %d %s", code, body)
	}
	if n != 2 {
		t.Errorf("want 2 leads stored, have %d", n)
	}
	// Multipart works too.
	code, _, body = e.do("POST", "/v1/leads", "multipart/form-data; boundary=X",
		"--X\r\nContent-Disposition: form-data; name=\"site\"\r\n\r\ndent\r\n--X\r\nContent-Disposition: form-data; name=\"email\"\r\n\r\nm@example.com\r\n--X--\r\n", fromSite)
	if code != http.StatusSeeOther {
		t.Errorf("multipart: %d %s", code, body)
	}
}

func TestCORS(t *testing.T) {
	e := newEnv(t)
	code, hdr, _ := e.do("OPTIONS", "/v1/leads?site=dent", "", "", map[string]string{"Origin": origin, "Access-Control-Request-Method": "POST"})
	if code != 204 || hdr.Get("Access-Control-Allow-Origin") != origin || hdr.Get("Access-Control-Allow-Methods") == "" {
		t.Errorf("preflight from the site: %d %v", code, hdr)
	}
	code, hdr, _ = e.do("OPTIONS", "/v1/leads?site=dent", "", "", map[string]string{"Origin": "https://other.example"})
	if code != 403 || hdr.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight from another site's origin: %d %v", code, hdr)
	}
	code, hdr, _ = e.do("OPTIONS", "/v1/leads?site=dent", "", "", map[string]string{"Origin": "https://evil.example"})
	if code != 403 || hdr.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight from elsewhere: %d %v", code, hdr)
	}
	body := `{"site":"dent","email":"x@example.com"}`
	for _, h := range []map[string]string{{"Origin": "https://evil.example"}, {}, {"Origin": "https://other.example"}} {
		code, hdr, resp := e.do("POST", "/v1/leads", "application/json", body, h)
		if code != 403 || hdr.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("post with %v: %d %s", h, code, resp)
		}
	}
	// A browser that sends only a Referer is judged by its origin.
	code, _, _ = e.do("POST", "/v1/leads", "application/json", body, map[string]string{"Referer": origin + "/contact"})
	if code != 202 {
		t.Errorf("referer-only post: %d", code)
	}
	if e.count() != 1 {
		t.Errorf("leads stored: %d", e.count())
	}
}

func TestAPIKeyRules(t *testing.T) {
	e := newEnv(t)
	withServer := `{"site":"dent","email":"s@example.com","client_ip":"2a02:ff0::1","user_agent":"Mozilla/5.0 (iPhone)","submitted_at":"2026-01-02T03:04:05Z"}`
	// Without the key a browser cannot claim another IP, agent or time.
	code, _, body := e.do("POST", "/v1/leads", "application/json", withServer, fromSite)
	if code != 403 || !strings.Contains(body, "API key") {
		t.Errorf("visitor fields without key: %d %s", code, body)
	}
	// With it, a server posts for its visitor, from anywhere.
	code, _, body = e.do("POST", "/v1/leads", "application/json", withServer, map[string]string{"Authorization": "Bearer " + apiKey})
	if code != 202 {
		t.Fatalf("with key: %d %s", code, body)
	}
	var out struct{ ID string }
	json.Unmarshal([]byte(body), &out)
	l := e.lead(out.ID)
	if l["client_ip"] != "2a02:ff0::1" || l["user_agent"] != "Mozilla/5.0 (iPhone)" || l["submitted_at"] != "2026-01-02T03:04:05Z" {
		t.Errorf("server-given visitor fields not kept: %v", l)
	}
	// Another site's key, a wrong key, no key for the API.
	code, _, _ = e.do("POST", "/v1/leads", "application/json", withServer, map[string]string{"Authorization": "Bearer other-key-0123456789abcdef"})
	if code != 403 {
		t.Errorf("other site's key: %d", code)
	}
	code, _, _ = e.do("POST", "/v1/leads", "application/json", withServer, map[string]string{"Authorization": "Bearer wrong"})
	if code != 401 {
		t.Errorf("wrong key: %d", code)
	}
	code, hdr, _ := e.do("GET", "/v1/leads/"+out.ID, "", "", nil)
	if code != 401 || hdr.Get("WWW-Authenticate") == "" {
		t.Errorf("API without key: %d", code)
	}
	code, _, _ = e.do("GET", "/v1/leads/"+out.ID, "", "", map[string]string{"Authorization": "Bearer other-key-0123456789abcdef"})
	if code != 404 {
		t.Errorf("another site's lead: %d", code)
	}
	code, _, _ = e.do("GET", "/v1/leads/ld_nope", "", "", map[string]string{"Authorization": "Bearer " + apiKey})
	if code != 404 {
		t.Errorf("unknown lead: %d", code)
	}
}

func TestBadInput(t *testing.T) {
	e := newEnv(t)
	big := `{"site":"dent","message":"` + strings.Repeat("x", 70<<10) + `"}`
	cases := []struct {
		name, ctype, body string
		status            int
		mention           string
	}{
		{"unknown site", "application/json", `{"site":"nope","email":"a@example.com"}`, 400, "unknown site"},
		{"no site", "application/json", `{"email":"a@example.com"}`, 400, "site"},
		{"malformed JSON", "application/json", `{"site":"dent",`, 400, "malformed JSON"},
		{"trailing data", "application/json", `{"site":"dent"} {}`, 400, "after the object"},
		{"empty body", "application/json", ``, 400, "empty"},
		{"wrong type", "application/json", `{"site":"dent","fill_ms":"fast"}`, 400, "fill_ms"},
		{"unknown field", "application/json", `{"site":"dent","emial":"a@example.com"}`, 400, "emial"},
		{"too large", "application/json", big, 413, "64 KiB"},
		{"invalid UTF-8", "application/json", "{\"site\":\"dent\",\"name\":\"\xff\xfe\"}", 400, "UTF-8"},
		{"invalid UTF-8 form", "application/x-www-form-urlencoded", "site=dent&name=%ff%fe", 400, "UTF-8"},
		{"wrong content type", "application/xml", `<lead/>`, 415, "Content-Type"},
		{"no content type", "", `{}`, 415, "Content-Type"},
		{"bad event id", "application/json", `{"site":"dent","event_id":"a b<script>"}`, 400, "event_id"},
		{"negative fill", "application/json", `{"site":"dent","fill_ms":-1}`, 400, "fill_ms"},
		{"bad lead id", "application/json", `{"site":"dent","lead_id":"12ab"}`, 400, "lead_id"},
		{"bad consent", "application/x-www-form-urlencoded", `site=dent&consent=maybe`, 400, "consent"},
		{"NUL", "application/json", `{"site":"dent","name":"a\u0000b"}`, 400, "NUL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, hdr, body := e.do("POST", "/v1/leads", c.ctype, c.body, fromSite)
			if code != c.status || !strings.Contains(body, c.mention) {
				t.Errorf("%d %s; want %d mentioning %q", code, body, c.status, c.mention)
			}
			if !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
				t.Errorf("error is not JSON: %v", hdr)
			}
		})
	}
	if n := e.count(); n != 0 {
		t.Errorf("bad input stored %d leads", n)
	}
}

func TestClientIP(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name string
		hdr  map[string]string
		want string
	}{
		{"peer", nil, "127.0.0.1"},
		{"forwarded by trusted proxy", map[string]string{"X-Forwarded-For": "203.0.113.9"}, "203.0.113.9"},
		{"rightmost untrusted hop", map[string]string{"X-Forwarded-For": "6.6.6.6, 203.0.113.9, 127.0.0.1"}, "203.0.113.9"},
		{"IPv6 hop", map[string]string{"X-Forwarded-For": "2001:db8::7"}, "2001:db8::7"},
		{"IPv6 with port", map[string]string{"X-Forwarded-For": "[2001:db8::8]:4711"}, "2001:db8::8"},
		{"X-Real-IP", map[string]string{"X-Real-IP": "198.51.100.4"}, "198.51.100.4"},
		{"garbage", map[string]string{"X-Forwarded-For": "not-an-ip"}, "127.0.0.1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := map[string]string{"Origin": origin}
			for k, v := range c.hdr {
				h[k] = v
			}
			code, _, body := e.do("POST", "/v1/leads", "application/json", `{"site":"dent","email":"ip@example.com"}`, h)
			if code != 202 {
				t.Fatalf("%d %s", code, body)
			}
			var out struct{ ID string }
			json.Unmarshal([]byte(body), &out)
			if got := e.lead(out.ID)["client_ip"]; got != c.want {
				t.Errorf("client_ip = %v, want %s", got, c.want)
			}
		})
	}
}

// An untrusted peer's X-Forwarded-For is never believed.
func TestClientIPUntrustedPeer(t *testing.T) {
	db := storetest.New(t)
	db.SiteUpsert(context.Background(), &model.Site{ID: "dent", APIKeyHash: model.HashAPIKey(apiKey),
		Settings: model.SiteSettings{Origins: []string{origin}, Country: "TR"}}, time.Now())
	h := web.New(web.Options{App: app.New(app.Options{Store: db}), Store: db}).Handler()
	srv := httptest.NewServer(h)
	defer srv.Close()
	e := &env{t: t, db: db, srv: srv}
	_, _, body := e.do("POST", "/v1/leads", "application/json", `{"site":"dent"}`,
		map[string]string{"Origin": origin, "X-Forwarded-For": "203.0.113.9"})
	var out struct{ ID string }
	json.Unmarshal([]byte(body), &out)
	if got := e.lead(out.ID)["client_ip"]; got != "127.0.0.1" {
		t.Errorf("client_ip = %v: a spoofed header was believed", got)
	}
}

func TestHealth(t *testing.T) {
	e := newEnv(t)
	for _, p := range []string{"/healthz", "/readyz"} {
		if code, _, body := e.do("GET", p, "", "", nil); code != 200 {
			t.Errorf("%s: %d %s", p, code, body)
		}
	}
	e.db.Close()
	if code, _, _ := e.do("GET", "/readyz", "", "", nil); code != 503 {
		t.Errorf("readyz with a closed database: %d", code)
	}
	if code, _, _ := e.do("GET", "/healthz", "", "", nil); code != 200 {
		t.Errorf("healthz with a closed database: %d", code)
	}
}

func TestLeadEvidenceAPI(t *testing.T) {
	e := newEnv(t)
	code, _, body := e.do("POST", "/v1/leads", "application/json",
		`{"site":"dent","phone":"0533 218 44 90","name":"Mehmet Demir","message":"fiyat?","fill_ms":9000}`, fromSite)
	if code != 202 {
		t.Fatalf("%d %s", code, body)
	}
	var out struct {
		ID string `json:"id"`
	}
	json.Unmarshal([]byte(body), &out)
	if v := e.lead(out.ID)["verdict"]; v != "review" {
		t.Fatalf("grey lead verdict %v", v)
	}
	key := map[string]string{"Authorization": "Bearer " + apiKey}
	path := "/v1/leads/" + out.ID + "/events"
	for _, c := range []struct {
		body   string
		status int
		hdr    map[string]string
	}{
		{`{"type":"call","duration_s":75}`, 401, nil},
		{`{"type":"tweet"}`, 400, key},
		{`{"type":"call","duration_s":75,"at":"soon"}`, 400, key},
		{`{"type":"call","duration_s":"long"}`, 400, key},
	} {
		if code, _, body := e.do("POST", path, "application/json", c.body, c.hdr); code != c.status {
			t.Errorf("%s: %d %s, want %d", c.body, code, body, c.status)
		}
	}
	code, _, body = e.do("POST", path, "application/json", `{"type":"call","duration_s":75}`, key)
	if code != 200 || !strings.Contains(body, `"verdict":"clean"`) || !strings.Contains(body, `"kind":"qualified"`) {
		t.Errorf("call evidence: %d %s", code, body)
	}
	if code, _, _ := e.do("POST", "/v1/leads/ld_nope/events", "application/json", `{"type":"junk"}`, key); code != 404 {
		t.Errorf("unknown lead: %d", code)
	}
}

// When storage cannot serve (SQLite locked past its busy timeout, PostgreSQL
// gone) a lead is answered 503 with Retry-After, so the page or the posting
// server tries again, instead of a 500.
func TestLeadStorageUnavailable(t *testing.T) {
	db, cut := storetest.Breakable(t, storetest.Engine())
	e := newEnvOn(t, db)
	body := `{"site":"dent","email":"ayse@example.com"}`
	if code, _, resp := e.do("POST", "/v1/leads", "application/json", body, fromSite); code != 202 {
		t.Fatalf("before: %d %s", code, resp)
	}
	cut()
	code, hdr, resp := e.do("POST", "/v1/leads", "application/json", body, fromSite)
	if code != 503 || hdr.Get("Retry-After") == "" || !strings.Contains(resp, "unavailable") {
		t.Errorf("storage unavailable: %d %v %s", code, hdr, resp)
	}
}

// The same event_id posted many times at once (a retrying page, two nodes)
// is one lead, and every post is answered with it.
func TestLeadReplayConcurrent(t *testing.T) {
	e := newEnv(t)
	const n = 8
	body := `{"site":"dent","event_id":"evt-concurrent-1","email":"ayse@example.com"}`
	type answer struct {
		code int
		id   string
	}
	answers := make(chan answer, n)
	for range n {
		go func() {
			req, _ := http.NewRequest("POST", e.srv.URL+"/v1/leads", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+apiKey)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				answers <- answer{}
				return
			}
			defer resp.Body.Close()
			var out struct{ ID string }
			json.NewDecoder(resp.Body).Decode(&out)
			answers <- answer{resp.StatusCode, out.ID}
		}()
	}
	var first string
	for range n {
		a := <-answers
		if a.code != 202 || a.id == "" || (first != "" && a.id != first) {
			t.Errorf("post: %d %q (first %q)", a.code, a.id, first)
		}
		if first == "" {
			first = a.id
		}
	}
	if c := e.count(); c != 1 {
		t.Errorf("%d leads stored for one event_id", c)
	}
}
