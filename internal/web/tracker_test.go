package web_test

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
	"github.com/cleanads/cleanads/internal/web"
)

const trackerHost = "t.istanbuldis.example"

// tracker is a server with the sites the tracker tests need: dent (implied
// consent, a pixel, cookie domain .istanbuldis.example) and strict (consent
// required).
type tracker struct {
	t     testing.TB
	db    *store.DB
	srv   *httptest.Server
	clock *testkit.Clock // shared by the app and the web server
}

func newTracker(t testing.TB, proxies ...string) *tracker {
	t.Helper()
	db := storetest.New(t)
	clk := testkit.NewClock(time.Date(2026, 12, 2, 10, 0, 0, 123e6, time.UTC))
	for _, s := range []*model.Site{
		{ID: "dent", Name: "Istanbul Dental", APIKeyHash: model.HashAPIKey(apiKey), Settings: model.SiteSettings{
			Origins: []string{origin}, Country: "TR", CookieDomain: ".istanbuldis.example",
			Meta: model.MetaSettings{PixelID: "123456789012345", Mode: model.ModeDryRun}}},
		{ID: "strict", Name: "Strict", APIKeyHash: model.HashAPIKey("strict-key-0123456789abcdef"), Settings: model.SiteSettings{
			Origins: []string{origin}, Country: "DE", CookieDomain: ".istanbuldis.example", Consent: model.ConsentRequired,
			Meta: model.MetaSettings{PixelID: "99887766554433", Mode: model.ModeDryRun}}},
	} {
		if err := db.SiteUpsert(context.Background(), s, clk.Now()); err != nil {
			t.Fatal(err)
		}
	}
	var pfx []netip.Prefix
	for _, p := range proxies {
		pfx = append(pfx, netip.MustParsePrefix(p))
	}
	svc := app.New(app.Options{Store: db, Now: clk.Now})
	srv := httptest.NewServer(web.New(web.Options{App: svc, Store: db, Now: clk.Now, TrustedProxies: pfx}).Handler())
	t.Cleanup(srv.Close)
	return &tracker{t: t, db: db, srv: srv, clock: clk}
}

// reply is an answer with its cookies.
type reply struct {
	code    int
	hdr     http.Header
	body    string
	cookies map[string]*http.Cookie
}

