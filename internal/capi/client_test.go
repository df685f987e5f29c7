package capi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/model"
)

func rawEvents(t testing.TB, n int, at time.Time) []json.RawMessage {
	t.Helper()
	out := make([]json.RawMessage, n)
	for i := range out {
		l := testLead()
		l.ID = model.LeadID(fmt.Sprintf("L%d", i))
		l.EventID = fmt.Sprintf("ev-%d", i)
		l.SubmittedAt = at
		e, err := BuildLeadEvent(BuildParams{Site: testSite(), Lead: l})
		if err != nil {
			t.Fatal(err)
		}
		if out[i], err = json.Marshal(e); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestClientSend(t *testing.T) {
	g := graphtest.New(t)
	c := NewClient(ClientOptions{BaseURL: g.URL, APIVersion: "v24.0", HTTP: g.Client()})
	now := time.Now()
	resp, err := c.Send(context.Background(), SendRequest{PixelID: "123456789", AccessToken: graphtest.Token,
		TestEventCode: "TEST42", Events: rawEvents(t, 2, now)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.EventsReceived != 2 || resp.FBTraceID == "" || len(resp.Raw) == 0 {
		t.Errorf("response %+v", resp)
	}
	got := g.Events()
	if len(got) != 2 || got[0].EventID != "ev-0" || got[1].TestEventCode != "TEST42" || got[0].PixelID != "123456789" {
		t.Fatalf("received %+v", got)
	}
	var e Event
	if err := json.Unmarshal(got[0].JSON, &e); err != nil {
		t.Fatal(err)
	}
	if e.UserData.Phone[0] != Hash("905324128719") || e.UserData.LeadID != "1234567890123456789" {
		t.Errorf("received user_data %+v", e.UserData)
	}
}

func TestClientBatches(t *testing.T) {
	g := graphtest.New(t)
	c := NewClient(ClientOptions{BaseURL: g.URL, HTTP: g.Client()})
	all := rawEvents(t, 2500, time.Now())
	for start := 0; start < len(all); start += MaxBatch {
		batch := all[start:min(start+MaxBatch, len(all))]
		if _, err := c.Send(context.Background(), SendRequest{PixelID: "1", AccessToken: graphtest.Token, Events: batch}); err != nil {
			t.Fatal(err)
		}
	}
	if g.Requests() != 3 || len(g.Events()) != 2500 {
		t.Errorf("requests %d, events %d", g.Requests(), len(g.Events()))
	}
	_, err := c.Send(context.Background(), SendRequest{PixelID: "1", AccessToken: graphtest.Token, Events: rawEvents(t, MaxBatch+1, time.Now())})
	if !errors.Is(err, ErrInvalidRequest) || Classify(err) != ClassRejected || g.Requests() != 3 {
		t.Errorf("oversized batch: %v (requests %d)", err, g.Requests())
	}
}

func TestClientErrors(t *testing.T) {
	const secret = "s3cr3t-token"
	now := time.Now()
	tests := []struct {
		name      string
		setup     func(g *graphtest.Server)
		events    []json.RawMessage
		token     string
		class     Class
		code, sub int
		retry     time.Duration
	}{
		{"5xx", func(g *graphtest.Server) { g.FailNext(1, graphtest.FaultServerError) }, nil, "", ClassTransient, 2, 0, 0},
		{"throttle 17", func(g *graphtest.Server) {
			g.SetRetryAfter(7 * time.Second)
			g.FailNext(1, graphtest.FaultThrottle17)
		}, nil, "", ClassThrottled, 17, 2446079, 7 * time.Second},
		{"throttle 613", func(g *graphtest.Server) { g.FailNext(1, graphtest.FaultThrottle613) }, nil, "", ClassThrottled, 613, 0, 0},
		{"throttle 80004", func(g *graphtest.Server) { g.FailNext(1, graphtest.FaultThrottle80004) }, nil, "", ClassThrottled, 80004, 2446079, 0},
		{"expired token", func(g *graphtest.Server) { g.FailNext(1, graphtest.FaultAuth) }, nil, "", ClassAuth, 190, 463, 0},
		{"wrong token", nil, nil, "wrong-" + secret, ClassAuth, 190, 0, 0},
		{"old event", nil, rawEvents(t, 1, now.Add(-model.MaxEventAge-time.Hour)), "", ClassRejected, 100, graphtest.SubcodeTooOld, 0},
		{"hang", func(g *graphtest.Server) { g.FailNext(1, graphtest.FaultHang) }, nil, "", ClassTransient, 0, 0, 0},
		{"drop", func(g *graphtest.Server) { g.FailNext(1, graphtest.FaultDrop) }, nil, "", ClassTransient, 0, 0, 0},
		{"server gone", func(g *graphtest.Server) { g.Close() }, nil, "", ClassTransient, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := graphtest.New(t)
			g.SetTokens(secret)
			if tt.setup != nil {
				tt.setup(g)
			}
			c := NewClient(ClientOptions{BaseURL: g.URL, HTTP: &http.Client{}, Timeout: 300 * time.Millisecond})
			events, token := tt.events, tt.token
			if events == nil {
				events = rawEvents(t, 2, now)
			}
			if token == "" {
				token = secret
			}
			_, err := c.Send(context.Background(), SendRequest{PixelID: "42", AccessToken: token, Events: events})
			if err == nil {
				t.Fatal("no error")
			}
			if got := Classify(err); got != tt.class {
				t.Errorf("Classify(%v) = %v, want %v", err, got, tt.class)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("token in error: %v", err)
			}
			var ae *APIError
			if tt.code != 0 && (!errors.As(err, &ae) || ae.Code != tt.code || ae.Subcode != tt.sub || ae.FBTraceID == "") {
				t.Errorf("error %#v, want code %d/%d with fbtrace_id", err, tt.code, tt.sub)
			}
			if RetryAfter(err) != tt.retry {
				t.Errorf("RetryAfter = %v, want %v", RetryAfter(err), tt.retry)
			}
			if len(g.Events()) != 0 {
				t.Errorf("%d events accepted", len(g.Events()))
			}
		})
	}
}

func TestSendRefuses(t *testing.T) {
	c := NewClient(ClientOptions{BaseURL: "http://127.0.0.1:1"})
	ev := []json.RawMessage{json.RawMessage(`{}`)}
	for _, req := range []SendRequest{
		{AccessToken: "t", Events: ev},
		{PixelID: "1/2", AccessToken: "t", Events: ev},
		{PixelID: "1", Events: ev},
		{PixelID: "1", AccessToken: "t"},
	} {
		if _, err := c.Send(context.Background(), req); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("Send(%+v) = %v", req, err)
		}
	}
}

func TestAPIErrorClass(t *testing.T) {
	tests := []struct {
		e    APIError
		want Class
	}{
		{APIError{Status: 500, Code: 1}, ClassTransient},
		{APIError{Status: 400, Code: 2}, ClassTransient},
		{APIError{Status: 400, Code: 100, IsTransient: true}, ClassTransient},
		{APIError{Status: 503}, ClassTransient},
		{APIError{Status: 400, Code: 4}, ClassThrottled},
		{APIError{Status: 400, Code: 17}, ClassThrottled},
		{APIError{Status: 400, Code: 32}, ClassThrottled},
		{APIError{Status: 400, Code: 341}, ClassThrottled},
		{APIError{Status: 400, Code: 613}, ClassThrottled},
		{APIError{Status: 400, Code: 80000}, ClassThrottled},
		{APIError{Status: 400, Code: 80014}, ClassThrottled},
		{APIError{Status: 429}, ClassThrottled},
		{APIError{Status: 400, Code: 100, Subcode: 2804003}, ClassRejected},
		{APIError{Status: 400, Code: 80015}, ClassRejected},
		{APIError{Status: 404}, ClassRejected},
		{APIError{Status: 400, Code: 190}, ClassAuth},
		{APIError{Status: 401, Code: 190, IsTransient: true}, ClassAuth},
		{APIError{Status: 400, Code: 10}, ClassAuth},
		{APIError{Status: 403, Code: 200}, ClassAuth},
		{APIError{Status: 400, Code: 299}, ClassAuth},
		{APIError{Status: 401}, ClassAuth},
	}
	for _, tt := range tests {
		t.Run(tt.e.Error(), func(t *testing.T) {
			if got := Classify(fmt.Errorf("wrapped: %w", &tt.e)); got != tt.want {
				t.Errorf("Classify = %v, want %v", got, tt.want)
			}
		})
	}
	if Classify(nil) != ClassNone || Classify(context.DeadlineExceeded) != ClassTransient {
		t.Error("Classify of nil or a timeout")
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 5, 20, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"30", 30 * time.Second},
		{"-1", 0},
		{"soon", 0},
		{now.Add(time.Minute).Format(http.TimeFormat), time.Minute},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := parseRetryAfter(tt.in, now); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// urlRecorder records the URL of every request it carries.
type urlRecorder struct {
	mu   sync.Mutex
	urls []string
	next http.RoundTripper
}

func (u *urlRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	u.mu.Lock()
	u.urls = append(u.urls, r.URL.String())
	u.mu.Unlock()
	return u.next.RoundTrip(r)
}

// TestClientTokenNotInURL: proxies and access logs record URLs, so the token
// goes in the body; the stand-in still accepts it there.
func TestClientTokenNotInURL(t *testing.T) {
	g := graphtest.New(t)
	rec := &urlRecorder{next: g.Client().Transport}
	c := NewClient(ClientOptions{BaseURL: g.URL, HTTP: &http.Client{Transport: rec}})
	if _, err := c.Send(context.Background(), SendRequest{PixelID: "7", AccessToken: graphtest.Token,
		Events: rawEvents(t, 1, time.Now())}); err != nil {
		t.Fatal(err)
	}
	if len(rec.urls) != 1 || strings.Contains(rec.urls[0], "access_token") || strings.Contains(rec.urls[0], graphtest.Token) {
		t.Errorf("request URLs %q", rec.urls)
	}
	if len(g.Events()) != 1 {
		t.Errorf("stand-in accepted %d events", len(g.Events()))
	}
}
