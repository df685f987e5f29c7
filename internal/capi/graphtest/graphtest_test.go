package graphtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func goodEvent(i int, at time.Time) map[string]any {
	return map[string]any{
		"event_name":       "Lead",
		"event_time":       at.Unix(),
		"event_id":         fmt.Sprintf("ev-%d", i),
		"action_source":    "website",
		"event_source_url": "https://example.com/form",
		"user_data": map[string]any{
			"em":                []string{sha("a@example.com")},
			"client_user_agent": "Mozilla/5.0",
			"client_ip_address": "203.0.113.9",
		},
	}
}

type answer struct {
	status int
	header http.Header
	body   map[string]any
}

func post(t *testing.T, s *Server, path, token string, data any) (answer, error) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"data": data, "test_event_code": "TEST1"})
	if err != nil {
		t.Fatal(err)
	}
	u := s.URL + path
	if token != "" {
		u += "?access_token=" + url.QueryEscape(token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, header: resp.Header}
	if err := json.Unmarshal(raw, &a.body); err != nil {
		t.Fatalf("answer is not JSON: %s", raw)
	}
	return a, nil
}

func errCode(a answer) (code, sub int, msg string) {
	e, _ := a.body["error"].(map[string]any)
	if e == nil {
		return 0, 0, ""
	}
	c, _ := e["code"].(float64)
	sc, _ := e["error_subcode"].(float64)
	m, _ := e["message"].(string)
	return int(c), int(sc), m
}

const path = "/v24.0/123456789/events"

func TestAccepts(t *testing.T) {
	s := New(t)
	now := time.Now()
	a, err := post(t, s, path, Token, []any{goodEvent(0, now), goodEvent(1, now.Add(-6*24*time.Hour))})
	if err != nil {
		t.Fatal(err)
	}
	if a.status != 200 || a.body["events_received"] != 2.0 || a.body["fbtrace_id"] == "" {
		t.Fatalf("answer %d %v", a.status, a.body)
	}
	ev := s.Events()
	if len(ev) != 2 || ev[1].EventID != "ev-1" || ev[0].EventName != "Lead" || ev[0].TestEventCode != "TEST1" ||
		ev[0].PixelID != "123456789" || !strings.Contains(string(ev[0].JSON), "client_user_agent") {
		t.Errorf("recorded %+v", ev)
	}
	if s.Requests() != 1 {
		t.Errorf("Requests = %d", s.Requests())
	}
}

