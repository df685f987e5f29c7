package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/secret"
	"github.com/cleanads/cleanads/internal/store"
)

const piiConfig = `
listen: "127.0.0.1:0"
database: "sqlite:%s/cleanads.db"
log: {level: debug, format: %s}
meta: {graph_url: "%s", api_version: "v25.0"}
delivery: {poll: 1h}
metrics_token: "metrics-token-0123456789abcdef"
sites:
  - id: dent
    api_key: "dent-key-0123456789abcdef"
    origins: ["https://www.istanbuldis.example"]
    country: TR
    meta: {pixel_id: "111", access_token: "%s", mode: test, test_event_code: "TEST7"}
`

// The person of the flow, and every form their data could be logged in.
var (
	piiEmail   = "Zeynep.Kaya@Gmail.com"
	piiPhone   = "0532 719 46 28"
	piiMessage = "Merhaba, dolgu ve beyazlatma için randevu almak istiyorum, cumartesi sabah uygunum."
	piiName    = "Zeynep Kaya"
	piiForms   = []string{"zeynep.kaya@gmail.com", "zeynep.kaya@example.com", "Zeynep.Kaya", "0532 719 46 28", "05327194628", "5327194628",
		"+905327194628", "905327194628", "+90 532 719 46 28", "532 719 46 28", "dolgu ve beyazlatma", "Zeynep Kaya", "Kaya",
		"0533 555 55 55", "05335555555", "905335555555", "bayilik teklifi", "seo@ajans.example", "vendor pitch body",
		graphtest.Token, "dent-key-0123456789abcdef", "metrics-token-0123456789abcdef"}
)

// TestNoPIIInLogs runs the whole flow in one server (a visit, browser and
// form leads, junk and refused input, evidence, delivery to the Graph
// stand-in, a metrics scrape) with debug logs, in text and in JSON, and
// fails if any form of the person's e-mail, phone or message, or a secret,
// appears in them.
func TestNoPIIInLogs(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			g := graphtest.New(t)
			dir := t.TempDir()
			base, stdout, stderr, stop := startServe(t, dir, fmt.Sprintf(piiConfig, dir, format, g.URL, graphtest.Token), nil)
			flow(t, base, g)
			if code := stop(); code != 0 {
				t.Fatalf("serve exited %d", code)
			}
			logs := stdout.String() + stderr.String()
			if !strings.Contains(logs, `level=DEBUG`) && !strings.Contains(logs, `"level":"DEBUG"`) {
				t.Fatalf("no debug output captured: the test would prove nothing:\n%s", logs)
			}
			lower := strings.ToLower(logs)
			for _, p := range piiForms {
				if strings.Contains(lower, strings.ToLower(p)) {
					i := strings.Index(lower, strings.ToLower(p))
					t.Errorf("the logs hold %q: ...%s...", p, logs[max(0, i-200):min(len(logs), i+100)])
				}
			}
			checkTokenSealed(t, dir)
		})
	}
}

