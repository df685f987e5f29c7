package tiktoktest_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/tiktok/tiktoktest"
)

type answer struct {
	Code      int    `json:"code"`
	Message   string `json:"message"`
	RequestID string `json:"request_id"`
}

func post(t *testing.T, srv *tiktoktest.Server, token string, body any) answer {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+tiktoktest.Path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Access-Token", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d: TikTok answers its errors in the body", resp.StatusCode)
	}
	var a answer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		t.Fatal(err)
	}
	if a.RequestID == "" {
		t.Error("an answer without a request_id")
	}
	return a
}

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func event(edit func(map[string]any)) map[string]any {
	e := map[string]any{"event": "Lead", "event_time": time.Now().Unix(), "event_id": "ev-1",
		"user": map[string]any{"email": hash("a@example.com"), "ttclid": "E.C.P.x", "ip": "203.0.113.1"},
		"page": map[string]any{"url": "https://www.example.com/"}}
	if edit != nil {
		edit(e)
	}
	return e
}

func web(events ...map[string]any) map[string]any {
	return map[string]any{"event_source": "web", "event_source_id": tiktoktest.PixelCode, "data": events}
}

// The stand-in refuses what TikTok's documentation says TikTok refuses, with
// TikTok's codes.
func TestChecks(t *testing.T) {
	many := make([]map[string]any, tiktoktest.MaxBatch+1)
	for i := range many {
		many[i] = event(func(e map[string]any) { e["event_id"] = fmt.Sprint(i) })
	}
	for _, c := range []struct {
		name  string
		token string
		body  map[string]any
		code  int
		says  string
	}{
		{"accepted", tiktoktest.AccessToken, web(event(nil)), 0, "OK"},
		{"no token", "", web(event(nil)), tiktoktest.CodeTokenEmpty, "empty"},
		{"wrong token", "other", web(event(nil)), tiktoktest.CodeTokenInvalid, "revoked"},
		{"unknown pixel", tiktoktest.AccessToken, map[string]any{"event_source": "web", "event_source_id": "COTHER", "data": []any{event(nil)}},
			tiktoktest.CodeNoPermission, "pixel"},
		{"unknown source", tiktoktest.AccessToken, map[string]any{"event_source": "email", "event_source_id": tiktoktest.PixelCode, "data": []any{event(nil)}},
			tiktoktest.CodeInvalidParam, "event_source"},
		{"crm to its set", tiktoktest.AccessToken, map[string]any{"event_source": "crm", "event_source_id": tiktoktest.CRMEventSetID,
			"data": []any{event(func(e map[string]any) { e["lead"] = map[string]any{"lead_id": "7301234567890123456"} })}}, 0, "OK"},
		{"no events", tiktoktest.AccessToken, web(), tiktoktest.CodeInvalidParam, "1 to 1000"},
		{"too many events", tiktoktest.AccessToken, web(many...), tiktoktest.CodeInvalidParam, "1 to 1000"},
		{"e-mail in clear", tiktoktest.AccessToken, web(event(func(e map[string]any) { e["user"] = map[string]any{"email": "a@example.com"} })),
			tiktoktest.CodeInvalidParam, "user.email must be hashed"},
		{"hash in capitals", tiktoktest.AccessToken, web(event(func(e map[string]any) {
			e["user"] = map[string]any{"phone": strings.ToUpper(hash("+12133734253"))}
		})), tiktoktest.CodeInvalidParam, "user.phone must be hashed"},
		{"time in milliseconds", tiktoktest.AccessToken, web(event(func(e map[string]any) { e["event_time"] = time.Now().UnixMilli() })),
			tiktoktest.CodeInvalidParam, "future"},
		{"web event of 8 days", tiktoktest.AccessToken, web(event(func(e map[string]any) { e["event_time"] = time.Now().Add(-8 * 24 * time.Hour).Unix() })),
			tiktoktest.CodeInvalidParam, "older than 7 days"},
		{"lead in a web event", tiktoktest.AccessToken, web(event(func(e map[string]any) { e["lead"] = map[string]any{"lead_id": "1"} })),
			tiktoktest.CodeInvalidParam, "crm events only"},
		{"relative page", tiktoktest.AccessToken, web(event(func(e map[string]any) { e["page"] = map[string]any{"url": "/form"} })),
			tiktoktest.CodeInvalidParam, "page.url"},
		{"currency", tiktoktest.AccessToken, web(event(func(e map[string]any) { e["properties"] = map[string]any{"value": 10, "currency": "lira"} })),
			tiktoktest.CodeInvalidParam, "currency"},
		{"wrong test code", tiktoktest.AccessToken, map[string]any{"event_source": "web", "event_source_id": tiktoktest.PixelCode,
			"test_event_code": "OTHER", "data": []any{event(nil)}}, tiktoktest.CodeInvalidParam, "test_event_code"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := tiktoktest.New(t)
			a := post(t, srv, c.token, c.body)
			if a.Code != c.code || !strings.Contains(a.Message, c.says) {
				t.Errorf("code %d %q, want %d saying %q", a.Code, a.Message, c.code, c.says)
			}
			if got := len(srv.Accepted()); (c.code == 0) != (got > 0) {
				t.Errorf("%d events accepted for code %d", got, a.Code)
			}
		})
	}
}