// req sends a request as a browser on the site would, to the tracker's own
// host name; cookies are sent as given.
func (tr *tracker) req(method, path, ctype, body string, hdr map[string]string, cookies map[string]string) reply {
	tr.t.Helper()
	r, err := http.NewRequest(method, tr.srv.URL+path, strings.NewReader(body))
	if err != nil {
		tr.t.Fatal(err)
	}
	r.Host = trackerHost
	if ctype != "" {
		r.Header.Set("Content-Type", ctype)
	}
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	for k, v := range cookies {
		r.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		tr.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	rep := reply{code: resp.StatusCode, hdr: resp.Header, body: string(b), cookies: map[string]*http.Cookie{}}
	for _, c := range resp.Cookies() {
		rep.cookies[c.Name] = c
	}
	return rep
}

// collectAnswer is the JSON answer of /v1/collect.
type collectAnswer struct {
	Consent   bool   `json:"consent"`
	EventID   string `json:"event_id"`
	FormToken string `json:"form_token"`
	FBC       string `json:"fbc"`
	FBP       string `json:"fbp"`
	LeadEvent string `json:"lead_event"`
}

// collect posts a page view of page (a path on the site's origin) with the
// browser's cookies, and returns the answer.
func (tr *tracker) collect(site, page string, consent *bool, cookies map[string]string, hdr map[string]string) (reply, collectAnswer) {
	tr.t.Helper()
	b, _ := json.Marshal(map[string]any{"url": origin + page, "referrer": "https://l.facebook.com/", "consent": consent})
	h := map[string]string{"Origin": origin, "User-Agent": "Mozilla/5.0 (tracker test)"}
	for k, v := range hdr {
		h[k] = v
	}
	rep := tr.req("POST", "/v1/collect?site="+site, "text/plain;charset=UTF-8", string(b), h, cookies)
	if rep.code != 200 {
		tr.t.Fatalf("collect %s: %d %s", page, rep.code, rep.body)
	}
	var ans collectAnswer
	if err := json.Unmarshal([]byte(rep.body), &ans); err != nil {
		tr.t.Fatal(err)
	}
	return rep, ans
}

// jar returns the cookies a browser keeps after rep: set ones added,
// removed ones dropped.
func jar(old map[string]string, rep reply) map[string]string {
	j := map[string]string{}
	for k, v := range old {
		j[k] = v
	}
	for k, c := range rep.cookies {
		if c.MaxAge < 0 {
			delete(j, k)
		} else {
			j[k] = c.Value
		}
	}
	return j
}

func ptr[T any](v T) *T { return &v }

var (
	uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	// The server mints PageView event ids as version 7: time first.
	uuidV7RE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	fbpRE    = regexp.MustCompile(`^fb\.1\.\d{13}\.\d{1,10}$`)
)

func TestCollect(t *testing.T) {
	tr := newTracker(t, "127.0.0.1/32")
	now := tr.clock.Now()
	rep, ans := tr.collect("dent", "/implant?fbclid=IwAR_a-1.x&gclid=G1&wbraid=W1&msclkid=M1&utm_source=fb&utm_campaign=spring", nil, nil,
		map[string]string{"X-Forwarded-For": "2001:db8::7"})

	wantFBC := "fb.1." + strconv.FormatInt(now.UnixMilli(), 10) + ".IwAR_a-1.x"
	fbc, fbp, vid := rep.cookies["_fbc"], rep.cookies["_fbp"], rep.cookies["cleanads_vid"]
	if fbc == nil || fbp == nil || vid == nil {
		t.Fatalf("cookies: %v", rep.hdr["Set-Cookie"])
	}
	if fbc.Value != wantFBC || ans.FBC != wantFBC {
		t.Errorf("_fbc = %q (answer %q), want %q", fbc.Value, ans.FBC, wantFBC)
	}
	if !fbpRE.MatchString(fbp.Value) || ans.FBP != fbp.Value || !strings.HasPrefix(fbp.Value, "fb.1."+strconv.FormatInt(now.UnixMilli(), 10)+".") {
		t.Errorf("_fbp = %q (answer %q)", fbp.Value, ans.FBP)
	}
	for _, c := range []*http.Cookie{fbc, fbp, vid} {
		if c.Domain != "istanbuldis.example" || c.Path != "/" || c.MaxAge != 390*24*3600 ||
			!c.Expires.Equal(now.Add(390*24*time.Hour).Truncate(time.Second)) || c.SameSite != http.SameSiteLaxMode || c.Secure {
			t.Errorf("cookie %s: domain %q path %q max-age %d expires %v samesite %v secure %v", c.Name, c.Domain, c.Path,
				c.MaxAge, c.Expires, c.SameSite, c.Secure)
		}
	}
	if !vid.HttpOnly || fbc.HttpOnly || fbp.HttpOnly {
		t.Errorf("HttpOnly: the visitor cookie is the server's, _fbc/_fbp the pixel reads: %v %v %v", vid.HttpOnly, fbc.HttpOnly, fbp.HttpOnly)
	}
	if !ans.Consent || !uuidV7RE.MatchString(ans.EventID) || ans.FormToken == "" || ans.LeadEvent != "Lead" {
		t.Errorf("answer: %+v", ans)
	}
	if ms := fmt.Sprintf("%012x", now.UnixMilli()); strings.ReplaceAll(ans.EventID, "-", "")[:12] != ms {
		t.Errorf("PageView event_id %s does not start with the time %s", ans.EventID, ms)
	}
	if rep.hdr.Get("Access-Control-Allow-Origin") != origin || rep.hdr.Get("Access-Control-Allow-Credentials") != "true" {
		t.Errorf("CORS: %v", rep.hdr)
	}

	ctx := context.Background()
	v, err := tr.db.VisitorByID(ctx, "dent", vid.Value)
	if err != nil {
		t.Fatal(err)
	}
	if v.FBC != wantFBC || v.FBP != fbp.Value || v.LastIP != "2001:db8::7" || v.LastUserAgent != "Mozilla/5.0 (tracker test)" ||
		!v.FirstSeen.Equal(now) || !v.FBCAt.Equal(now) {
		t.Errorf("visitor: %+v", v)
	}
	visits, err := tr.db.VisitsByVisitor(ctx, "dent", vid.Value)
	if err != nil || len(visits) != 1 {
		t.Fatalf("visits: %v %v", visits, err)
	}
	vi := visits[0]
	if vi.FBClid != "IwAR_a-1.x" || vi.GClid != "G1" || vi.WBraid != "W1" || vi.MSClkid != "M1" || vi.Source != "fb" ||
		vi.Campaign != "spring" || vi.EventID != ans.EventID {
		t.Errorf("visit: %+v", vi)
	}
	d, err := tr.db.VisitPageView(ctx, "dent", ans.EventID)
	if err != nil {
		t.Fatalf("PageView not queued: %v", err)
	}
	var raw map[string]any
	json.Unmarshal(d.Payload, &raw)
	ud, _ := raw["user_data"].(map[string]any)
	if d.EventName != "PageView" || d.State != model.DeliveryDryRun || d.PixelID != "123456789012345" ||
		raw["action_source"] != "website" || raw["event_id"] != ans.EventID || ud["fbc"] != wantFBC || ud["fbp"] != fbp.Value ||
		ud["client_ip_address"] != "2001:db8::7" || ud["client_user_agent"] != "Mozilla/5.0 (tracker test)" ||
		raw["event_source_url"] != origin+"/implant?fbclid=IwAR_a-1.x&gclid=G1&wbraid=W1&msclkid=M1&utm_source=fb&utm_campaign=spring" ||
		raw["referrer_url"] != "https://l.facebook.com/" {
		t.Errorf("PageView row: %+v payload %s", d, d.Payload)
	}
}

// The fbc rules over a visitor's visits: minted once per fbclid, kept
// without one, replaced by a newer click, the pixel's respected when we
// have none or when it names a newer click.
func TestCollectFBCRules(t *testing.T) {
	tr := newTracker(t)
	ms := func(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }
	t0 := tr.clock.Now()
	var cookies map[string]string
	steps := []struct {
		name   string
		after  time.Duration
		page   string
		pixel  string // a _fbc the browser sends instead of ours
		want   func() string
		newFBP bool
	}{
		{"first click", 0, "/?fbclid=AAA", "", func() string { return "fb.1." + ms(t0) + ".AAA" }, true},
		{"later visit without fbclid keeps it", time.Hour, "/contact", "", func() string { return "fb.1." + ms(t0) + ".AAA" }, false},
		{"same fbclid again keeps first-seen time", 2 * time.Hour, "/?fbclid=AAA", "", func() string { return "fb.1." + ms(t0) + ".AAA" }, false},
		{"new fbclid replaces it", 3 * time.Hour, "/?fbclid=BBB", "", func() string { return "fb.1." + ms(t0.Add(3*time.Hour)) + ".BBB" }, false},
		{"pixel saw a newer click", 5 * time.Hour, "/", "fb.1." + ms(t0.Add(4*time.Hour)) + ".CCC",
			func() string { return "fb.1." + ms(t0.Add(4*time.Hour)) + ".CCC" }, false},
		{"pixel's older click loses", 6 * time.Hour, "/", "fb.1." + ms(t0.Add(-time.Hour)) + ".ZZZ",
			func() string { return "fb.1." + ms(t0.Add(4*time.Hour)) + ".CCC" }, false},
		{"malformed pixel value ignored", 7 * time.Hour, "/", "fb.1.1700000000.bad",
			func() string { return "fb.1." + ms(t0.Add(4*time.Hour)) + ".CCC" }, false},
	}
	var fbp string
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			tr.clock.Set(t0.Add(s.after))
			send := jar(cookies, reply{})
			if s.pixel != "" {
				send["_fbc"] = s.pixel
			}
			rep, ans := tr.collect("dent", s.page, nil, send, nil)
			cookies = jar(cookies, rep)
			if got := cookies["_fbc"]; got != s.want() || ans.FBC != got {
				t.Errorf("_fbc = %q, answer %q, want %q", got, ans.FBC, s.want())
			}
			if s.newFBP {
				fbp = cookies["_fbp"]
			} else if cookies["_fbp"] != fbp {
				t.Errorf("_fbp changed: %q -> %q", fbp, cookies["_fbp"])
			}
		})
	}

	// New visitors: the pixel's cookies are taken when we have none; for
	// the fbclid in the URL, the pixel's value for that same click is kept,
	// so the browser and the server say the same.
	tr.clock.Set(t0.Add(10 * time.Hour))
	pixelFBC, pixelFBP := "fb.1."+ms(t0.Add(9*time.Hour))+".PIX", "fb.1."+ms(t0)+".424242"
	rep, _ := tr.collect("dent", "/", nil, map[string]string{"_fbc": pixelFBC, "_fbp": pixelFBP}, nil)
	if rep.cookies["_fbc"].Value != pixelFBC || rep.cookies["_fbp"].Value != pixelFBP {
		t.Errorf("pixel cookies not respected: %v", rep.hdr["Set-Cookie"])
	}
	rep, _ = tr.collect("dent", "/?fbclid=PIX", nil, map[string]string{"_fbc": pixelFBC}, nil)
	if rep.cookies["_fbc"].Value != pixelFBC {
		t.Errorf("same click re-minted: %v", rep.cookies["_fbc"].Value)
	}
	// A visitor cookie we never issued is a new visitor, not an error.
	rep, _ = tr.collect("dent", "/", nil, map[string]string{"cleanads_vid": "v_forged"}, nil)
	if v := rep.cookies["cleanads_vid"]; v == nil || v.Value == "v_forged" {
		t.Errorf("unknown visitor id kept: %v", rep.hdr["Set-Cookie"])
	}
}

