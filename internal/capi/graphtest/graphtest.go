// Package graphtest is a local stand-in for the Conversions API edge of
// Meta's Graph API (POST /{version}/{pixel}/events), for the tests of every
// package. It is as strict as Meta's documentation: a wrong or missing token
// is refused with Meta's OAuth errors, and one bad event (older than 7 days,
// a hashed key that is not 64 lowercase hex, a website event without
// client_user_agent or event_source_url, more than 1000 events, no customer
// information) fails the whole request with code 100 and a 2804xxx subcode,
// in Meta's error format. Accepted events are recorded for assertions, and
// faults (5xx, throttling, hangs, dropped connections, expired tokens, a
// permanent "Invalid parameter") can be injected; Refuse makes one event id
// invalid, failing every request that carries it. Business messaging events (a WhatsApp Business Account's
// dataset, SetDataset) are checked as Meta's Conversions API for Business
// Messaging checks them: messaging_channel, the WABA id and ctwa_clid on
// WhatsApp, only the event names Meta takes from a conversation, and WhatsApp
// ids on no other action_source. It imports nothing of ours, so it checks
// the capi package independently. A Server is safe for concurrent use.
package graphtest

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Token is the access token a new Server accepts.
const Token = "graphtest-token"

// MaxBatch is Meta's limit of events per request.
const MaxBatch = 1000

// MaxEventAge is Meta's limit on an event's age.
const MaxEventAge = 7 * 24 * time.Hour

// maxFuture is how far ahead of the server's clock an event_time may be.
const maxFuture = 5 * time.Minute

// Subcodes of the code-100 rejections. 2804003 is the one Meta documents for
// an event too far in the past; the others are stand-ins in Meta's 2804xxx
// range, each naming one rule so tests can tell them apart.
const (
	SubcodeTooOld        = 2804003
	SubcodeInFuture      = 2804004
	SubcodeBadHash       = 2804019
	SubcodeTooMany       = 2804024
	SubcodeMissingField  = 2804008
	SubcodeNoCustomerKey = 2804050
	SubcodeMalformed     = 2804001
	// SubcodeMessagingEventType is Meta's answer to a business_messaging
	// event whose name is not one it takes from a conversation
	// ("Messaging Event Invalid Event Type").
	SubcodeMessagingEventType = 2804066
	// SubcodeMessagingActionSource refuses WhatsApp ids (ctwa_clid,
	// whatsapp_business_account_id) on an event that is not
	// business_messaging; SubcodeMessagingUserData a WhatsApp
	// business_messaging event without them, or for another WABA than
	// the dataset's.
	SubcodeMessagingActionSource = 2804065
	SubcodeMessagingUserData     = 2804067
)

// MessagingEventNames are the event names Meta takes from a business
// messaging conversation (action_source business_messaging).
var MessagingEventNames = []string{
	"LeadSubmitted", "QualifiedLead", "Purchase", "InitiateCheckout", "AddToCart", "ViewContent",
	"OrderCreated", "OrderShipped", "OrderDelivered", "OrderCanceled", "OrderReturned", "CartAbandoned",
	"RatingProvided", "ReviewProvided",
}

// Fault is a failure the server answers with instead of processing.
type Fault int

// The faults.
const (
	FaultNone          Fault = iota
	FaultServerError         // HTTP 500, code 2, is_transient
	FaultThrottle17          // code 17, user request limit reached
	FaultThrottle613         // code 613, rate limit exceeded
	FaultThrottle80004       // code 80004, too many calls to the ad account
	FaultHang                // no answer until the client gives up or the server closes
	FaultDrop                // the connection is closed without an answer
	FaultAuth                // code 190, the token has expired
	// FaultInvalidParameter is code 100, "Invalid parameter", naming no
	// event: a permanent refusal of the request's data, not of the
	// credentials.
	FaultInvalidParameter
)

// Received is one accepted event.
type Received struct {
	Request       int // 1-based number of the request that carried it
	Index         int // its index in that request's data
	PixelID       string
	TestEventCode string
	EventName     string
	EventID       string
	ActionSource  string
	JSON          json.RawMessage
}

// Server is the stand-in; its URL is the base URL to give a client.
type Server struct {
	*httptest.Server

	quit      chan struct{}
	closeOnce sync.Once

	mu          sync.Mutex
	tokens      map[string]bool
	now         func() time.Time
	queue       []Fault
	window      Fault
	windowUntil time.Time
	retryAfter  time.Duration
	requests    int
	events      []Received
	// refused are the event ids a request may not carry, with why (Refuse).
	refused map[string]string
	leadgen *leadgenState // the Lead Ads side (leadgen.go), made on first use
	// datasets maps a WhatsApp Business Account's dataset id to the WABA.
	datasets map[string]string
	// quality is each dataset's figures for the Dataset Quality API
	// (quality.go); qualityReads counts the reads answered.
	quality      map[string][]QualityEvent
	qualityReads int
}