// One bad event fails the whole request and accepts none of it.
func TestOneBadEventFailsAll(t *testing.T) {
	srv := tiktoktest.New(t)
	srv.Refuse("ev-2", "bad")
	a := post(t, srv, tiktoktest.AccessToken, web(event(nil), event(func(e map[string]any) { e["event_id"] = "ev-2" })))
	if a.Code != tiktoktest.CodeInvalidParam || len(srv.Accepted()) != 0 {
		t.Errorf("code %d, accepted %v", a.Code, srv.AcceptedIDs())
	}
	if r := srv.Requests(); len(r) != 1 || len(r[0].Events) != 2 || r[0].Code != tiktoktest.CodeInvalidParam {
		t.Errorf("recorded %+v", r)
	}
}

func TestFaults(t *testing.T) {
	srv := tiktoktest.New(t)
	srv.FailNext(2, tiktoktest.CodeTooFrequent, "")
	srv.FailAt(4, tiktoktest.CodeSystemError)
	var codes []int
	for range 5 {
		codes = append(codes, post(t, srv, tiktoktest.AccessToken, web(event(nil))).Code)
	}
	want := []int{tiktoktest.CodeTooFrequent, tiktoktest.CodeTooFrequent, 0, tiktoktest.CodeSystemError, 0}
	if fmt.Sprint(codes) != fmt.Sprint(want) {
		t.Errorf("codes %v, want %v", codes, want)
	}
	srv.Pause()
	if a := post(t, srv, tiktoktest.AccessToken, web(event(nil))); a.Code != tiktoktest.CodeTokenInvalid {
		t.Errorf("paused: code %d", a.Code)
	}
	srv.Resume()
	if a := post(t, srv, tiktoktest.AccessToken, web(event(nil))); a.Code != 0 {
		t.Errorf("resumed: code %d", a.Code)
	}
	if n := len(srv.Accepted()); n != 3 {
		t.Errorf("%d accepted, want 3", n)
	}
}

// Allow takes a refused event again; FailAll answers every request with
// its code until FailAll(CodeOK).
func TestAllowAndFailAll(t *testing.T) {
	srv := tiktoktest.New(t)
	srv.Refuse("ev-1", "bad")
	if a := post(t, srv, tiktoktest.AccessToken, web(event(nil))); a.Code != tiktoktest.CodeInvalidParam {
		t.Errorf("refused: code %d", a.Code)
	}
	srv.Allow("ev-1")
	if a := post(t, srv, tiktoktest.AccessToken, web(event(nil))); a.Code != 0 {
		t.Errorf("allowed: code %d", a.Code)
	}
	srv.FailAll(tiktoktest.CodeInvalidParam)
	for range 3 {
		if a := post(t, srv, tiktoktest.AccessToken, web(event(nil))); a.Code != tiktoktest.CodeInvalidParam {
			t.Errorf("failing all: code %d", a.Code)
		}
	}
	srv.FailAll(tiktoktest.CodeOK)
	if a := post(t, srv, tiktoktest.AccessToken, web(event(nil))); a.Code != 0 {
		t.Errorf("after FailAll(CodeOK): code %d", a.Code)
	}
	if n := len(srv.Accepted()); n != 2 {
		t.Errorf("%d accepted, want 2", n)
	}
}
