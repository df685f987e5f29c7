package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/auth"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/notify"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/web"
)

const (
	adminEmail = "owner@istanbuldis.example"
	adminPass  = "correct horse battery"
	dentToken  = "EAAB-secret-token-9f8e7d"
)

// adminEnv is a real server on a real database with one admin user and
// leads judged by the real rules.
type adminEnv struct {
	t     *testing.T
	db    *store.DB
	srv   *httptest.Server
	svc   *app.Service
	leads map[string]*model.Lead // by role: clean, review, junk, xss
	dead  *model.Delivery
	graph *graphtest.Server
}

// newAdminEnv starts the env; opts change the web server's options (its
// platforms, ...).
func newAdminEnv(t *testing.T, opts ...func(*web.Options)) *adminEnv {
	t.Helper()
	db := storetest.SQLite(t)
	ctx := context.Background()
	now := time.Now()
	sites := []*model.Site{
		{ID: "dent", Name: "Istanbul Dental", APIKeyHash: model.HashAPIKey(apiKey), AccessToken: dentToken,
			Settings: model.SiteSettings{Origins: []string{origin}, Country: "TR",
				Meta: model.MetaSettings{PixelID: "123456789012345", Mode: model.ModeDryRun,
					Stages: map[string]model.StageEvent{"meeting": {Event: "Schedule"}, "won": {Event: "Purchase", Value: 5000, Currency: "TRY"}}}}},
		{ID: "kitchen", Name: "Ankara Kitchens", Pinned: true, APIKeyHash: model.HashAPIKey("kitchen-key-0123456789abcdef"),
			Settings: model.SiteSettings{Origins: []string{"https://kitchen.example"}, Country: "TR",
				Meta: model.MetaSettings{Mode: model.ModeDryRun}}},
	}
	for _, s := range sites {
		if err := db.SiteUpsert(ctx, s, now); err != nil {
			t.Fatal(err)
		}
	}
	graph := graphtest.New(t)
	graph.SetTokens(dentToken)
	svc := app.New(app.Options{Store: db, Graph: capi.NewClient(capi.ClientOptions{BaseURL: graph.URL, HTTP: graph.Client()})})
	users := auth.New(auth.Options{Store: db, Cost: bcrypt.MinCost})
	if _, err := users.AddUser(ctx, adminEmail, adminPass); err != nil {
		t.Fatal(err)
	}
	wo := web.Options{App: svc, Store: db, Auth: users, Location: time.UTC,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Notifier: notify.New(notify.Options{Store: db})}
	for _, o := range opts {
		o(&wo)
	}
	h := web.New(wo).Handler()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	e := &adminEnv{t: t, db: db, srv: srv, svc: svc, leads: map[string]*model.Lead{}, graph: graph}
	site, _ := db.SiteByID(ctx, "dent")
	fill := func(ms int64) *int64 { return &ms }
	for role, in := range map[string]*app.LeadInput{
		"clean": {Email: "ayse.yilmaz@gmail.com", Phone: "0532 412 87 19", Name: "Ayşe Yılmaz",
			Message: "Merhaba, implant tedavisi için randevu almak istiyorum. Hafta içi öğleden sonra uygundur.",
			FillMS:  fill(24000), PageURL: origin + "/implant?utm_campaign=implant-spring", FBClid: "IwAR0abc",
			FBC: fmt.Sprintf("fb.1.%d.IwAR0abc", now.Add(-10*time.Minute).UnixMilli()), FBP: "fb.1.1700000000000.123456789",
			ClientIP: "85.105.1.2", UserAgent: "Mozilla/5.0 (iPhone)"},
		"review": {Phone: "0533 218 44 90", Name: "Mehmet Demir", Message: "fiyat?", FillMS: fill(9000),
			PageURL: origin + "/", ClientIP: "85.105.1.3", UserAgent: "Mozilla/5.0"},
		"junk": {Name: "asdf", Email: "test@mailinator.com", Phone: "555 555 55 55", Message: "test", FillMS: fill(400),
			ClientIP: "85.105.1.4", UserAgent: "Mozilla/5.0"},
		"xss": {Name: "<b>Bold</b> Hacker", Email: "x@example.com", Phone: "0541 234 56 78",
			Message: "<script>alert('xss')</script> randevu istiyorum", FillMS: fill(15000), ClientIP: "85.105.1.5", UserAgent: "Mozilla/5.0"},
	} {
		l, _, err := svc.Submit(ctx, site, in)
		if err != nil {
			t.Fatalf("submit %s: %v", role, err)
		}
		e.leads[role] = l
	}
	if v := e.leads["review"].Verdict; v != model.VerdictReview {
		t.Fatalf("the review lead was judged %s", v)
	}
	if v := e.leads["junk"].Verdict; v != model.VerdictJunk {
		t.Fatalf("the junk lead was judged %s", v)
	}
	// A dead letter: Meta refused the event.
	e.dead = &model.Delivery{ID: "dl_dead1", SiteID: "dent", LeadID: e.leads["clean"].ID, Kind: model.KindLead,
		EventName: "Lead", EventID: "ev-dead-1", PixelID: "123456789012345",
		Payload: json.RawMessage(`{"event_name":"Lead","event_id":"ev-dead-1","user_data":{"em":["ab12"],"client_ip_address":"85.105.1.2"}}`),
		State:   model.DeliveryDead, Attempts: 3, NextAt: now, DeadlineAt: now.Add(6 * 24 * time.Hour),
		LastError: "Invalid parameter: event_source_url is required (subcode 2804019)",
		Response:  json.RawMessage(`{"error":{"message":"Invalid parameter","error_subcode":2804019}}`),
		Mode:      "live", CreatedAt: now.Add(-time.Hour), UpdatedAt: now}
	if _, err := db.DeliveryInsert(ctx, e.dead); err != nil {
		t.Fatal(err)
	}
	return e
}

