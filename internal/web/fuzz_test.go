package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/web"
)

// fuzzEnv is one database and handler shared by every input of a fuzz
// target: a fresh database per input would measure SQLite, not intake.
type fuzzEnv struct {
	db *store.DB
	h  http.Handler
}

func newFuzzEnv(f *testing.F) *fuzzEnv {
	db := storetest.SQLite(f)
	site := &model.Site{ID: "dent", Name: "Istanbul Dental", APIKeyHash: model.HashAPIKey(apiKey), Settings: model.SiteSettings{
		Origins: []string{origin}, Country: "TR", ThankYouURL: origin + "/thanks", CookieDomain: ".istanbuldis.example",
		Meta: model.MetaSettings{PixelID: "111222333", Mode: model.ModeDryRun}}}
	if err := db.SiteUpsert(context.Background(), site, time.Now()); err != nil {
		f.Fatal(err)
	}
	svc := app.New(app.Options{Store: db})
	h := web.New(web.Options{App: svc, Store: db, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}).Handler()
	return &fuzzEnv{db: db, h: h}
}

func (e *fuzzEnv) serve(method, target, ctype string, body []byte, hdr map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	req.RemoteAddr = "127.0.0.1:4711"
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return rec
}

// checkAnswer fails on a 5xx, and on an error answer that is not JSON
// {"error": "..."} naming the problem.
func checkAnswer(t *testing.T, rec *httptest.ResponseRecorder, body []byte) {
	t.Helper()
	if rec.Code >= 500 {
		t.Fatalf("%d %s for body %q", rec.Code, rec.Body, body)
	}
	if rec.Code >= 400 {
		var e struct{ Error string }
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
			t.Fatalf("%d without a clear error: %q for body %q", rec.Code, rec.Body, body)
		}
	}
}

// FuzzLeadJSON posts any bytes as a JSON lead, from the site's page or
// with its API key: never a 5xx, every refusal a JSON error, and every
// accepted lead reads back through the API as the lead answered.
func FuzzLeadJSON(f *testing.F) {
	for _, s := range []string{
		`{"site":"dent","email":"ayse@example.com","phone":"0532 412 87 19","name":"Ayşe Yılmaz","message":"Implant fiyatı?","fields":{"treatment":"implant"},"fill_ms":8400,"fbclid":"IwAR123","consent":true}`,
		`{"site":"dent","event_id":"9b2c1f0e-1111-4a4a-8888-123456789abc","email":"x@y.co","hp":"bot","fill_ms":-5}`,
		`{"site":"dent","phone":"555 555 55 55","message":"test","fill_ms":400,"page_url":"https://www.istanbuldis.example/?fbclid=IwAR&utm_source=fb"}`,
		`{"site":"dent","email":"a@b.c","client_ip":"203.0.113.9","user_agent":"Mozilla/5.0","submitted_at":"2026-12-02T10:15:00Z","lead_id":"12345678901234567"}`,
		`{"site":"dent","fbc":"fb.1.1700000000000.IwAR","fbp":"fb.1.1700000000000.123","visitor_id":"vi_x","form_token":"a.b.c","external_id":"crm-1"}`,
		`{"site":"nope"}`, `{"site":"dent","email":1}`, `{"site":"dent","x":1}`, `{}`, `[]`, `null`, ``, "{\"site\":\"dent\",\"name\":\"\xff\"}",
		`{"site":"dent","fill_ms":9223372036854775807,"submitted_at":"9999-12-31T23:59:59Z"}`,
		`{"site":"dent","fields":{"":"", "a":"` + strings.Repeat("b", 300) + `"}}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	e := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, body []byte, withKey bool) {
		hdr := map[string]string{"Origin": origin, "User-Agent": "Mozilla/5.0 fuzz"}
		if withKey {
			hdr = map[string]string{"Authorization": "Bearer " + apiKey}
		}
		rec := e.serve("POST", "/v1/leads", "application/json", body, hdr)
		checkAnswer(t, rec, body)
		if rec.Code/100 != 2 {
			return
		}
		var ans struct {
			ID      string `json:"id"`
			EventID string `json:"event_id"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &ans); err != nil || ans.ID == "" || ans.EventID == "" {
			t.Fatalf("%d answer %q", rec.Code, rec.Body)
		}
		back := e.serve("GET", "/v1/leads/"+ans.ID, "", nil, map[string]string{"Authorization": "Bearer " + apiKey})
		var l struct {
			ID      string `json:"id"`
			EventID string `json:"event_id"`
		}
		if back.Code != 200 || json.Unmarshal(back.Body.Bytes(), &l) != nil || l.ID != ans.ID || l.EventID != ans.EventID {
			t.Fatalf("accepted lead %s does not read back: %d %s", ans.ID, back.Code, back.Body)
		}
	})
}