func TestRejects(t *testing.T) {
	now := time.Now()
	mod := func(f func(e map[string]any)) []any {
		e := goodEvent(1, now)
		f(e)
		return []any{goodEvent(0, now), e}
	}
	ud := func(e map[string]any) map[string]any { return e["user_data"].(map[string]any) }
	many := make([]any, MaxBatch+1)
	for i := range many {
		many[i] = goodEvent(i, now)
	}
	tests := []struct {
		name       string
		path       string
		token      string
		data       any
		status     int
		code, sub  int
		msgContain string
	}{
		{"no token", path, "", mod(func(map[string]any) {}), 400, 104, 0, "access token"},
		{"wrong token", path, "nope", mod(func(map[string]any) {}), 400, 190, 0, "Invalid OAuth"},
		{"bad path", "/v24.0/123/evts", Token, mod(func(map[string]any) {}), 400, 100, 33, "Unsupported"},
		{"too many", path, Token, many, 400, 100, SubcodeTooMany, "1001 events"},
		{"too old", path, Token, mod(func(e map[string]any) { e["event_time"] = now.Add(-MaxEventAge - time.Minute).Unix() }),
			400, 100, SubcodeTooOld, "event 1"},
		{"future", path, Token, mod(func(e map[string]any) { e["event_time"] = now.Add(time.Hour).Unix() }),
			400, 100, SubcodeInFuture, "event 1"},
		{"upper-case hash", path, Token, mod(func(e map[string]any) { ud(e)["em"] = strings.ToUpper(sha("x")) }),
			400, 100, SubcodeBadHash, "event 1"},
		{"unhashed", path, Token, mod(func(e map[string]any) { ud(e)["ph"] = []string{"905324128719"} }),
			400, 100, SubcodeBadHash, "ph must be SHA-256"},
		{"no user agent", path, Token, mod(func(e map[string]any) { delete(ud(e), "client_user_agent") }),
			400, 100, SubcodeMissingField, "client_user_agent"},
		{"no source url", path, Token, mod(func(e map[string]any) { delete(e, "event_source_url") }),
			400, 100, SubcodeMissingField, "event_source_url"},
		{"no match key", path, Token, mod(func(e map[string]any) {
			e["action_source"] = "system_generated"
			e["user_data"] = map[string]any{"client_user_agent": "x"}
		}), 400, 100, SubcodeNoCustomerKey, "event 1"},
		{"lead_id as float", path, Token, mod(func(e map[string]any) { ud(e)["lead_id"] = 1.5 }),
			400, 100, SubcodeMalformed, "lead_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(t)
			a, err := post(t, s, tt.path, tt.token, tt.data)
			if err != nil {
				t.Fatal(err)
			}
			code, sub, msg := errCode(a)
			if a.status != tt.status || code != tt.code || sub != tt.sub || !strings.Contains(msg, tt.msgContain) {
				t.Errorf("got %d code %d/%d %q; want %d code %d/%d containing %q", a.status, code, sub, msg,
					tt.status, tt.code, tt.sub, tt.msgContain)
			}
			if n := len(s.Events()); n != 0 {
				t.Errorf("%d events recorded from a refused request", n)
			}
		})
	}
}

func TestFaults(t *testing.T) {
	now := time.Now()
	tests := []struct {
		fault      Fault
		status     int
		code       int
		retryAfter string
	}{
		{FaultServerError, 500, 2, ""},
		{FaultThrottle17, 400, 17, "3"},
		{FaultThrottle613, 400, 613, "3"},
		{FaultThrottle80004, 400, 80004, "3"},
		{FaultAuth, 400, 190, ""},
		{FaultInvalidParameter, 400, 100, ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.fault), func(t *testing.T) {
			s := New(t)
			s.SetRetryAfter(3 * time.Second)
			s.FailNext(2, tt.fault)
			for i := range 2 {
				a, err := post(t, s, path, Token, []any{goodEvent(i, now)})
				if err != nil {
					t.Fatal(err)
				}
				code, _, _ := errCode(a)
				if a.status != tt.status || code != tt.code || a.header.Get("Retry-After") != tt.retryAfter {
					t.Errorf("request %d: %d code %d Retry-After %q", i, a.status, code, a.header.Get("Retry-After"))
				}
			}
			if a, _ := post(t, s, path, Token, []any{goodEvent(9, now)}); a.status != 200 {
				t.Errorf("third request: %d %v", a.status, a.body)
			}
			if s.Requests() != 3 || len(s.Events()) != 1 {
				t.Errorf("requests %d, events %d", s.Requests(), len(s.Events()))
			}
		})
	}
	t.Run("hang", func(t *testing.T) {
		s := New(t)
		s.FailNext(1, FaultHang)
		start := time.Now()
		_, err := post(t, s, path, Token, []any{goodEvent(0, now)})
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) < time.Second {
			t.Errorf("err %v after %v", err, time.Since(start))
		}
	})
	t.Run("drop", func(t *testing.T) {
		s := New(t)
		s.FailNext(1, FaultDrop)
		if _, err := post(t, s, path, Token, []any{goodEvent(0, now)}); err == nil {
			t.Error("no error from a dropped connection")
		}
	})
	t.Run("window", func(t *testing.T) {
		s := New(t)
		clock := now
		var mu sync.Mutex
		s.SetNow(func() time.Time { mu.Lock(); defer mu.Unlock(); return clock })
		s.FailFor(time.Minute, FaultServerError)
		if a, _ := post(t, s, path, Token, []any{goodEvent(0, now)}); a.status != 500 {
			t.Errorf("inside the window: %d", a.status)
		}
		mu.Lock()
		clock = clock.Add(2 * time.Minute)
		mu.Unlock()
		if a, _ := post(t, s, path, Token, []any{goodEvent(0, now)}); a.status != 200 {
			t.Errorf("after the window: %d %v", a.status, a.body)
		}
	})
	t.Run("hang released by Close", func(t *testing.T) {
		s := New(t)
		s.FailNext(1, FaultHang)
		done := make(chan struct{})
		go func() {
			defer close(done)
			req, _ := http.NewRequest(http.MethodPost, s.URL+path+"?access_token="+Token, strings.NewReader(`{"data":[]}`))
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		for s.Requests() == 0 {
			time.Sleep(time.Millisecond)
		}
		s.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("Close did not release a hanging request")
		}
	})
}