// SetDataset makes datasetID the dataset of the WhatsApp Business Account
// wabaID: business_messaging events sent to it must name that WABA.
func (s *Server) SetDataset(datasetID, wabaID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.datasets == nil {
		s.datasets = map[string]string{}
	}
	s.datasets[datasetID] = wabaID
}

// New starts a Server accepting Token, closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		quit:   make(chan struct{}),
		tokens: map[string]bool{Token: true},
		now:    time.Now,
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Close releases hanging requests and shuts the server down; safe twice.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.quit)
		s.Server.Close()
	})
}

// SetTokens replaces the accepted access tokens.
func (s *Server) SetTokens(tokens ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens = make(map[string]bool, len(tokens))
	for _, t := range tokens {
		s.tokens[t] = true
	}
}

// SetNow sets the clock events are judged by (default time.Now).
func (s *Server) SetNow(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// FailNext makes the next n requests answer with f.
func (s *Server) FailNext(n int, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.queue = append(s.queue, f)
	}
}

// Refuse makes the server refuse every request that carries the event id
// as Meta refuses a batch with one invalid event: the whole request fails
// with code 100 and subcode SubcodeMalformed, the message naming the
// event's index and why.
func (s *Server) Refuse(eventID, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refused == nil {
		s.refused = map[string]string{}
	}
	s.refused[eventID] = why
}

// Allow takes the event id again after Refuse.
func (s *Server) Allow(eventID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.refused, eventID)
}

// FailFor makes every request answer with f for d from now (by the server's
// clock), after any queued FailNext faults.
func (s *Server) FailFor(d time.Duration, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.window, s.windowUntil = f, s.now().Add(d)
}

// SetRetryAfter makes throttling answers carry Retry-After (0: none).
func (s *Server) SetRetryAfter(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.retryAfter = d
}

// Requests is the number of requests received, faulty ones included.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Events returns a copy of the accepted events, in arrival order.
func (s *Server) Events() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.events...)
}

// Reset forgets requests, events and faults.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests, s.events, s.queue, s.window, s.windowUntil = 0, nil, nil, FaultNone, time.Time{}
}

// metaError is Meta's error object.
type metaError struct {
	Message     string `json:"message"`
	Type        string `json:"type"`
	Code        int    `json:"code"`
	Subcode     int    `json:"error_subcode,omitempty"`
	IsTransient bool   `json:"is_transient"`
	UserTitle   string `json:"error_user_title,omitempty"`
	UserMsg     string `json:"error_user_msg,omitempty"`
	FBTraceID   string `json:"fbtrace_id"`
}

func (s *Server) fail(w http.ResponseWriter, status int, e metaError) {
	if e.Type == "" {
		e.Type = "OAuthException"
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Fb-Trace-Id", e.FBTraceID)
	if e.Code == 190 || e.Code == 104 {
		w.Header().Set("WWW-Authenticate", `OAuth "Facebook Platform" "invalid_token" "`+e.Message+`"`)
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]metaError{"error": e})
}

func (s *Server) reject(w http.ResponseWriter, trace string, subcode int, title, msg string) {
	s.fail(w, http.StatusBadRequest, metaError{
		Message: "Invalid parameter: " + msg, Code: 100, Subcode: subcode,
		UserTitle: title, UserMsg: msg, FBTraceID: trace,
	})
}

var (
	pathRE   = regexp.MustCompile(`^/(v[0-9]+\.[0-9]+)/([0-9]+)/events$`)
	objectRE = regexp.MustCompile(`^/(v[0-9]+\.[0-9]+)/([0-9]+)$`)
)