func flow(t *testing.T, base string, g *graphtest.Server) {
	t.Helper()
	jar := map[string]string{}
	do := func(method, path, ctype, body string, hdr map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		for k, v := range jar {
			req.AddCookie(&http.Cookie{Name: k, Value: v})
		}
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		for _, ck := range resp.Cookies() {
			jar[ck.Name] = ck.Value
		}
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	browser := map[string]string{"Origin": "https://www.istanbuldis.example", "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/140"}
	key := map[string]string{"Authorization": "Bearer dent-key-0123456789abcdef"}

	// The visit, with an e-mail in the page URL as some forms leave it.
	code, body := do("POST", "/v1/collect?site=dent", "text/plain",
		`{"url":"https://www.istanbuldis.example/?fbclid=IwAR_pii&email=zeynep.kaya%40example.com","consent":true}`, browser)
	var visit struct {
		FormToken string `json:"form_token"`
	}
	json.Unmarshal([]byte(body), &visit)
	if code != 200 || visit.FormToken == "" {
		t.Fatalf("collect: %d %s", code, body)
	}
	// The lead, as t.js posts it once the form's plugin said the site took
	// it (a lead nobody confirmed waits out its attempt window before it is
	// sent), without the form token: the server would time this fill at a
	// few milliseconds.
	lead, _ := json.Marshal(map[string]any{"site": "dent", "confirmed": true, "email": piiEmail, "phone": piiPhone, "name": piiName,
		"message": piiMessage, "fill_ms": 14000, "fields": map[string]string{"tedavi": "dolgu ve beyazlatma"},
		"page_url": "https://www.istanbuldis.example/?email=zeynep.kaya%40example.com"})
	code, body = do("POST", "/v1/leads", "application/json", string(lead), browser)
	var created struct{ ID string }
	json.Unmarshal([]byte(body), &created)
	if code != 202 || created.ID == "" {
		t.Fatalf("lead: %d %s", code, body)
	}
	// The same person again by form post, the phone in E.164: a duplicate.
	form := url.Values{"site": {"dent"}, "email": {piiEmail}, "phone": {"+905327194628"}, "message": {piiMessage},
		"_redirect": {"https://www.istanbuldis.example/tesekkurler"}}
	if code, body := do("POST", "/v1/leads", "application/x-www-form-urlencoded", form.Encode(), browser); code != 303 {
		t.Fatalf("form lead: %d %s", code, body)
	}
	// Junk: a fake number and a vendor pitch.
	do("POST", "/v1/leads", "application/json", `{"site":"dent","email":"seo@ajans.example","phone":"0533 555 55 55",`+
		`"message":"bayilik teklifi vendor pitch body","fill_ms":400}`, browser)
	// Refused input that carries personal data.
	for _, bad := range []struct{ ctype, body string }{
		{"application/json", `{"site":"dent","email":"zeynep.kaya@example.com","phone":"05327194628","unknown":"x"}`},
		{"application/json", `{"site":"dent","email":"zeynep.kaya@example.com","phone":["05327194628"]}`},
		{"application/json", `{"site":"nope","email":"zeynep.kaya@example.com","message":"` + piiMessage + `"}`},
		{"application/json", `{"site":"dent","email":"zeynep.kaya@example.com","client_ip":"1.2.3.4"}`},
		{"text/csv", "zeynep.kaya@example.com,05327194628"},
	} {
		if code, _ := do("POST", "/v1/leads", bad.ctype, bad.body, browser); code < 400 || code >= 500 {
			t.Errorf("refused input answered %d", code)
		}
	}
	form.Set("_redirect", "https://evil.example/?e=zeynep.kaya@example.com")
	do("POST", "/v1/leads", "application/x-www-form-urlencoded", form.Encode(), browser)
	// Evidence and a look-up through the API.
	if code, body := do("POST", "/v1/leads/"+created.ID+"/events", "application/json", `{"type":"customer"}`, key); code != 200 {
		t.Fatalf("evidence: %d %s", code, body)
	}
	if code, body := do("GET", "/v1/leads/"+created.ID, "", "", key); code != 200 || !strings.Contains(body, piiEmail) {
		t.Fatalf("look-up: %d %s", code, body)
	}
	// Look-ups with a person where an id belongs: the path is logged.
	for _, p := range []string{"/v1/leads/ld_missing", "/v1/leads/" + url.PathEscape(piiEmail), "/v1/leads/+905327194628",
		"/v1/leads/0532%20719%2046%2028", "/v2/zeynep.kaya@gmail.com"} {
		if code, _ := do("GET", p, "", "", key); code != 404 {
			t.Errorf("%s: %d", p, code)
		}
	}
	// Delivery: the lead's events reach Meta's stand-in, and the runner
	// records them as sent (just after the stand-in has them).
	waitUntil(t, func() bool { return len(g.Events()) >= 3 })
	waitUntil(t, func() bool {
		_, body := do("GET", "/metrics", "", "", map[string]string{"Authorization": "Bearer metrics-token-0123456789abcdef"})
		return strings.Contains(body, `cleanads_deliveries{site="dent",state="sent"}`) &&
			strings.Contains(body, `cleanads_delivery_requests_total{outcome="ok"}`)
	})
	// Metrics: closed without the token, open with it.
	if code, _ := do("GET", "/metrics", "", "", nil); code != 401 {
		t.Errorf("metrics without the token: %d", code)
	}
	code, body = do("GET", "/metrics", "", "", map[string]string{"Authorization": "Bearer metrics-token-0123456789abcdef"})
	for _, want := range []string{`cleanads_http_requests_total{route="POST /v1/leads",status="202"} 2`,
		`route="GET /v1/leads/{id}"`, `cleanads_leads{site="dent",verdict="junk"}`, `cleanads_deliveries{site="dent",state="sent"}`,
		`cleanads_delivery_requests_total{outcome="ok"}`, `cleanads_site_paused{site="dent"} 0`, `cleanads_outbox_oldest_due_seconds`} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if code != 200 || strings.Contains(body, created.ID) || strings.Contains(body, "zeynep") {
		t.Errorf("metrics: %d, or they name a lead or a person", code)
	}
}

// checkTokenSealed: the database never holds the clear access token, and
// the key file that seals it is the owner's only.
func checkTokenSealed(t *testing.T, dir string) {
	t.Helper()
	fi, err := os.Stat(filepath.Join(dir, secret.KeyFileName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	for _, name := range []string{"cleanads.db", "cleanads.db-wal"} {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		if strings.Contains(string(b), graphtest.Token) {
			t.Errorf("%s holds the clear access token", name)
		}
	}
	db, err := store.Open(context.Background(), "sqlite:"+filepath.Join(dir, "cleanads.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.SiteByID(context.Background(), "dent"); err == nil || !strings.Contains(err.Error(), "encrypted") {
		t.Errorf("the token opened without its key: %v", err)
	}
}