// FuzzLeadForm posts any bytes as a plain HTML form (URL-encoded or
// multipart with a fixed boundary): never a 5xx, every refusal a JSON
// error, and every accepted post leaves a stored lead: a new one, or the
// one its event_id already named.
func FuzzLeadForm(f *testing.F) {
	const boundary = "XyZ"
	for _, s := range []string{
		"site=dent&email=ayse%40example.com&phone=0532+412+87+19&name=Ay%C5%9Fe&message=Randevu&fill_ms=8400&treatment=implant",
		"site=dent&_redirect=https%3A%2F%2Fwww.istanbuldis.example%2Fok&consent=on&hp=",
		"site=dent&_redirect=https%3A%2F%2Fevil.example%2F&email=a%40b.c",
		"site=dent&event_id=form-evt-1&email=a%40b.c&fill_ms=x", "site=dent&consent=maybe", "site=dent&%zz", "",
		"site=dent&client_ip=1.2.3.4", "site=dent&name=%FF",
	} {
		f.Add([]byte(s), false)
	}
	f.Add([]byte("--XyZ\r\nContent-Disposition: form-data; name=\"site\"\r\n\r\ndent\r\n--XyZ\r\n"+
		"Content-Disposition: form-data; name=\"email\"\r\n\r\nayse@example.com\r\n--XyZ\r\n"+
		"Content-Disposition: form-data; name=\"cv\"; filename=\"cv.pdf\"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\r\n--XyZ--\r\n"), true)
	f.Add([]byte("--XyZ\r\nContent-Disposition: form-data; name=\"site\"\r\n\r\ndent\r\n--XyZ"), true)
	e := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, body []byte, multipart bool) {
		ctype := "application/x-www-form-urlencoded"
		if multipart {
			ctype = "multipart/form-data; boundary=" + boundary
		}
		before := e.count(t)
		rec := e.serve("POST", "/v1/leads", ctype, body, map[string]string{"Origin": origin, "User-Agent": "Mozilla/5.0 fuzz"})
		checkAnswer(t, rec, body)
		if rec.Code >= 400 {
			return
		}
		if rec.Code != http.StatusSeeOther && rec.Code != http.StatusAccepted {
			t.Fatalf("form post answered %d", rec.Code)
		}
		if e.count(t) == before+1 {
			return
		}
		// No new lead: the post must have named one the site already has.
		req := httptest.NewRequest("POST", "/", bytes.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		if multipart {
			req.ParseMultipartForm(64 << 10)
		} else {
			req.ParseForm()
		}
		// Intake trims every field: " 1" names the lead stored as "1".
		id := strings.TrimSpace(strings.Join(req.PostForm["event_id"], ", "))
		if _, err := e.db.LeadByEventID(context.Background(), "dent", id); err != nil {
			t.Fatalf("form post answered %d but no lead was stored (event_id %q: %v)", rec.Code, id, err)
		}
	})
}

func (e *fuzzEnv) count(t *testing.T) int {
	n, err := e.db.LeadCount(context.Background(), "dent")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// FuzzCollect posts any bytes as a visit from t.js, with a fuzzed visitor
// cookie: never a 5xx, every refusal a JSON error, and a visit answered
// with a PageView event_id is stored under it.
func FuzzCollect(f *testing.F) {
	for _, s := range []string{
		`{"url":"https://www.istanbuldis.example/implant?fbclid=IwAR2xYz&utm_source=facebook","referrer":"https://l.facebook.com/","consent":true,"fbc":"","fbp":""}`,
		`{"url":"https://www.istanbuldis.example/","consent":null,"fbc":"fb.1.1700000000000.IwAR","fbp":"fb.1.1700000000000.1234567890"}`,
		`{"url":"https://www.istanbuldis.example/?gclid=x&msclkid=y&ttclid=z&wbraid=w","consent":false}`,
		`{"url":"https://www.istanbuldis.example/contact","lf":2}`, `{"url":"https://www.istanbuldis.example/","lf":-1}`,
		`{"url":"javascript:alert(1)","referrer":"\u0000"}`, `{"url":"%%%"}`, `{}`, `{"consent":"yes"}`, ``, `[`,
	} {
		f.Add([]byte(s), "")
		f.Add([]byte(s), "vi_01hx0000000000000000000000")
	}
	e := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, body []byte, visitor string) {
		hdr := map[string]string{"Origin": origin, "User-Agent": "Mozilla/5.0 fuzz"}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/v1/collect?site=dent", bytes.NewReader(body))
		req.RemoteAddr = "127.0.0.1:4711"
		req.Header.Set("Content-Type", "text/plain")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		if visitor != "" {
			req.AddCookie(&http.Cookie{Name: "cleanads_vid", Value: sanitizeCookie(visitor)})
		}
		e.h.ServeHTTP(rec, req)
		checkAnswer(t, rec, body)
		if rec.Code/100 != 2 {
			return
		}
		var ans struct {
			EventID string `json:"event_id"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &ans); err != nil {
			t.Fatalf("answer %q: %v", rec.Body, err)
		}
		if ans.EventID == "" {
			return // no consent: nothing is stored
		}
		if _, err := e.db.VisitByEventID(context.Background(), "dent", ans.EventID); err != nil {
			if errors.Is(err, model.ErrNotFound) {
				t.Fatalf("visit answered with event_id %s is not stored", ans.EventID)
			}
			t.Fatal(err)
		}
	})
}

// sanitizeCookie keeps the bytes a cookie value may hold, so the fuzzed
// value reaches the server instead of being dropped by net/http.
func sanitizeCookie(s string) string {
	return strings.Map(func(r rune) rune {
		if r <= 0x20 || r >= 0x7f || r == '"' || r == ';' || r == '\\' || r == ',' {
			return -1
		}
		return r
	}, s)
}