// PixelName is the name the server gives every pixel it is asked about.
func PixelName(id string) string { return "graphtest pixel " + id }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	n := s.requests
	fault := FaultNone
	if len(s.queue) > 0 {
		fault, s.queue = s.queue[0], s.queue[1:]
	} else if s.window != FaultNone && s.now().Before(s.windowUntil) {
		fault = s.window
	}
	now, retryAfter := s.now(), s.retryAfter
	s.mu.Unlock()
	trace := "graphtest-" + strconv.Itoa(n)

	if s.injure(w, r, fault, trace, retryAfter) {
		return
	}
	if s.serveQuality(w, r, trace) {
		return
	}
	if s.serveLeadgen(w, r, trace) {
		return
	}
	if o := objectRE.FindStringSubmatch(r.URL.Path); o != nil && r.Method == http.MethodGet {
		s.object(w, r, o[2], trace)
		return
	}
	m := pathRE.FindStringSubmatch(r.URL.Path)
	if r.Method != http.MethodPost || m == nil {
		s.fail(w, http.StatusBadRequest, metaError{Code: 100, Subcode: 33, FBTraceID: trace,
			Message: fmt.Sprintf("Unsupported %s request for %s: use POST /{version}/{pixel_id}/events", r.Method, r.URL.Path)})
		return
	}
	pixel := m[2]
	body, err := readBody(r)
	if err != nil {
		s.reject(w, trace, SubcodeMalformed, "Malformed request", err.Error())
		return
	}
	token := r.URL.Query().Get("access_token")
	if token == "" {
		token = body.AccessToken
	}
	if token == "" {
		token = headerToken(r)
	}
	if !s.authorized(w, token, trace) {
		return
	}
	if body.Data == nil {
		s.reject(w, trace, SubcodeMalformed, "Missing data", "the parameter data is required and must be an array of events")
		return
	}
	if len(body.Data) > MaxBatch {
		s.reject(w, trace, SubcodeTooMany, "Too many events",
			fmt.Sprintf("%d events in one request; at most %d are allowed", len(body.Data), MaxBatch))
		return
	}
	s.mu.Lock()
	waba, isDataset := s.datasets[pixel]
	refused := make(map[string]string, len(s.refused))
	for id, why := range s.refused {
		refused[id] = why
	}
	s.mu.Unlock()
	got := make([]Received, 0, len(body.Data))
	for i, raw := range body.Data {
		ev, sub, why := check(raw, now)
		if why == "" && ev.ActionSource == "business_messaging" && isDataset {
			var got string
			_ = json.Unmarshal(ev.UserData["whatsapp_business_account_id"], &got)
			if ev.MessagingChannel == "whatsapp" && got != waba {
				sub, why = SubcodeMessagingUserData, fmt.Sprintf("whatsapp_business_account_id %q is not the WhatsApp Business Account of dataset %s", got, pixel)
			}
		}
		if r, ok := refused[ev.EventID]; why == "" && ok && ev.EventID != "" {
			sub, why = SubcodeMalformed, r
		}
		if why != "" {
			title := "Invalid event"
			if sub == SubcodeMessagingEventType {
				title = "Messaging Event Invalid Event Type"
			}
			s.reject(w, trace, sub, title, fmt.Sprintf("event %d (data[%d]): %s", i, i, why))
			return
		}
		got = append(got, Received{Request: n, Index: i, PixelID: pixel, TestEventCode: body.TestEventCode,
			EventName: ev.EventName, EventID: ev.EventID, ActionSource: ev.ActionSource,
			JSON: append(json.RawMessage(nil), raw...)})
	}
	s.mu.Lock()
	s.events = append(s.events, got...)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"events_received": len(got), "messages": []string{}, "fbtrace_id": trace})
}