func TestCollectCookieSecurity(t *testing.T) {
	behindProxy := newTracker(t, "127.0.0.1/32")
	rep, _ := behindProxy.collect("dent", "/", nil, nil, map[string]string{"X-Forwarded-Proto": "https"})
	if !rep.cookies["_fbp"].Secure || !rep.cookies["cleanads_vid"].Secure {
		t.Errorf("https through a trusted proxy: not Secure: %v", rep.hdr["Set-Cookie"])
	}
	direct := newTracker(t) // no trusted proxy: the header is anyone's
	rep, _ = direct.collect("dent", "/", nil, nil, map[string]string{"X-Forwarded-Proto": "https"})
	if rep.cookies["_fbp"].Secure {
		t.Errorf("an untrusted X-Forwarded-Proto was believed")
	}

	// A tracker host outside the cookie domain: the browser would drop a
	// Domain cookie, so it is set for the host only.
	r, _ := http.NewRequest("POST", direct.srv.URL+"/v1/collect?site=dent", strings.NewReader(`{"url":"`+origin+`/"}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Origin", origin)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Domain != "" {
			t.Errorf("cookie %s for domain %q on host %s", c.Name, c.Domain, r.Host)
		}
	}
}

func TestCollectConsent(t *testing.T) {
	tr := newTracker(t)
	ctx := context.Background()

	// Required, not given: no cookie, nothing stored, no PageView; a form
	// token still, so the server can time the form.
	rep, ans := tr.collect("strict", "/?fbclid=NOPE", nil, nil, nil)
	if len(rep.cookies) != 0 || rep.hdr.Get("Set-Cookie") != "" {
		t.Errorf("cookies without consent: %v", rep.hdr["Set-Cookie"])
	}
	if ans.Consent || ans.EventID != "" || ans.FBC != "" || ans.FormToken == "" {
		t.Errorf("answer without consent: %+v", ans)
	}
	// Given: cookies.
	rep, ans = tr.collect("strict", "/?fbclid=YES", ptr(true), nil, nil)
	cookies := jar(nil, rep)
	if !ans.Consent || cookies["_fbc"] == "" || cookies["cleanads_vid"] == "" {
		t.Fatalf("with consent: %+v %v", ans, rep.hdr["Set-Cookie"])
	}
	if _, err := tr.db.VisitPageView(ctx, "strict", ans.EventID); err != nil {
		t.Errorf("PageView with consent: %v", err)
	}
	// Later pages need not repeat it: the visitor said yes.
	rep, ans = tr.collect("strict", "/next", nil, cookies, nil)
	if !ans.Consent || rep.cookies["_fbp"] == nil {
		t.Errorf("a remembered yes: %+v", ans)
	}
	vid := cookies["cleanads_vid"]
	// Withdrawn: the cookies are removed, the no remembered.
	rep, ans = tr.collect("strict", "/", ptr(false), cookies, nil)
	if ans.Consent || len(rep.cookies) != 3 {
		t.Fatalf("withdrawal: %+v %v", ans, rep.hdr["Set-Cookie"])
	}
	for _, c := range rep.cookies {
		if c.MaxAge >= 0 || c.Domain != "istanbuldis.example" {
			t.Errorf("cookie %s not removed: %v", c.Name, c)
		}
	}
	v, err := tr.db.VisitorByID(ctx, "strict", vid)
	if err != nil || v.Consent == nil || *v.Consent {
		t.Errorf("withdrawal not remembered: %+v %v", v, err)
	}
	// A browser that kept the cookie anyway gets nothing new.
	rep, ans = tr.collect("strict", "/", nil, map[string]string{"cleanads_vid": vid}, nil)
	if ans.Consent || rep.hdr.Get("Set-Cookie") != "" {
		t.Errorf("after withdrawal: %+v %v", ans, rep.hdr["Set-Cookie"])
	}
	visits, _ := tr.db.VisitsByVisitor(ctx, "strict", vid)
	if len(visits) != 2 {
		t.Errorf("visits stored: %d, want 2 (the ones with consent)", len(visits))
	}
	// Implied: an explicit no is respected too.
	rep, ans = tr.collect("dent", "/", ptr(false), nil, nil)
	if ans.Consent || rep.hdr.Get("Set-Cookie") != "" {
		t.Errorf("implied site, explicit no: %+v %v", ans, rep.hdr["Set-Cookie"])
	}
}

func TestCollectBadInput(t *testing.T) {
	tr := newTracker(t)
	ok := map[string]string{"Origin": origin}
	cases := []struct {
		name, path, ctype, body string
		hdr                     map[string]string
		status                  int
		mention                 string
	}{
		{"foreign origin", "/v1/collect?site=dent", "text/plain", `{"url":"https://evil.example/"}`, map[string]string{"Origin": "https://evil.example"}, 403, "origin"},
		{"no origin", "/v1/collect?site=dent", "text/plain", `{"url":"` + origin + `/"}`, nil, 403, "origin"},
		{"unknown site", "/v1/collect?site=nope", "text/plain", `{"url":"` + origin + `/"}`, ok, 400, "unknown site"},
		{"no site", "/v1/collect", "text/plain", `{"url":"` + origin + `/"}`, ok, 400, "site"},
		{"no url", "/v1/collect?site=dent", "text/plain", `{}`, ok, 400, "url"},
		{"not http", "/v1/collect?site=dent", "text/plain", `{"url":"javascript:alert(1)"}`, ok, 400, "url"},
		{"malformed", "/v1/collect?site=dent", "text/plain", `{"url":`, ok, 400, "malformed JSON"},
		{"unknown field", "/v1/collect?site=dent", "application/json", `{"url":"` + origin + `/","x":1}`, ok, 400, "x"},
		{"wrong type", "/v1/collect?site=dent", "application/xml", `<visit/>`, ok, 415, "Content-Type"},
		{"too large", "/v1/collect?site=dent", "text/plain", `{"url":"` + origin + `/?` + strings.Repeat("a", 70<<10) + `"}`, ok, 413, "64 KiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := tr.req("POST", c.path, c.ctype, c.body, c.hdr, nil)
			if rep.code != c.status || !strings.Contains(rep.body, c.mention) || rep.hdr.Get("Set-Cookie") != "" {
				t.Errorf("%d %s %v; want %d mentioning %q", rep.code, rep.body, rep.hdr["Set-Cookie"], c.status, c.mention)
			}
		})
	}
	// The preflight (a browser sending application/json) is answered for
	// the site's origins only.
	if rep := tr.req("OPTIONS", "/v1/collect?site=dent", "", "", map[string]string{"Origin": origin}, nil); rep.code != 204 ||
		rep.hdr.Get("Access-Control-Allow-Credentials") != "true" {
		t.Errorf("preflight: %d %v", rep.code, rep.hdr)
	}
	if rep := tr.req("OPTIONS", "/v1/collect?site=dent", "", "", map[string]string{"Origin": "https://evil.example"}, nil); rep.code != 403 {
		t.Errorf("foreign preflight: %d", rep.code)
	}
}

// A visitor reaching the server over IPv6 directly (no proxy) is stored
// with that address.
func TestCollectIPv6Peer(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	tr := newTracker(t, "127.0.0.1/32")
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: tr.srv.Config.Handler}}
	srv.Start()
	defer srv.Close()
	tr.srv = srv
	rep, _ := tr.collect("dent", "/", nil, nil, map[string]string{"X-Forwarded-For": "203.0.113.9"})
	v, err := tr.db.VisitorByID(context.Background(), "dent", rep.cookies["cleanads_vid"].Value)
	if err != nil || v.LastIP != "::1" {
		t.Errorf("visitor over IPv6: %+v %v (an untrusted peer's X-Forwarded-For must be ignored)", v, err)
	}
}

// postLead posts a lead and returns the stored lead with its history.
func (tr *tracker) postLead(body string, hdr, cookies map[string]string) (int, map[string]any) {
	tr.t.Helper()
	rep := tr.req("POST", "/v1/leads", "application/json", body, hdr, cookies)
	if rep.code != 202 {
		return rep.code, map[string]any{"error": rep.body}
	}
	var out struct{ ID string }
	json.Unmarshal([]byte(rep.body), &out)
	got := tr.req("GET", "/v1/leads/"+out.ID, "", "", map[string]string{"Authorization": "Bearer " + apiKey}, nil)
	var l map[string]any
	json.Unmarshal([]byte(got.body), &l)
	return rep.code, l
}

// tokenOf returns the form_token facts in a lead's first history entry.
func tokenOf(l map[string]any) map[string]any {
	h, _ := l["history"].([]any)
	if len(h) == 0 {
		return nil
	}
	data, _ := h[0].(map[string]any)["data"].(map[string]any)
	tok, _ := data["form_token"].(map[string]any)
	return tok
}

func TestLeadLinkedToVisitor(t *testing.T) {
	tr := newTracker(t, "127.0.0.1/32")
	rep, ans := tr.collect("dent", "/?fbclid=LINK", nil, nil, map[string]string{"X-Forwarded-For": "2001:db8::42"})
	cookies := jar(nil, rep)
	vid, fbc, fbp := cookies["cleanads_vid"], cookies["_fbc"], cookies["_fbp"]
	browser := map[string]string{"Origin": origin, "User-Agent": "Mozilla/5.0 (tracker test)"}
	server := map[string]string{"Authorization": "Bearer " + apiKey}

	// The browser's own post: the cookies say who it is.
	_, l := tr.postLead(`{"site":"dent","email":"a@example.com"}`, browser, cookies)
	if l["visitor_id"] != vid || l["fbc"] != fbc || l["fbp"] != fbp {
		t.Errorf("browser lead: %v", l)
	}
	// The site's server, naming the visitor: IP and agent come from the visit.
	_, l = tr.postLead(`{"site":"dent","email":"b@example.com","visitor_id":"`+vid+`"}`, server, nil)
	if l["fbc"] != fbc || l["fbp"] != fbp || l["client_ip"] != "2001:db8::42" || l["user_agent"] != "Mozilla/5.0 (tracker test)" {
		t.Errorf("server lead by visitor_id: %v", l)
	}
	// ... or naming the PageView's event_id.
	_, l = tr.postLead(`{"site":"dent","email":"c@example.com","event_id":"`+ans.EventID+`"}`, server, nil)
	if l["visitor_id"] != vid || l["fbc"] != fbc || l["client_ip"] != "2001:db8::42" {
		t.Errorf("server lead by event_id: %v", l)
	}
	// What the lead brings itself wins.
	_, l = tr.postLead(`{"site":"dent","email":"d@example.com","visitor_id":"`+vid+`","client_ip":"198.51.100.1","fbc":"fb.1.1764000000000.OWN"}`, server, nil)
	if l["client_ip"] != "198.51.100.1" || l["fbc"] != "fb.1.1764000000000.OWN" || l["fbp"] != fbp {
		t.Errorf("lead's own values: %v", l)
	}
	// Another site's visitor is not this site's.
	_, l = tr.postLead(`{"site":"strict","email":"e@example.com","visitor_id":"`+vid+`"}`,
		map[string]string{"Authorization": "Bearer strict-key-0123456789abcdef"}, nil)
	if l["fbc"] != nil || l["client_ip"] != nil {
		t.Errorf("linked across sites: %v", l)
	}
}

func TestFormToken(t *testing.T) {
	tr := newTracker(t)
	browser := map[string]string{"Origin": origin}
	_, ans := tr.collect("dent", "/", nil, nil, nil)
	tok := ans.FormToken

	tr.clock.Add(4200 * time.Millisecond)
	_, l := tr.postLead(`{"site":"dent","event_id":"e1","form_token":"`+tok+`"}`, browser, nil)
	if tc := tokenOf(l); tc["checked"] != true || tc["valid"] != true || tc["server_fill_ms"] != 4200.0 {
		t.Errorf("genuine token: %v", tc)
	}
	// The same post again (a retry) is the same lead, not a replay.
	_, again := tr.postLead(`{"site":"dent","event_id":"e1","form_token":"`+tok+`"}`, browser, nil)
	if again["id"] != l["id"] {
		t.Errorf("retry made a new lead")
	}
	// Another lead with the same token is a replay.
	_, l = tr.postLead(`{"site":"dent","event_id":"e2","form_token":"`+tok+`"}`, browser, nil)
	if tc := tokenOf(l); tc["valid"] != false || tc["problem"] != "replayed" {
		t.Errorf("replay: %v", tc)
	}
	// Forged: a changed time, a token of another site, junk.
	p := strings.Split(tok, ".")
	p[2] = strconv.FormatInt(tr.clock.Now().Add(-time.Minute).UnixMilli(), 10)
	_, strictAns := tr.collect("strict", "/", nil, nil, nil)
	for i, f := range []string{strings.Join(p, "."), strictAns.FormToken, "t1.x.1.2.3", "garbage"} {
		_, l = tr.postLead(`{"site":"dent","event_id":"f`+strconv.Itoa(i)+`","form_token":"`+f+`"}`, browser, nil)
		if tc := tokenOf(l); tc["problem"] != "forged" || tc["valid"] != false {
			t.Errorf("forged token %q: %v", f, tc)
		}
	}
	// Expired: more than a day old.
	_, ans = tr.collect("dent", "/", nil, nil, nil)
	tr.clock.Add(25 * time.Hour)
	_, l = tr.postLead(`{"site":"dent","event_id":"x1","form_token":"`+ans.FormToken+`"}`, browser, nil)
	if tc := tokenOf(l); tc["problem"] != "expired" || tc["server_fill_ms"] != float64(25*time.Hour/time.Millisecond) {
		t.Errorf("expired token: %v", tc)
	}
	// No token: nothing checked.
	_, l = tr.postLead(`{"site":"dent","event_id":"n1"}`, browser, nil)
	if tc := tokenOf(l); tc != nil {
		t.Errorf("no token: %v", tc)
	}
	// A plain HTML form post carries it too, with the visitor's cookies.
	rep, ans := tr.collect("dent", "/", nil, nil, nil)
	tr.clock.Add(9 * time.Second)
	form := url.Values{"site": {"dent"}, "event_id": {"form1"}, "form_token": {ans.FormToken}, "email": {"f@example.com"}}
	if r := tr.req("POST", "/v1/leads", "application/x-www-form-urlencoded", form.Encode(), browser, jar(nil, rep)); r.code != 202 {
		t.Fatalf("form post: %d %s", r.code, r.body)
	}
	lead, err := tr.db.LeadByEventID(context.Background(), "dent", "form1")
	if err != nil || lead.VisitorID != rep.cookies["cleanads_vid"].Value || lead.FBP != rep.cookies["_fbp"].Value {
		t.Errorf("form lead: %+v %v", lead, err)
	}
	h, _ := tr.db.HistoryByLead(context.Background(), lead.ID)
	if tc, _ := h[0].Data["form_token"].(map[string]any); tc["valid"] != true || tc["server_fill_ms"] != 9000.0 {
		t.Errorf("form post token: %v", h[0].Data)
	}
}

// Nodes without secret_key share the key kept in the database; a node with
// its own secret_key does not accept their tokens.
func TestFormTokenKeyShared(t *testing.T) {
	db := storetest.New(t)
	ctx := context.Background()
	db.SiteUpsert(ctx, &model.Site{ID: "dent", APIKeyHash: model.HashAPIKey(apiKey),
		Settings: model.SiteSettings{Origins: []string{origin}, Country: "TR"}}, time.Now())
	node := func(secret string) *tracker {
		svc := app.New(app.Options{Store: db, SecretKey: secret})
		srv := httptest.NewServer(web.New(web.Options{App: svc, Store: db}).Handler())
		t.Cleanup(srv.Close)
		return &tracker{t: t, db: db, srv: srv}
	}
	a, b, c := node(""), node(""), node("a-configured-secret-key-of-some-length")
	_, ans := a.collect("dent", "/", nil, nil, nil)
	_, l := b.postLead(`{"site":"dent","event_id":"k1","form_token":"`+ans.FormToken+`"}`, map[string]string{"Origin": origin}, nil)
	if tc := tokenOf(l); tc["valid"] != true {
		t.Errorf("token of node a on node b: %v", tc)
	}
	_, ans = a.collect("dent", "/", nil, nil, nil)
	_, l = c.postLead(`{"site":"dent","event_id":"k2","form_token":"`+ans.FormToken+`"}`, map[string]string{"Origin": origin}, nil)
	if tc := tokenOf(l); tc["problem"] != "forged" {
		t.Errorf("token of the database key on a secret_key node: %v", tc)
	}
}

func TestTrackerScript(t *testing.T) {
	tr := newTracker(t)
	for _, c := range []struct{ path, cache string }{
		{"/t.js", "public, max-age=300"},
		{"/t.v1.js", "public, max-age=31536000, immutable"},
		{"/t.v2.js", "public, max-age=31536000, immutable"},
	} {
		rep := tr.req("GET", c.path, "", "", nil, nil)
		if rep.code != 200 || rep.hdr.Get("Cache-Control") != c.cache || !strings.HasPrefix(rep.hdr.Get("Content-Type"), "text/javascript") ||
			rep.hdr.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(rep.body, "cleanads") {
			t.Errorf("%s: %d %v", c.path, rep.code, rep.hdr)
		}
		gz := tr.req("GET", c.path, "", "", map[string]string{"Accept-Encoding": "gzip"}, nil)
		zr, err := gzip.NewReader(strings.NewReader(gz.body))
		if err != nil || gz.hdr.Get("Content-Encoding") != "gzip" {
			t.Fatalf("%s gzipped: %v %v", c.path, err, gz.hdr)
		}
		plain, _ := io.ReadAll(zr)
		if string(plain) != rep.body {
			t.Errorf("%s: the gzipped copy differs", c.path)
		}
		if nm := tr.req("GET", c.path, "", "", map[string]string{"If-None-Match": rep.hdr.Get("ETag")}, nil); nm.code != 304 {
			t.Errorf("%s revalidation: %d", c.path, nm.code)
		}
	}
}

// BenchmarkCollect measures a whole visit over HTTP on SQLite: a returning
// visitor's page view stored with its PageView row and cookies set.
func BenchmarkCollect(b *testing.B) {
	tr := newTracker(b)
	rep, _ := tr.collect("dent", "/?fbclid=BENCH", nil, nil, nil)
	cookies := jar(nil, rep)
	b.ResetTimer()
	for b.Loop() {
		tr.collect("dent", "/page", nil, cookies, nil)
	}
}

// BenchmarkLeadWithToken measures a browser lead with a form token: token
// check, visitor link and insert in one transaction.
func BenchmarkLeadWithToken(b *testing.B) {
	tr := newTracker(b)
	rep, ans := tr.collect("dent", "/?fbclid=BENCH", nil, nil, nil)
	cookies := jar(nil, rep)
	hdr := map[string]string{"Origin": origin}
	i := 0
	b.ResetTimer()
	for b.Loop() {
		i++
		r := tr.req("POST", "/v1/leads", "application/json",
			`{"site":"dent","email":"b@example.com","event_id":"b`+strconv.Itoa(i)+`","form_token":"`+ans.FormToken+`"}`, hdr, cookies)
		if r.code != 202 {
			b.Fatal(r.body)
		}
	}
}

// A lead from t.js without a plugin's word stays open for a later attempt:
// its events wait, a different post with its event_id replaces it within
// the window, a retry of the same post changes nothing, and after the
// window the lead is final. A confirmed lead and the site server's lead are
// final at once.
func TestLeadAttempts(t *testing.T) {
	tr := newTracker(t)
	ctx := context.Background()
	browser := map[string]string{"Origin": origin, "User-Agent": "Mozilla/5.0 (tracker test)"}
	post := func(body string, hdr map[string]string) *model.Lead {
		t.Helper()
		rep := tr.req("POST", "/v1/leads", "text/plain", body, hdr, nil)
		if rep.code != 202 {
			t.Fatalf("%d %s", rep.code, rep.body)
		}
		var out struct{ ID string }
		json.Unmarshal([]byte(rep.body), &out)
		l, err := tr.db.LeadByID(ctx, model.LeadID(out.ID))
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	held := func(l *model.Lead, until time.Time) {
		t.Helper()
		ds, err := tr.db.DeliveriesByLead(ctx, l.ID)
		if err != nil || len(ds) == 0 {
			t.Fatalf("no events for %+v: %v", l, err)
		}
		for _, d := range ds {
			if !d.NextAt.Equal(until) || d.State != model.DeliveryPending {
				t.Errorf("%s due %v (%s), want %v", d.EventName, d.NextAt, d.State, until)
			}
		}
	}
	emails := map[string]string{"e1": "ayse.yilmaz@gmail.com", "e2": "mehmet.kaya@gmail.com", "e3": "zeynep.demir@gmail.com"}
	attempt := func(id, phone string, fill int, extra string) string {
		return fmt.Sprintf(`{"site":"dent","event_id":%q,"email":%q,"name":"Ayşe Yılmaz","phone":%q,`+
			`"message":%q,"fill_ms":%d%s}`, id, emails[id], phone, implantMessage, fill, extra)
	}

	// Refused by the site's own server: a number too short (junk here, so
	// no events).
	first := post(attempt("e1", "0532 412 87", 6000, ""), browser)
	tr.clock.Add(time.Minute)
	second := post(attempt("e1", "0532 412 87 19", 11000, ""), browser)
	if second.ID != first.ID || second.Phone != "0532 412 87 19" || *second.FillMS != 11000 || second.Verdict != model.VerdictClean ||
		!second.ReceivedAt.Equal(first.ReceivedAt) || !second.SubmittedAt.Equal(tr.clock.Now()) {
		t.Errorf("after the correction: %+v (first %+v)", second, first)
	}
	held(second, tr.clock.Now().Add(app.AttemptWindow))
	h, _ := tr.db.HistoryByLead(ctx, first.ID)
	if len(h) != 2 || h[1].Data["changed"] != "phone, fill_ms" || h[1].Data["was"] != string(first.Verdict) {
		t.Errorf("history: %+v", h)
	}
	// The same post again (a keepalive retry) changes nothing.
	post(attempt("e1", "0532 412 87 19", 11000, ""), browser)
	if h, _ := tr.db.HistoryByLead(ctx, first.ID); len(h) != 2 {
		t.Errorf("a retry was taken for an attempt: %+v", h)
	}
	// After the window the lead is final: a later post is a repeat.
	tr.clock.Add(app.AttemptWindow + time.Second)
	late := post(attempt("e1", "0533 000 00 00", 30000, ""), browser)
	if late.Phone != "0532 412 87 19" {
		t.Errorf("a post after the window replaced the lead: %+v", late)
	}

	// The plugin confirmed it: final at once.
	now := tr.clock.Now()
	conf := post(attempt("e2", "0542 318 77 18", 9000, `,"confirmed":true`), browser)
	held(conf, now)
	if again := post(attempt("e2", "0542 318 77 17", 9000, `,"confirmed":true`), browser); again.Phone != "0542 318 77 18" {
		t.Errorf("a confirmed lead was replaced: %+v", again)
	}
	// The site's own server: final at once.
	srv := post(attempt("e3", "0552 218 67 16", 9000, ""), map[string]string{"Authorization": "Bearer " + apiKey})
	held(srv, now)
}

// t.js v2 says how many lead forms the page has (lf); the server may
// ignore it but must not refuse it.
func TestCollectLeadForms(t *testing.T) {
	tr := newTracker(t)
	h := map[string]string{"Origin": origin}
	if rep := tr.req("POST", "/v1/collect?site=dent", "text/plain", `{"url":"`+origin+`/","lf":2}`, h, nil); rep.code != 200 {
		t.Errorf("lf refused: %d %s", rep.code, rep.body)
	}
	if rep := tr.req("POST", "/v1/collect?site=dent", "text/plain", `{"url":"`+origin+`/","lf":"two"}`, h, nil); rep.code != 400 ||
		!strings.Contains(rep.body, "lf") {
		t.Errorf("lf not a number: %d %s", rep.code, rep.body)
	}
}