// client is a browser: it keeps cookies and does not follow redirects.
type client struct {
	e    *adminEnv
	c    *http.Client
	csrf string
	hdr  map[string]string
}

func (e *adminEnv) client() *client {
	jar, _ := cookiejar.New(nil)
	return &client{e: e, hdr: map[string]string{}, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	code int
	hdr  http.Header
	body string
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (c *client) do(method, path string, form url.Values) page {
	c.e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, c.e.srv.URL+path, body)
	if err != nil {
		c.e.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range c.hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.c.Do(req)
	if err != nil {
		c.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	p := page{code: resp.StatusCode, hdr: resp.Header, body: string(b)}
	if m := csrfField.FindStringSubmatch(p.body); m != nil {
		c.csrf = m[1]
	}
	return p
}

func (c *client) get(path string) page { return c.do("GET", path, nil) }

// post sends a form with the session's CSRF token.
func (c *client) post(path string, form url.Values) page {
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", c.csrf)
	}
	return c.do("POST", path, form)
}

func (e *adminEnv) login() *client {
	e.t.Helper()
	c := e.client()
	p := c.do("POST", "/admin/login", url.Values{"email": {adminEmail}, "password": {adminPass}})
	if p.code != http.StatusSeeOther || p.hdr.Get("Location") != "/admin/" {
		e.t.Fatalf("login: %d %v %s", p.code, p.hdr, p.body)
	}
	c.get("/admin/") // picks up the CSRF token
	return c
}

func TestAdminNeedsLogin(t *testing.T) {
	e := newAdminEnv(t)
	c := e.client()
	for _, path := range []string{"/admin/", "/admin/leads/" + string(e.leads["clean"].ID), "/admin/deliveries",
		"/admin/sites", "/admin/sites/dent", "/admin/dashboard", "/admin/nonexistent"} {
		p := c.get(path)
		loc := p.hdr.Get("Location")
		if p.code != http.StatusSeeOther || !strings.HasPrefix(loc, "/admin/login") {
			t.Errorf("GET %s without login: %d %s", path, p.code, loc)
		}
		if path != "/admin/" && !strings.Contains(loc, url.QueryEscape(path)) {
			t.Errorf("GET %s: the login does not lead back: %s", path, loc)
		}
	}
	// A site's API key opens nothing here.
	c.hdr["Authorization"] = "Bearer " + apiKey
	if p := c.get("/admin/"); p.code != http.StatusSeeOther {
		t.Errorf("API key opened the inbox: %d", p.code)
	}
	for _, path := range []string{"/admin/deliveries/" + e.dead.ID + "/replay", "/admin/sites/dent", "/admin/leads/" + string(e.leads["review"].ID) + "/evidence"} {
		if p := c.post(path, url.Values{"type": {"customer"}, "mode": {"live"}}); p.code != http.StatusSeeOther ||
			!strings.HasPrefix(p.hdr.Get("Location"), "/admin/login") {
			t.Errorf("POST %s without login: %d", path, p.code)
		}
	}
	if d, _ := e.db.DeliveryByID(context.Background(), e.dead.ID); d.State != model.DeliveryDead {
		t.Errorf("a POST without login changed a delivery: %s", d.State)
	}
}

func TestAdminLoginLogout(t *testing.T) {
	e := newAdminEnv(t)
	c := e.client()
	p := c.get("/admin/login")
	if p.code != 200 || !strings.Contains(p.body, `type="password"`) {
		t.Fatalf("login page: %d", p.code)
	}
	p = c.do("POST", "/admin/login", url.Values{"email": {adminEmail}, "password": {"wrong password"}})
	if p.code != http.StatusUnauthorized || !strings.Contains(p.body, "Wrong e-mail or password") || !strings.Contains(p.body, adminEmail) {
		t.Errorf("wrong password: %d", p.code)
	}
	// The destination after login is kept, but only on this server.
	for next, want := range map[string]string{"/admin/deliveries?state=dead": "/admin/deliveries?state=dead",
		"//evil.example/admin/": "/admin/", "https://evil.example/": "/admin/", "/admin/\\evil": "/admin/"} {
		c := e.client()
		p := c.do("POST", "/admin/login", url.Values{"email": {adminEmail}, "password": {adminPass}, "next": {next}})
		if p.code != http.StatusSeeOther || p.hdr.Get("Location") != want {
			t.Errorf("next=%q: %d %q", next, p.code, p.hdr.Get("Location"))
		}
	}
	p = c.do("POST", "/admin/login", url.Values{"email": {strings.ToUpper(adminEmail)}, "password": {adminPass}})
	if p.code != http.StatusSeeOther {
		t.Fatalf("login: %d %s", p.code, p.body)
	}
	var sess *http.Cookie
	for _, ck := range p.hdr.Values("Set-Cookie") {
		if strings.HasPrefix(ck, "cleanads_session=") {
			sess, _ = http.ParseSetCookie(ck)
		}
	}
	if sess == nil || !sess.HttpOnly || sess.SameSite != http.SameSiteLaxMode || sess.Path != "/admin" || sess.Secure {
		t.Errorf("session cookie: %+v", sess)
	}
	if p := c.get("/admin/"); p.code != 200 || !strings.Contains(p.body, "Ayşe Yılmaz") {
		t.Fatalf("inbox after login: %d", p.code)
	}
	if p := c.get("/admin/login"); p.code != http.StatusSeeOther {
		t.Errorf("login page when logged in: %d", p.code)
	}
	if p := c.post("/admin/logout", nil); p.code != http.StatusSeeOther || p.hdr.Get("Location") != "/admin/login" {
		t.Errorf("logout: %d", p.code)
	}
	// The old cookie is dead on the server, not only in this browser.
	c2 := e.client()
	c2.hdr["Cookie"] = "cleanads_session=" + sess.Value
	if p := c2.get("/admin/"); p.code != http.StatusSeeOther {
		t.Errorf("session works after logout: %d", p.code)
	}
}

func TestAdminSecureCookieBehindHTTPSProxy(t *testing.T) {
	e := newAdminEnv(t)
	c := e.client()
	c.hdr["X-Forwarded-Proto"] = "https"
	p := c.do("POST", "/admin/login", url.Values{"email": {adminEmail}, "password": {adminPass}})
	ck, err := http.ParseSetCookie(p.hdr.Get("Set-Cookie"))
	if err != nil || !ck.Secure {
		t.Errorf("cookie over https: %v %v", ck, err)
	}
}

func TestAdminLoginThrottle(t *testing.T) {
	e := newAdminEnv(t)
	c := e.client()
	for range auth.MaxFailsPerKey {
		c.do("POST", "/admin/login", url.Values{"email": {adminEmail}, "password": {"guess"}})
	}
	p := c.do("POST", "/admin/login", url.Values{"email": {adminEmail}, "password": {adminPass}})
	if p.code != http.StatusTooManyRequests || !strings.Contains(p.body, "15 minutes") || p.hdr.Get("Retry-After") == "" {
		t.Errorf("after %d failures: %d", auth.MaxFailsPerKey, p.code)
	}
}

func TestAdminCSRF(t *testing.T) {
	e := newAdminEnv(t)
	c := e.login()
	replay := "/admin/deliveries/" + e.dead.ID + "/replay"
	for name, form := range map[string]url.Values{"no token": {"csrf": {""}}, "wrong token": {"csrf": {"forged"}}} {
		if p := c.post(replay, form); p.code != http.StatusForbidden || !strings.Contains(p.body, "expired") {
			t.Errorf("%s: %d", name, p.code)
		}
	}
	// Another site's page posting with the browser's cookie.
	c.hdr["Origin"] = "https://evil.example"
	c.hdr["Sec-Fetch-Site"] = "cross-site"
	if p := c.post(replay, nil); p.code != http.StatusForbidden {
		t.Errorf("cross-site post: %d", p.code)
	}
	if d, _ := e.db.DeliveryByID(context.Background(), e.dead.ID); d.State != model.DeliveryDead {
		t.Errorf("a forged POST replayed the delivery")
	}
}

func TestAdminHeaders(t *testing.T) {
	e := newAdminEnv(t)
	c := e.login()
	for _, path := range []string{"/admin/", "/admin/sites/dent", "/admin/login?x"} {
		p := c.get(path)
		h := p.hdr
		csp := h.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") ||
			!strings.Contains(csp, "frame-ancestors 'none'") || h.Get("X-Content-Type-Options") != "nosniff" ||
			h.Get("Referrer-Policy") == "" || h.Get("X-Frame-Options") != "DENY" || h.Get("Cache-Control") != "no-store" {
			t.Errorf("%s headers: %v", path, h)
		}
		if regexp.MustCompile(`<script>|<script [^>]*>[^<]`).MatchString(p.body) || strings.Contains(p.body, " style=") {
			t.Errorf("%s has inline script or style", path)
		}
	}
}

// TestAdminRendersEveryPage renders every page in both languages and checks
// that each template was drawn, with no formatting mistakes.
func TestAdminRendersEveryPage(t *testing.T) {
	e := newAdminEnv(t)
	c := e.login()
	for _, lang := range []string{"en", "tr"} {
		t.Run(lang, func(t *testing.T) {
			c.hdr["Accept-Language"] = lang + ";q=0.9"
			seen := map[string]bool{}
			check := func(path string, wantCode int, tmpl, want string) {
				t.Helper()
				var p page
				if path == "login" {
					anon := e.client()
					anon.hdr["Accept-Language"] = lang
					p, path = anon.get("/admin/login"), "/admin/login"
				} else {
					p = c.get(path)
				}
				if p.code != wantCode {
					t.Errorf("%s: %d, want %d", path, p.code, wantCode)
				}
				if !strings.Contains(p.body, `<html lang="`+lang+`">`) || !strings.Contains(p.body, want) {
					t.Errorf("%s: not in %s or lacks %q", path, lang, want)
				}
				if i := strings.Index(p.body, "%!"); i >= 0 {
					t.Errorf("%s: formatting mistake: %s", path, p.body[i:min(len(p.body), i+60)])
				}
				seen[tmpl] = true
			}
			T := func(en, tr string) string {
				if lang == "tr" {
					return tr
				}
				return en
			}
			check("login", 200, "login", T("Log in", "Giriş"))
			check("/admin/", 200, "inbox", T("Inbox", "Gelen kutusu"))
			check("/admin/?verdict=junk&site=dent&q=asdf", 200, "inbox", "asdf")
			check("/admin/?q=nobody-matches", 200, "inbox", T("No lead matches", "Bu süzgeçlere uyan"))
			for role, l := range e.leads {
				check("/admin/leads/"+string(l.ID), 200, "lead", T("Story", "Geçmiş"))
				_ = role
			}
			check("/admin/leads/"+string(e.leads["review"].ID), 200, "lead", T("left to confirm", "onay için"))
			check("/admin/leads/"+string(e.leads["clean"].ID), 200, "lead", "implant-spring")
			check("/admin/deliveries", 200, "deliveries", T("Deliveries", "Gönderimler"))
			check("/admin/deliveries?state=dead", 200, "deliveries", "subcode 2804019")
			check("/admin/dashboard?site=dent", 200, "dashboard", "<svg")
			check("/admin/dashboard?site=dent", 200, "dashboard", T("Campaign report and funnel", "Kampanya raporu ve huni"))
			check("/admin/report?site=dent", 200, "report", T("Which ads bring real customers", "Hangi reklamlar gerçek müşteri getiriyor"))
			check("/admin/report?site=dent&days=7", 200, "report", `<svg class="chart funnel"`)
			check("/admin/report?site=kitchen", 200, "report", T("No leads in this period.", "Bu dönemde talep yok."))
			check("/admin/report?site=dent&from=2026-12-05&to=2026-12-01", 200, "report", T("The last day is before the first.", "Son gün ilk günden önce."))
			check("/admin/sites", 200, "sites", "Ankara Kitchens")
			check("/admin/sites/dent", 200, "site", `t.js&#34; data-site=&#34;dent&#34;`)
			check("/admin/sites/kitchen", 200, "site", T("config file", "yapılandırma dosyası"))
			check("/admin/notifications", 200, "notify", T("Mail server (SMTP)", "Posta sunucusu (SMTP)"))
			check("/admin/sites/dent/readiness", 200, "readiness", T("What Meta asks", "istedikleri"))
			check("/admin/people", 200, "people", T("Add a user", "Kullanıcı ekle"))
			check("/admin/import", 200, "import", T("Import stages from a CSV", "CSV dosyasından aşama içe aktar"))
			check("/admin/password?token=nope", 404, "password", T("This link is not valid", "Bu bağlantı geçerli değil"))
			check("/admin/leads/ld_nope", 404, "error", T("does not exist", "Bu sayfa yok"))
			check("/admin/deliveries?state=bogus", 400, "error", "bogus")
			for _, tmpl := range web.AdminPages() {
				if !seen[tmpl] {
					t.Errorf("template %s was never rendered", tmpl)
				}
			}
		})
	}
}

// TestAdminEscapes: what a visitor typed is shown as text, never run.
func TestAdminEscapes(t *testing.T) {
	e := newAdminEnv(t)
	c := e.login()
	for _, path := range []string{"/admin/leads/" + string(e.leads["xss"].ID), "/admin/", "/admin/?q=" + url.QueryEscape("<script>")} {
		p := c.get(path)
		if strings.Contains(p.body, "<script>alert") || strings.Contains(p.body, "<b>Bold</b>") {
			t.Errorf("%s: user input is not escaped", path)
		}
	}
	p := c.get("/admin/leads/" + string(e.leads["xss"].ID))
	if !strings.Contains(p.body, "&lt;script&gt;alert(&#39;xss&#39;)&lt;/script&gt;") || !strings.Contains(p.body, "&lt;b&gt;Bold&lt;/b&gt; Hacker") {
		t.Errorf("the message is not shown as text")
	}
}

func TestAdminInboxFilters(t *testing.T) {
	e := newAdminEnv(t)
	c := e.login()
	cases := []struct {
		query     string
		want, not []string
	}{
		{"verdict=junk", []string{"asdf"}, []string{"Ayşe", "Mehmet"}},
		{"verdict=review", []string{"Mehmet Demir"}, []string{"asdf", "Ayşe"}},
		{"q=ayse.yilmaz", []string{"Ayşe Yılmaz"}, []string{"Mehmet"}},
		{"q=MEHMET", []string{"Mehmet Demir"}, []string{"Ayşe"}},
		{"q=" + url.QueryEscape("0533 218 44"), []string{"Mehmet Demir"}, []string{"Ayşe"}},
		{"q=" + url.QueryEscape("+90 533 218"), []string{"Mehmet Demir"}, []string{"Ayşe"}},
		// A whole e-mail or phone finds the person by the keys intake gave
		// the leads, however it is written.
		{"q=AYSE.YILMAZ@GMAIL.COM", []string{"Ayşe Yılmaz"}, []string{"Mehmet"}},
		{"q=" + url.QueryEscape("+90 533 218 44 90"), []string{"Mehmet Demir"}, []string{"Ayşe"}},
		{"q=905332184490", []string{"Mehmet Demir"}, []string{"Ayşe"}},
		{"q=100%25", nil, []string{"Ayşe", "Mehmet", "asdf"}},
		{"site=kitchen", []string{"No lead matches"}, []string{"Ayşe"}},
	}
	for _, tc := range cases {
		p := c.get("/admin/?" + tc.query)
		for _, w := range tc.want {
			if !strings.Contains(p.body, w) {
				t.Errorf("%s: lacks %q", tc.query, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(p.body, n) {
				t.Errorf("%s: shows %q", tc.query, n)
			}
		}
	}
	// Newest first, and the top reason in words.
	p := c.get("/admin/?verdict=junk")
	if !strings.Contains(p.body, "badge junk") {
		t.Errorf("no junk badge")
	}
	p = c.get("/admin/")
	if strings.Index(p.body, "Ayşe") < strings.Index(p.body, "Bold") && e.leads["xss"].ReceivedAt.After(e.leads["clean"].ReceivedAt) {
		t.Errorf("not newest first")
	}
}

func TestAdminInboxPages(t *testing.T) {
	e := newAdminEnv(t)
	ctx := context.Background()
	site, _ := e.db.SiteByID(ctx, "dent")
	for i := range 52 {
		if _, _, err := e.svc.Submit(ctx, site, &app.LeadInput{Name: fmt.Sprintf("Paged Person %02d", i), Phone: fmt.Sprintf("0532 400 10 %02d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	c := e.login()
	p := c.get("/admin/?q=Paged")
	more := regexp.MustCompile(`href="(/admin/\?[^"]*before=[^"]*)"`).FindStringSubmatch(p.body)
	if more == nil || strings.Count(p.body, "Paged Person") != 50 {
		t.Fatalf("first page: %d leads, more=%v", strings.Count(p.body, "Paged Person"), more)
	}
	p = c.get(strings.ReplaceAll(more[1], "&amp;", "&"))
	if n := strings.Count(p.body, "Paged Person"); n != 2 || !strings.Contains(p.body, "Paged Person 00") {
		t.Errorf("second page: %d leads", n)
	}
}

func TestAdminOwnerWord(t *testing.T) {
	e := newAdminEnv(t)
	c := e.login()
	review := "/admin/leads/" + string(e.leads["review"].ID)
	p := c.get(review)
	if !strings.Contains(p.body, "Sends QualifiedLead to Meta") || !strings.Contains(p.body, "Dry run") {
		t.Errorf("the action does not say what it will send")
	}
	p = c.post(review+"/evidence", url.Values{"type": {"customer"}})
	if p.code != http.StatusSeeOther {
		t.Fatalf("real customer: %d %s", p.code, p.body)
	}
	p = c.get(p.hdr.Get("Location"))
	if !strings.Contains(p.body, "Marked as a real customer") || !strings.Contains(p.body, "Event QualifiedLead for Meta") ||
		!strings.Contains(html.UnescapeString(p.body), `"action_source": "system_generated"`) {
		t.Errorf("the qualified event is not in the story")
	}
	l, _ := e.db.LeadByID(context.Background(), e.leads["review"].ID)
	if l.Verdict != model.VerdictClean || l.DecidedBy != model.DecidedByOwner {
		t.Errorf("lead after the owner's word: %+v", l.Decision)
	}
	// Junk cancels what was not sent.
	p = c.post(review+"/evidence", url.Values{"type": {"junk"}})
	if p.code != http.StatusSeeOther {
		t.Fatalf("junk: %d", p.code)
	}
	dels, _ := e.db.DeliveriesByLead(context.Background(), l.ID)
	for _, d := range dels {
		if d.State == model.DeliveryPending {
			t.Errorf("event %s still pending after junk", d.Kind)
		}
	}
	if p := c.post(review+"/evidence", url.Values{"type": {"maybe"}}); p.code != http.StatusBadRequest {
		t.Errorf("unknown word: %d", p.code)
	}
}

func TestAdminReplay(t *testing.T) {
	e := newAdminEnv(t)
	c := e.login()
	p := c.get("/admin/deliveries?state=dead")
	if !strings.Contains(p.body, "/admin/deliveries/"+e.dead.ID+"/replay") || !strings.Contains(p.body, "subcode 2804019") {
		t.Fatalf("dead letter not listed with Meta's message")
	}
	p = c.post("/admin/deliveries/"+e.dead.ID+"/replay", url.Values{"back": {"/admin/deliveries?state=dead"}})
	if p.code != http.StatusSeeOther || p.hdr.Get("Location") != "/admin/deliveries?state=dead&replayed=1" {
		t.Fatalf("replay: %d %v", p.code, p.hdr)
	}
	d, _ := e.db.DeliveryByID(context.Background(), e.dead.ID)
	if d.State != model.DeliveryPending || d.Attempts != 3 || !strings.HasPrefix(d.LastError, "replayed by u_") ||
		!strings.Contains(d.LastError, "subcode 2804019") {
		t.Errorf("after replay: %s %d %q", d.State, d.Attempts, d.LastError)
	}
	if p := c.post("/admin/deliveries/"+e.dead.ID+"/replay", nil); p.code != http.StatusConflict {
		t.Errorf("replaying a pending delivery: %d", p.code)
	}
	if p := c.post("/admin/deliveries/dl_nope/replay", nil); p.code != http.StatusNotFound {
		t.Errorf("replaying a missing delivery: %d", p.code)
	}
}

func TestAdminSites(t *testing.T) {
	e := newAdminEnv(t)
	c := e.login()
	ctx := context.Background()
	p := c.get("/admin/sites/dent")
	if strings.Contains(p.body, dentToken) || !strings.Contains(p.body, "••••••••8e7d") {
		t.Errorf("token not masked")
	}
	form := url.Values{"name": {"Istanbul Dental"}, "origins": {origin}, "country": {"TR"}, "consent": {"implied"},
		"pixel_id": {"123456789012345"}, "mode": {"test"}, "test_event_code": {""},
		"review_from": {"40"}, "junk_from": {"30"}}
	p = c.post("/admin/sites/dent", form)
	if p.code != http.StatusBadRequest || !strings.Contains(p.body, "test event code") || !strings.Contains(p.body, "junk_from") {
		t.Errorf("bad settings: %d", p.code)
	}
	if s, _ := e.db.SiteByID(ctx, "dent"); s.Settings.Meta.Mode != model.ModeDryRun {
		t.Errorf("a form with mistakes was saved: %s", s.Settings.Meta.Mode)
	}
	form.Set("test_event_code", "TEST123")
	form.Set("junk_from", "80")
	p = c.post("/admin/sites/dent", form)
	if p.code != http.StatusSeeOther {
		t.Fatalf("save: %d %s", p.code, p.body)
	}
	s, _ := e.db.SiteByID(ctx, "dent")
	if s.Settings.Meta.Mode != model.ModeTest || s.Settings.Meta.TestEventCode != "TEST123" || s.AccessToken != dentToken ||
		s.Settings.Meta.Stages["won"].Value != 5000 || s.Settings.Qualify.JunkFrom != 80 || s.APIKeyHash != model.HashAPIKey(apiKey) {
		t.Errorf("saved site: %+v", s)
	}
	// A pinned site is read-only here.
	if p := c.post("/admin/sites/kitchen", form); p.code != http.StatusConflict {
		t.Errorf("editing a pinned site: %d", p.code)
	}
	// A new site, with its API key shown once.
	p = c.post("/admin/sites", url.Values{"id": {"Bad Id"}, "name": {"X"}, "origins": {"https://x.example"}, "country": {"TR"}})
	if p.code != http.StatusBadRequest || !strings.Contains(p.body, `aria-invalid="true"`) {
		t.Errorf("bad new site: %d", p.code)
	}
	p = c.post("/admin/sites", url.Values{"id": {"clinic2"}, "name": {"Clinic Two"}, "origins": {"https://clinic2.example"}, "country": {"TR"}})
	key := regexp.MustCompile(`<code id="api-key" class="block">([^<]+)</code>`).FindStringSubmatch(p.body)
	if p.code != http.StatusCreated || key == nil {
		t.Fatalf("new site: %d", p.code)
	}
	if s, err := e.db.SiteByAPIKeyHash(ctx, model.HashAPIKey(key[1])); err != nil || s.ID != "clinic2" || s.Pinned {
		t.Errorf("new site's key: %v %v", s, err)
	}
	if p := c.post("/admin/sites", url.Values{"id": {"clinic2"}, "name": {"Again"}, "origins": {"https://clinic2.example"}, "country": {"TR"}}); p.code != http.StatusBadRequest || !strings.Contains(p.body, "exists already") {
		t.Errorf("duplicate site: %d", p.code)
	}
}

func TestAdminDashboard(t *testing.T) {
	e := newAdminEnv(t)
	ctx := context.Background()
	now := time.Now()
	for i, ud := range []string{`{"em":["a"],"ph":["b"],"fbc":"fb.1.1.x","client_ip_address":"1.2.3.4","client_user_agent":"UA"}`,
		`{"em":["a"],"fbp":"fb.1.2.y","client_ip_address":"1.2.3.4","client_user_agent":"UA"}`, `{"ph":["b"],"client_user_agent":"UA"}`} {
		d := &model.Delivery{ID: fmt.Sprintf("dl_sent%d", i), SiteID: "dent", Kind: model.KindQualified, EventName: "QualifiedLead",
			EventID: fmt.Sprintf("q%d", i), Payload: json.RawMessage(`{"user_data":` + ud + `}`), State: model.DeliverySent,
			NextAt: now, DeadlineAt: now.Add(time.Hour), CreatedAt: now, UpdatedAt: now}
		if _, err := e.db.DeliveryInsert(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	c := e.login()
	p := c.get("/admin/dashboard?site=dent")
	cov := regexp.MustCompile(`(?s)<th scope="row" title="(\w+)">.*?<td class="num">([^<]+)</td>`).FindAllStringSubmatch(p.body, -1)
	got := map[string]string{}
	for _, m := range cov {
		got[m[1]] = m[2]
	}
	want := map[string]string{"em": "67%", "ph": "67%", "fbc": "33%", "fbp": "33%", "client_ip_address": "67%", "client_user_agent": "100%"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("coverage of %s = %q, want %s", k, got[k], v)
		}
	}
	if !strings.Contains(p.body, `<rect class="junk"`) || !strings.Contains(p.body, `<rect class="clean"`) {
		t.Errorf("chart lacks bars")
	}
	// 4 leads, and the qualified events sent.
	if !regexp.MustCompile(`stat-n">4<`).MatchString(p.body) || !regexp.MustCompile(`stat-n">3</span><span class="stat-l">qualified`).MatchString(p.body) {
		t.Errorf("stats wrong")
	}
}

func TestAdminPausedAlertAndLanguage(t *testing.T) {
	e := newAdminEnv(t)
	if err := e.db.SitePause(context.Background(), "dent", "Invalid OAuth access token", time.Now()); err != nil {
		t.Fatal(err)
	}
	c := e.login()
	for _, path := range []string{"/admin/", "/admin/sites", "/admin/deliveries"} {
		if p := c.get(path); !strings.Contains(p.body, "paused for Istanbul Dental") || !strings.Contains(p.body, "Invalid OAuth") {
			t.Errorf("%s: no paused alert", path)
		}
	}
	// The user's setting wins over the browser's language.
	c.hdr["Accept-Language"] = "en-US,en;q=0.9"
	p := c.post("/admin/lang", url.Values{"lang": {"tr"}, "back": {"/admin/sites"}})
	if p.code != http.StatusSeeOther || p.hdr.Get("Location") != "/admin/sites" {
		t.Fatalf("set language: %d %v", p.code, p.hdr)
	}
	if p := c.get("/admin/sites"); !strings.Contains(p.body, `lang="tr"`) || !strings.Contains(p.body, "Siteler") {
		t.Errorf("language setting not applied")
	}
	if p := c.post("/admin/lang", url.Values{"lang": {"xx"}}); p.code != http.StatusBadRequest {
		t.Errorf("unknown language: %d", p.code)
	}
}

func TestAdminSendTestEvent(t *testing.T) {
	e := newAdminEnv(t)
	c := e.login()
	if p := c.get("/admin/sites/dent"); strings.Contains(p.body, `action="/admin/sites/dent/test"`) {
		t.Errorf("send-test offered without a test event code")
	}
	ctx := context.Background()
	site, _ := e.db.SiteByID(ctx, "dent")
	site.Settings.Meta.TestEventCode = "TEST4242"
	e.db.SiteUpsert(ctx, site, time.Now())
	if p := c.get("/admin/sites/dent"); !strings.Contains(p.body, `action="/admin/sites/dent/test"`) {
		t.Fatalf("no send-test button")
	}
	p := c.post("/admin/sites/dent/test", nil)
	body := html.UnescapeString(p.body)
	if p.code != 200 || !strings.Contains(body, "Meta received the test event") || !strings.Contains(body, `"events_received": 1`) ||
		!strings.Contains(body, `"event_name": "Lead"`) {
		t.Errorf("send-test: %d", p.code)
	}
	if got := e.graph.Events(); len(got) != 1 || got[0].TestEventCode != "TEST4242" {
		t.Errorf("Meta received %+v", got)
	}
	// Meta refuses the token: its message is shown, with what was sent.
	e.graph.SetTokens("another-token")
	p = c.post("/admin/sites/dent/test", nil)
	if p.code != http.StatusBadGateway || !strings.Contains(p.body, "Meta refused the test event") || !strings.Contains(p.body, "code 190") {
		t.Errorf("refused send-test: %d", p.code)
	}
}

func TestAdminAddStage(t *testing.T) {
	e := newAdminEnv(t)
	c := e.login()
	lead := "/admin/leads/" + string(e.leads["clean"].ID)
	p := c.get(lead)
	if !strings.Contains(p.body, "won → Purchase · 5000 TRY") {
		t.Fatalf("stage options not shown")
	}
	p = c.post(lead+"/stages", url.Values{"stage": {"won"}, "value": {"12500,50"}, "currency": {"try"}, "action_source": {"phone_call"}})
	if p.code != http.StatusSeeOther {
		t.Fatalf("add stage: %d %s", p.code, p.body)
	}
	p = c.get(p.hdr.Get("Location"))
	body := html.UnescapeString(p.body)
	if !strings.Contains(body, "The stage was added") || !strings.Contains(body, "Stage: won · 12500.5 TRY") ||
		!strings.Contains(body, "Event Purchase for Meta") || !strings.Contains(body, `"action_source": "phone_call"`) {
		t.Errorf("the stage is not in the story")
	}
	for _, bad := range []url.Values{{"stage": {"nope"}}, {"stage": {"won"}, "value": {"lots"}}, {"stage": {"won"}, "action_source": {"website"}}} {
		p := c.post(lead+"/stages", bad)
		if p.code != http.StatusBadRequest || !strings.Contains(p.body, "The stage was not added") {
			t.Errorf("bad stage %v: %d", bad, p.code)
		}
	}
}

// TestAdminSiteSaveKeepsHiddenSettings: a save through the site form keeps
// every setting the form does not show (WhatsApp, Lead Ads and their
// secrets, the call token, the rules' weights, custom data...), as stored.
// Every field of model.SiteSettings is set here, so a field added later
// fails this test until the form keeps it too.
func TestAdminSiteSaveKeepsHiddenSettings(t *testing.T) {
	e := newAdminEnv(t)
	ctx := context.Background()
	off, on := false, true
	site, _ := e.db.SiteByID(ctx, "dent")
	st := &site.Settings
	st.CookieDomain, st.ThankYouURL, st.Consent = "istanbuldis.example", "https://www.istanbuldis.example/tesekkurler", "implied"
	st.Meta.TestEventCode, st.Meta.LeadEvent, st.Meta.QualifiedEvent = "", "Lead", "QualifiedLead"
	st.Meta.PageView, st.Meta.CustomData = &off, map[string]string{"brand": "dent"}
	st.Qualify = model.Qualify{ReviewFrom: 40, JunkFrom: 70, MinFillMS: 2500, DuplicateWindow: model.Duration(72 * time.Hour),
		ReviewTimeout: model.Duration(5 * 24 * time.Hour), Weights: map[string]int{"FILL_TOO_FAST": 60},
		Phrases: map[string]map[string][]string{"vendor": {"tr": {"reklam ajansı"}}}, TextModel: model.TextModelSettings{Enabled: &on, MaxPoints: 20}}
	st.WhatsApp = model.WhatsAppSettings{PhoneNumberIDs: []string{waNumberID}, BusinessAccountID: "102290129340398",
		DatasetID: "1283471935762519", Events: []string{model.WhatsAppSendQualified, model.WhatsAppSendStages},
		LeadEvent: "LeadSubmitted", QualifiedEvent: "QualifiedLead", Stages: map[string]string{"meeting": "QualifiedLead", "won": "Purchase"}}
	st.LeadAds = model.LeadAdsSettings{PageIDs: []string{"104857600123456"}, LeadEventSource: "DentCRM",
		Fields: map[string]string{"hangi_tedavi": "message"}, Backfill: &off,
		Forms: map[string]model.LeadAdsForm{"987654321098765": {Fields: map[string]string{"not": "-"}}}}
	st.CallTokenHash = model.HashAPIKey("call-token-0123456789abcdef")
	st.Google = &model.GoogleSettings{OperatingAccountID: "1234567890", QualifiedConversionAction: "6812345001",
		Stages: map[string]string{"won": "6812345002"}, Currency: "EUR", Mode: "validate",
		Consent: model.GoogleConsent{AdUserData: "granted", AdPersonalization: "denied"}}
	st.Platforms = map[string]json.RawMessage{"tiktok": json.RawMessage(`{"pixel_code":"CABC123"}`)}
	st.StagesEdited, st.StageOrder = true, []string{"won", "meeting"}
	site.LeadAds = model.LeadAdsSecrets{AccessToken: "EAAleadads", AppSecret: "app-secret-0123456789abcdef", VerifyToken: "verify-token-0123456789"}
	site.Secrets = map[string]string{"tiktok.access_token": "tt-token-0123456789"}
	v := reflect.ValueOf(*st)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("SiteSettings.%s is not set in this test: set it, and keep it on a save", v.Type().Field(i).Name)
		}
	}
	if err := e.db.SiteUpsert(ctx, site, time.Now()); err != nil {
		t.Fatal(err)
	}
	before, _ := e.db.SiteByID(ctx, "dent")
	c := e.login()
	// The form as the page shows it, saved unchanged.
	p := c.post("/admin/sites/dent", url.Values{"name": {site.Name}, "origins": {origin}, "country": {"TR"},
		"cookie_domain": {st.CookieDomain}, "thank_you_url": {st.ThankYouURL}, "consent": {st.Consent},
		"pixel_id": {st.Meta.PixelID}, "mode": {st.Meta.Mode}, "lead_event": {"Lead"}, "qualified_event": {"QualifiedLead"},
		"stages": {"meeting = Schedule"}, "review_from": {"40"}, "junk_from": {"70"}})
	if p.code != http.StatusSeeOther {
		t.Fatalf("save: %d %s", p.code, p.body)
	}
	after, _ := e.db.SiteByID(ctx, "dent")
	if !reflect.DeepEqual(before.Settings, after.Settings) {
		t.Errorf("a save lost settings:\nbefore %+v\nafter  %+v", before.Settings, after.Settings)
	}
	if after.LeadAds != before.LeadAds || after.AccessToken != before.AccessToken || after.APIKeyHash != before.APIKeyHash ||
		!reflect.DeepEqual(after.Secrets, before.Secrets) || after.Secrets["tiktok.access_token"] == "" {
		t.Errorf("a save lost secrets: %+v / %+v", before.LeadAds, after.LeadAds)
	}
	// A stage the WhatsApp dataset cannot take: the stage editor refuses
	// it, and says which setting is in the way.
	p = c.post("/admin/sites/dent/stages", url.Values{"count": {"3"},
		"stage.0.name": {"won"}, "stage.0.existing": {"1"}, "stage.0.event": {"Purchase"}, "stage.0.rule": {"fixed"}, "stage.0.value": {"5000"}, "stage.0.currency": {"TRY"},
		"stage.1.name": {"meeting"}, "stage.1.existing": {"1"}, "stage.1.event": {"Schedule"},
		"stage.2.name": {"visit"}, "stage.2.event": {"Schedule"}})
	if body := html.UnescapeString(p.body); p.code != http.StatusBadRequest || !strings.Contains(body, "Nothing was saved: ") ||
		!strings.Contains(body, "visit") {
		t.Errorf("a stage the WhatsApp settings refuse: %d %s", p.code, regexp.MustCompile(`(?s)<div class="alert[^>]*>.*?</div>`).FindString(p.body))
	}
	if now, _ := e.db.SiteByID(ctx, "dent"); !reflect.DeepEqual(now.Settings, before.Settings) {
		t.Errorf("a refused stage changed the site: %+v", now.Settings.Meta.Stages)
	}
}