func TestTokensAndConcurrency(t *testing.T) {
	s := New(t)
	s.SetTokens("new-token")
	if a, _ := post(t, s, path, Token, []any{goodEvent(0, time.Now())}); a.status != 400 {
		t.Errorf("old token accepted: %d", a.status)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if a, err := post(t, s, path, "new-token", []any{goodEvent(i, time.Now())}); err != nil || a.status != 200 {
				t.Errorf("request %d: %v %v", i, err, a.body)
			}
		})
	}
	wg.Wait()
	if s.Requests() != 21 || len(s.Events()) != 20 {
		t.Errorf("requests %d, events %d", s.Requests(), len(s.Events()))
	}
	s.Reset()
	if s.Requests() != 0 || len(s.Events()) != 0 {
		t.Error("Reset kept state")
	}
}

func TestFormBody(t *testing.T) {
	s := New(t)
	data, _ := json.Marshal([]any{goodEvent(0, time.Now())})
	form := url.Values{"data": {string(data)}, "access_token": {Token}, "test_event_code": {"T2"}}
	resp, err := http.PostForm(s.URL+path, form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ev := s.Events(); resp.StatusCode != 200 || len(ev) != 1 || ev[0].TestEventCode != "T2" {
		t.Errorf("status %d, events %+v", resp.StatusCode, ev)
	}
}

// TestRefuse: a refused event id fails the whole request it is in, with
// code 100 naming its index and why, as Meta refuses a batch with one
// invalid event; the rest of the batch goes alone; Allow takes it again.
func TestRefuse(t *testing.T) {
	now := time.Now()
	s := New(t)
	s.Refuse("ev-1", "the event is not allowed here")
	a, err := post(t, s, path, Token, []any{goodEvent(0, now), goodEvent(1, now), goodEvent(2, now)})
	if err != nil {
		t.Fatal(err)
	}
	code, sub, _ := errCode(a)
	e, _ := a.body["error"].(map[string]any)
	if msg, _ := e["error_user_msg"].(string); a.status != 400 || code != 100 || sub != SubcodeMalformed ||
		!strings.Contains(msg, "data[1]") || !strings.Contains(msg, "the event is not allowed here") {
		t.Fatalf("answer %d %v", a.status, a.body)
	}
	if len(s.Events()) != 0 {
		t.Fatalf("a refused request kept %d events", len(s.Events()))
	}
	if a, _ := post(t, s, path, Token, []any{goodEvent(0, now), goodEvent(2, now)}); a.status != 200 {
		t.Fatalf("the rest: %d %v", a.status, a.body)
	}
	s.Allow("ev-1")
	if a, _ := post(t, s, path, Token, []any{goodEvent(1, now)}); a.status != 200 {
		t.Fatalf("after Allow: %d %v", a.status, a.body)
	}
	if n := len(s.Events()); n != 3 {
		t.Errorf("%d events taken, want 3", n)
	}
}