// object answers GET /{version}/{pixel}?fields=id,name, the read that
// checks a token without sending anything: the pixel's id and name with a
// valid token (in the query or an Authorization header), Meta's OAuth
// errors otherwise. Only the fields id and name exist here.
func (s *Server) object(w http.ResponseWriter, r *http.Request, id, trace string) {
	token := r.URL.Query().Get("access_token")
	if token == "" {
		token = headerToken(r)
	}
	if !s.authorized(w, token, trace) {
		return
	}
	out := map[string]string{"id": id}
	for _, f := range strings.Split(r.URL.Query().Get("fields"), ",") {
		switch f = strings.TrimSpace(f); f {
		case "", "id":
		case "name":
			out["name"] = PixelName(id)
		default:
			s.fail(w, http.StatusBadRequest, metaError{Code: 100, FBTraceID: trace,
				Message: fmt.Sprintf("(#100) Tried accessing nonexisting field (%s) on node type (AdsPixel)", f)})
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// headerToken is the token of an Authorization: Bearer (or OAuth) header.
func headerToken(r *http.Request) string {
	a := r.Header.Get("Authorization")
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(a, "Bearer "), "OAuth "))
}

// authorized answers Meta's OAuth errors for a missing or unknown token
// and says whether the token is accepted.
func (s *Server) authorized(w http.ResponseWriter, token, trace string) bool {
	s.mu.Lock()
	valid := s.tokens[token]
	s.mu.Unlock()
	switch {
	case token == "":
		s.fail(w, http.StatusBadRequest, metaError{Code: 104, FBTraceID: trace,
			Message: "An access token is required to request this resource."})
		return false
	case !valid:
		s.fail(w, http.StatusBadRequest, metaError{Code: 190, FBTraceID: trace,
			Message: "Invalid OAuth access token - Cannot parse access token"})
		return false
	}
	return true
}

// injure answers with fault and says whether it did.
func (s *Server) injure(w http.ResponseWriter, r *http.Request, fault Fault, trace string, retryAfter time.Duration) bool {
	throttle := func(code, sub int, msg string) {
		if retryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(retryAfter.Round(time.Second)/time.Second)))
		}
		s.fail(w, http.StatusBadRequest, metaError{Code: code, Subcode: sub, Message: msg, IsTransient: true, FBTraceID: trace})
	}
	switch fault {
	case FaultNone:
		return false
	case FaultServerError:
		s.fail(w, http.StatusInternalServerError, metaError{Code: 2, IsTransient: true, FBTraceID: trace,
			Message: "An unexpected error has occurred. Please retry your request later."})
	case FaultThrottle17:
		throttle(17, 2446079, "(#17) User request limit reached")
	case FaultThrottle613:
		throttle(613, 0, "(#613) Calls to this api have exceeded the rate limit.")
	case FaultThrottle80004:
		throttle(80004, 2446079, "There have been too many calls to this ad-account. Wait a bit and try again.")
	case FaultHang:
		select {
		case <-r.Context().Done():
		case <-s.quit:
		}
	case FaultDrop:
		hj, ok := w.(http.Hijacker)
		if !ok {
			panic("graphtest: connection cannot be hijacked")
		}
		conn, _, err := hj.Hijack()
		if err == nil {
			_ = conn.Close()
		}
	case FaultAuth:
		s.fail(w, http.StatusBadRequest, metaError{Code: 190, Subcode: 463, FBTraceID: trace,
			Message: "Error validating access token: Session has expired."})
	case FaultInvalidParameter:
		s.fail(w, http.StatusBadRequest, metaError{Code: 100, FBTraceID: trace, Message: "Invalid parameter"})
	}
	return true
}

type requestBody struct {
	Data          []json.RawMessage
	TestEventCode string
	AccessToken   string
}

