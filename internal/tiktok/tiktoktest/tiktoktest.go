// Package tiktoktest is a local stand-in for TikTok's Events API 2.0
// (POST /open_api/v1.3/event/track/), for the tests of every package. It
// checks a request as TikTok's documentation describes it and answers as
// TikTok does: HTTP 200 with {code, message, request_id, data}, code 0 on
// success and TikTok's error code otherwise.
//
// What it checks: the Access-Token header (none: 40104; another than the
// server's: 40105); the JSON body; event_source ("web", "app", "offline",
// "crm") and event_source_id (a pixel code or CRM event set the server
// knows, else 40001: the token has no permission for it); 1 to 1,000
// events in data; each event's name, event_time (Unix seconds, not in the
// future, not older than 7 days for web and 28 for the others), event_id;
// email, phone and external_id as lower-case hex SHA-256; page.url
// absolute; a currency of three capital letters; lead only in CRM
// events; a test_event_code equal to the server's. One bad event fails
// the whole request with 40002 and names no event, as TikTok does.
//
// Faults can be switched on to drive a platform through every failure:
// FailNext answers the next requests with an error code, FailNextHTTP
// with an HTTP status, FailAll every request until undone, Refuse fails
// every request carrying an event id (until Allow),
// Pause refuses the token as revoked until Resume. Requests lists every
// request received and Accepted every event accepted, for assertions.
// It imports nothing of ours, so it checks the tiktok package
// independently. A Server is safe for concurrent use.
package tiktoktest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"
)

// What a new Server accepts.
const (
	AccessToken   = "tiktoktest-access-token"
	PixelCode     = "CTIKTOKTEST00PIXEL01"
	CRMEventSetID = "7300000000000000001"
	TestEventCode = "TEST42"
)

// Path is the Events API 2.0 path the server answers.
const Path = "/open_api/v1.3/event/track/"

// MaxBatch is TikTok's limit of events per request.
const MaxBatch = 1000

// How old an event TikTok takes, by event source.
const (
	WebMaxAge   = 7 * 24 * time.Hour
	OtherMaxAge = 28 * 24 * time.Hour
)

// TikTok's answer codes the server gives.
const (
	CodeOK            = 0
	CodeNoPermission  = 40001
	CodeInvalidParam  = 40002
	CodeTooFrequent   = 40100
	CodeTokenExpired  = 40102
	CodeTokenEmpty    = 40104
	CodeTokenInvalid  = 40105
	CodeSystemError   = 50000
	CodeSystemTimeout = 50002
)

// Request is one request the server received, and its answer.
type Request struct {
	N             int // 1-based
	AccessToken   string
	EventSource   string
	EventSourceID string
	TestEventCode string
	Events        []json.RawMessage
	// Code is the answer's code (HTTPStatus when it answered with an
	// HTTP error instead).
	Code       int
	HTTPStatus int
	Message    string
}

// EventIDs are the event ids of the request's events, in order.
func (r Request) EventIDs() []string {
	ids := make([]string, len(r.Events))
	for i, e := range r.Events {
		var v struct {
			EventID string `json:"event_id"`
		}
		json.Unmarshal(e, &v)
		ids[i] = v.EventID
	}
	return ids
}

// Received is one accepted event.
type Received struct {
	Request       int
	EventSource   string
	EventSourceID string
	TestEventCode string
	Name          string
	EventID       string
	JSON          json.RawMessage
	Event         map[string]any
}

type fault struct {
	code, status int
	retryAfter   string
}

// failAt is a fault of one request, by its number.
type failAt struct {
	n, code int
}

// Server is the stand-in; its URL is the base URL of TikTok's Business API.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	now      func() time.Time
	token    string
	pixels   map[string]bool
	sets     map[string]bool
	testCode string
	queue    []fault
	at       []failAt
	refused  map[string]string
	down     int // FailAll's code, 0 when none
	paused   bool
	requests []Request
	accepted []Received
}

// New starts a Server that knows PixelCode and CRMEventSetID and takes
// AccessToken; it is closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{now: time.Now, token: AccessToken, pixels: map[string]bool{PixelCode: true},
		sets: map[string]bool{CRMEventSetID: true}, testCode: TestEventCode, refused: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc(Path, s.track)
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// SetNow sets the server's clock, for event ages.
func (s *Server) SetNow(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// AddPixel makes the server know another pixel code.
func (s *Server) AddPixel(code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pixels[code] = true
}

// FailNext answers the next n requests with TikTok's error code (and
// Retry-After, when retryAfter is not empty), before checking them.
func (s *Server) FailNext(n, code int, retryAfter string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.queue = append(s.queue, fault{code: code, retryAfter: retryAfter})
	}
}

// FailAt answers the n-th request the server receives (1-based, counted
// from its start) with TikTok's error code, whatever comes before it.
func (s *Server) FailAt(n, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at = append(s.at, failAt{n: n, code: code})
}

// FailNextHTTP answers the next n requests with an HTTP status and a body
// that is not TikTok's JSON, as a proxy or an outage does.
func (s *Server) FailNextHTTP(n, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.queue = append(s.queue, fault{status: status})
	}
}

// Refuse fails every request that carries the event id with 40002 and
// why, as TikTok fails a request for one bad event.
func (s *Server) Refuse(eventID, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refused[eventID] = why
}

// Allow takes the event id again after Refuse.
func (s *Server) Allow(eventID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.refused, eventID)
}

// FailAll answers every request with TikTok's error code, after any
// FailAt and FailNext faults, until FailAll(CodeOK): with CodeInvalidParam,
// a permanent refusal of the data that names no event.
func (s *Server) FailAll(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = code
}

// Pause refuses the access token as revoked (40105) until Resume.
func (s *Server) Pause() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paused = true
}

// Resume takes the access token again.
func (s *Server) Resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paused = false
}

// Requests returns every request received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Accepted returns every event accepted, in order.
func (s *Server) Accepted() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.accepted...)
}

// AcceptedIDs returns the event ids accepted, in order.
func (s *Server) AcceptedIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, len(s.accepted))
	for i, r := range s.accepted {
		ids[i] = r.EventID
	}
	return ids
}

type body struct {
	EventSource   string            `json:"event_source"`
	EventSourceID string            `json:"event_source_id"`
	TestEventCode string            `json:"test_event_code"`
	Data          []json.RawMessage `json:"data"`
}

func (s *Server) track(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := Request{N: len(s.requests) + 1, AccessToken: r.Header.Get("Access-Token")}
	answer := func(code int, msg string) {
		rec.Code, rec.Message = code, msg
		s.requests = append(s.requests, rec)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"code": code, "message": msg,
			"request_id": fmt.Sprintf("tiktoktest-%d", rec.N), "data": map[string]any{}})
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	var b body
	if err == nil {
		err = json.Unmarshal(raw, &b)
	}
	if err == nil {
		rec.EventSource, rec.EventSourceID, rec.TestEventCode, rec.Events = b.EventSource, b.EventSourceID, b.TestEventCode, b.Data
	}
	for _, f := range s.at {
		if f.n == rec.N {
			answer(f.code, faultMessage(f.code))
			return
		}
	}
	if len(s.queue) > 0 {
		f := s.queue[0]
		s.queue = s.queue[1:]
		if f.status != 0 {
			rec.HTTPStatus = f.status
			s.requests = append(s.requests, rec)
			http.Error(w, http.StatusText(f.status), f.status)
			return
		}
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		answer(f.code, faultMessage(f.code))
		return
	}
	if s.down != CodeOK {
		answer(s.down, faultMessage(s.down))
		return
	}
	switch {
	case r.Method != http.MethodPost:
		answer(40400, "the route takes POST only")
		return
	case rec.AccessToken == "":
		answer(CodeTokenEmpty, "Access token is empty: set the Access-Token header")
		return
	case rec.AccessToken != s.token || s.paused:
		answer(CodeTokenInvalid, "Access token is incorrect or has been revoked.")
		return
	case err != nil:
		answer(CodeInvalidParam, "the body is not JSON: "+err.Error())
		return
	}
	if msg := s.checkRequest(&b); msg != nil {
		answer(msg.code, msg.text)
		return
	}
	now := s.now()
	var got []Received
	for i, ev := range b.Data {
		e, why := checkEvent(ev, b.EventSource, now)
		if why != "" {
			answer(CodeInvalidParam, fmt.Sprintf("Invalid parameters: %s", why))
			return
		}
		id, _ := e["event_id"].(string)
		if reason, ok := s.refused[id]; ok && id != "" {
			answer(CodeInvalidParam, "Invalid parameters: "+reason)
			return
		}
		name, _ := e["event"].(string)
		got = append(got, Received{Request: rec.N, EventSource: b.EventSource, EventSourceID: b.EventSourceID,
			TestEventCode: b.TestEventCode, Name: name, EventID: id, JSON: b.Data[i], Event: e})
	}
	s.accepted = append(s.accepted, got...)
	answer(CodeOK, "OK")
}

type problem struct {
	code int
	text string
}