// readBody reads a JSON body {"data": [...], "test_event_code", "access_token"}
// or a form whose data field is the JSON array, as in Meta's curl examples.
func readBody(r *http.Request) (requestBody, error) {
	var out requestBody
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/x-www-form-urlencoded" || ct == "multipart/form-data" {
		if err := r.ParseMultipartForm(32 << 20); err != nil && err != http.ErrNotMultipart {
			return out, fmt.Errorf("unreadable form: %v", err)
		}
		out.TestEventCode, out.AccessToken = r.PostFormValue("test_event_code"), r.PostFormValue("access_token")
		if d := r.PostFormValue("data"); d != "" {
			if err := json.Unmarshal([]byte(d), &out.Data); err != nil {
				return out, fmt.Errorf("data is not a JSON array: %v", err)
			}
		}
		return out, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return out, fmt.Errorf("unreadable body: %v", err)
	}
	var j struct {
		Data          []json.RawMessage `json:"data"`
		TestEventCode string            `json:"test_event_code"`
		AccessToken   string            `json:"access_token"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return out, fmt.Errorf("body is not a JSON object with a data array: %v", err)
	}
	return requestBody{Data: j.Data, TestEventCode: j.TestEventCode, AccessToken: j.AccessToken}, nil
}

type event struct {
	EventName      string                     `json:"event_name"`
	EventTime      json.Number                `json:"event_time"`
	EventID        string                     `json:"event_id"`
	ActionSource   string                     `json:"action_source"`
	EventSourceURL string                     `json:"event_source_url"`
	UserData       map[string]json.RawMessage `json:"user_data"`

	// MessagingChannel is whatsapp, messenger or instagram on a
	// business_messaging event.
	MessagingChannel string `json:"messaging_channel"`
}

var hashedKeys = []string{"em", "ph", "fn", "ln", "ge", "db", "ct", "st", "zp", "country", "external_id"}

var actionSources = map[string]bool{"website": true, "email": true, "app": true, "phone_call": true,
	"chat": true, "physical_store": true, "system_generated": true, "business_messaging": true, "other": true}

// check validates one event as Meta does, returning the subcode and reason
// of a rejection.
func check(raw json.RawMessage, now time.Time) (event, int, string) {
	var ev event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return ev, SubcodeMalformed, "not a JSON event object: " + err.Error()
	}
	if ev.EventName == "" {
		return ev, SubcodeMissingField, "event_name is required"
	}
	sec, err := ev.EventTime.Int64()
	if err != nil {
		return ev, SubcodeMissingField, "event_time must be a Unix time in seconds"
	}
	at := time.Unix(sec, 0)
	if now.Sub(at) > MaxEventAge {
		return ev, SubcodeTooOld, fmt.Sprintf("event_time %d is more than 7 days in the past", sec)
	}
	if at.Sub(now) > maxFuture {
		return ev, SubcodeInFuture, fmt.Sprintf("event_time %d is in the future", sec)
	}
	if !actionSources[ev.ActionSource] {
		return ev, SubcodeMissingField, fmt.Sprintf("action_source %q is not valid", ev.ActionSource)
	}
	if ev.UserData == nil {
		return ev, SubcodeNoCustomerKey, "user_data is required"
	}
	str := func(k string) string {
		var v string
		_ = json.Unmarshal(ev.UserData[k], &v)
		return v
	}
	if ev.ActionSource == "website" {
		if str("client_user_agent") == "" {
			return ev, SubcodeMissingField, "client_user_agent is required for website events"
		}
		if ev.EventSourceURL == "" {
			return ev, SubcodeMissingField, "event_source_url is required for website events"
		}
	}
	if sub, why := checkMessaging(ev, str); why != "" {
		return ev, sub, why
	}
	for _, k := range hashedKeys {
		v, ok := ev.UserData[k]
		if !ok {
			continue
		}
		var list []string
		if err := json.Unmarshal(v, &list); err != nil {
			var one string
			if err := json.Unmarshal(v, &one); err != nil {
				return ev, SubcodeBadHash, k + " must be a string or a list of strings"
			}
			list = []string{one}
		}
		for _, h := range list {
			if !isSHA256(h) {
				return ev, SubcodeBadHash, k + " must be SHA-256 hashed: 64 lowercase hex characters"
			}
		}
	}
	if v, ok := ev.UserData["lead_id"]; ok {
		var id int64
		if err := json.Unmarshal(v, &id); err != nil {
			return ev, SubcodeMalformed, "lead_id must be an integer"
		}
	}
	strong := false
	for _, k := range []string{"em", "ph", "external_id", "fbc", "fbp", "lead_id", "ctwa_clid", "subscription_id", "fb_login_id"} {
		if v := string(ev.UserData[k]); v != "" && v != "null" && v != `""` && v != "[]" {
			strong = true
		}
	}
	if !strong && (str("client_ip_address") == "" || str("client_user_agent") == "") {
		return ev, SubcodeNoCustomerKey, "user_data has no customer information parameter Meta can match on"
	}
	return ev, 0, ""
}

// checkMessaging applies Meta's rules for business messaging: WhatsApp ids
// only on business_messaging events; those name their channel, use an
// event name Meta takes from a conversation and, on WhatsApp, carry the
// WhatsApp Business Account id and the ctwa_clid (not hashed).
func checkMessaging(ev event, str func(string) string) (int, string) {
	clid, waba := str("ctwa_clid"), str("whatsapp_business_account_id")
	if ev.ActionSource != "business_messaging" {
		if clid != "" || waba != "" {
			return SubcodeMessagingActionSource, fmt.Sprintf("ctwa_clid and whatsapp_business_account_id are only valid with action_source business_messaging, not %q", ev.ActionSource)
		}
		return 0, ""
	}
	switch ev.MessagingChannel {
	case "whatsapp":
		if waba == "" {
			return SubcodeMessagingUserData, "user_data.whatsapp_business_account_id is required for business_messaging events on whatsapp"
		}
		if clid == "" {
			return SubcodeMessagingUserData, "user_data.ctwa_clid is required for business_messaging events on whatsapp"
		}
	case "messenger", "instagram":
		if str("page_id") == "" {
			return SubcodeMessagingUserData, "user_data.page_id is required for business_messaging events on " + ev.MessagingChannel
		}
	case "":
		return SubcodeMissingField, "messaging_channel is required for business_messaging events"
	default:
		return SubcodeMissingField, fmt.Sprintf("messaging_channel %q is not valid: want whatsapp, messenger or instagram", ev.MessagingChannel)
	}
	for _, n := range MessagingEventNames {
		if n == ev.EventName {
			return 0, ""
		}
	}
	return SubcodeMessagingEventType, fmt.Sprintf("event_name %q is not valid for business_messaging events: use one of %s", ev.EventName, strings.Join(MessagingEventNames, ", "))
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