func (s *Server) checkRequest(b *body) *problem {
	bad := func(code int, format string, args ...any) *problem {
		return &problem{code, fmt.Sprintf(format, args...)}
	}
	switch b.EventSource {
	case "web":
		if b.EventSourceID == "" {
			return bad(CodeInvalidParam, "Invalid parameters: event_source_id is required")
		}
		if !s.pixels[b.EventSourceID] {
			return bad(CodeNoPermission, "No permission to operate pixel code %s", b.EventSourceID)
		}
	case "crm", "offline", "app":
		if b.EventSourceID == "" {
			return bad(CodeInvalidParam, "Invalid parameters: event_source_id is required")
		}
		if !s.sets[b.EventSourceID] {
			return bad(CodeNoPermission, "No permission to operate event set %s", b.EventSourceID)
		}
	default:
		return bad(CodeInvalidParam, "Invalid parameters: event_source must be web, app, offline or crm, not %q", b.EventSource)
	}
	if b.TestEventCode != "" && b.TestEventCode != s.testCode {
		return bad(CodeInvalidParam, "Invalid parameters: test_event_code %q is not this source's", b.TestEventCode)
	}
	if len(b.Data) == 0 || len(b.Data) > MaxBatch {
		return bad(CodeInvalidParam, "Invalid parameters: data must hold 1 to %d events, not %d", MaxBatch, len(b.Data))
	}
	return nil
}

// checkEvent reads one event and says what is wrong with it, or "".
func checkEvent(raw json.RawMessage, source string, now time.Time) (map[string]any, string) {
	var e map[string]any
	if err := json.Unmarshal(raw, &e); err != nil || e == nil {
		return nil, "an event is not a JSON object"
	}
	if name, _ := e["event"].(string); name == "" {
		return e, "event is required"
	}
	t, ok := e["event_time"].(float64)
	if !ok || t != float64(int64(t)) || t <= 0 {
		return e, "event_time must be Unix seconds"
	}
	at := time.Unix(int64(t), 0)
	maxAge := OtherMaxAge
	if source == "web" {
		maxAge = WebMaxAge
	}
	switch {
	case at.After(now.Add(time.Minute)):
		return e, "event_time is in the future"
	case now.Sub(at) > maxAge:
		return e, fmt.Sprintf("event_time is older than %d days", int(maxAge.Hours()/24))
	}
	if v, ok := e["event_id"]; ok {
		if _, isString := v.(string); !isString {
			return e, "event_id must be a string"
		}
	}
	u, _ := e["user"].(map[string]any)
	if e["user"] != nil && u == nil {
		return e, "user must be an object"
	}
	for _, k := range []string{"email", "phone", "external_id"} {
		v, ok := u[k]
		if !ok {
			continue
		}
		s, _ := v.(string)
		if !isSHA256(s) {
			return e, fmt.Sprintf("user.%s must be hashed with SHA-256 (64 lower-case hex digits)", k)
		}
	}
	for _, k := range []string{"ttclid", "ttp", "ip", "user_agent"} {
		if v, ok := u[k]; ok {
			if _, isString := v.(string); !isString {
				return e, fmt.Sprintf("user.%s must be a string", k)
			}
		}
	}
	if pg, ok := e["page"].(map[string]any); ok {
		if s, ok := pg["url"].(string); ok && s != "" {
			if pu, err := url.Parse(s); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
				return e, "page.url must be an absolute http(s) URL"
			}
		}
	}
	if pr, ok := e["properties"].(map[string]any); ok {
		if v, ok := pr["value"]; ok {
			if _, isNumber := v.(float64); !isNumber {
				return e, "properties.value must be a number"
			}
		}
		if c, ok := pr["currency"]; ok {
			if s, _ := c.(string); !isCurrency(s) {
				return e, "properties.currency must be an ISO 4217 code"
			}
		}
	}
	if l, ok := e["lead"].(map[string]any); ok {
		if source != "crm" {
			return e, "lead is for crm events only"
		}
		if id, ok := l["lead_id"]; ok {
			s, _ := id.(string)
			if _, err := strconv.ParseUint(s, 10, 64); err != nil {
				return e, "lead.lead_id must be a TikTok lead id (digits)"
			}
		}
	}
	return e, ""
}

func faultMessage(code int) string {
	switch code {
	case CodeTooFrequent:
		return "Requests made too frequently."
	case CodeSystemError:
		return "System error."
	case CodeSystemTimeout:
		return "System timeout."
	case CodeNoPermission:
		return "No permission to operate this event source."
	case CodeTokenExpired:
		return "Access token has expired."
	case CodeTokenInvalid:
		return "Access token is incorrect or has been revoked."
	case CodeInvalidParam:
		return "Invalid parameters."
	}
	return "error " + strconv.Itoa(code)
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func isCurrency(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}
