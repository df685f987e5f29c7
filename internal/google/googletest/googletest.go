// Package googletest is a local stand-in for Google's OAuth token endpoint
// and the Data Manager API (POST /v1/events:ingest, GET
// /v1/requestStatus:retrieve), for the tests of every package. It is as
// strict as Google's documentation: a missing or wrong bearer token is
// UNAUTHENTICATED; a request with one bad event (a hash that is not 64 hex
// digits, more than one click id, an event with neither a click id nor a
// user identifier, a value without a currency, no encoding with user data,
// more than 2,000 events, an event Refuse names) fails whole (fast fail)
// with a google.rpc.Status whose BadRequest field violations name the
// event (events[N]). The token
// endpoint takes the refresh_token grant of an OAuth client and the
// JWT-bearer grant of a service account (its signature checked against a
// key the server made). Faults (outages, quota, refused terms, a revoked
// grant, a request refused INVALID_ARGUMENT naming no event) can be
// switched on. It imports nothing of ours, so it checks the
// google package independently. A Server is safe for concurrent use.
package googletest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The OAuth client a new Server accepts.
const (
	ClientID     = "googletest-client.apps.googleusercontent.com"
	ClientSecret = "googletest-secret"
	RefreshToken = "googletest-refresh"
	// ServiceAccount is the e-mail of the key ServiceAccountKey returns.
	ServiceAccount = "cleanads@googletest.iam.gserviceaccount.com"
	// Scope is the scope every token must be asked for.
	Scope = "https://www.googleapis.com/auth/datamanager"
)

// MaxBatch is Google's limit of events per request.
const MaxBatch = 2000

// Fault is a failure the server answers with instead of processing.
type Fault int

// The faults.
const (
	FaultNone              Fault = iota
	FaultUnavailable             // 503 UNAVAILABLE
	FaultResourceExhausted       // 429 RESOURCE_EXHAUSTED
	FaultDeadline                // 504 DEADLINE_EXCEEDED
	FaultInternal                // 500 INTERNAL
	FaultPermission              // 403 PERMISSION_DENIED
	FaultTerms                   // 400 FAILED_PRECONDITION, TERMS_AND_CONDITIONS_NOT_SIGNED
	FaultLeadsOff                // 400 FAILED_PRECONDITION, enhanced conversions for leads off
	FaultDrop                    // the connection is closed without an answer
	// FaultInvalidArgument is 400 INVALID_ARGUMENT with no field
	// violation: a permanent refusal of the request's data that names no
	// event (not of the credentials or the account).
	FaultInvalidArgument
)

// Received is one accepted event.
type Received struct {
	Request      int // 1-based number of the ingest request that carried it
	Index        int
	RequestID    string
	Destinations []string // productDestinationId of each referenced destination
	JSON         json.RawMessage
	Event        map[string]any
}

// Server is the stand-in; its URL is the Data Manager base URL and
// TokenURL its token endpoint.
type Server struct {
	*httptest.Server

	key *rsa.PrivateKey

	mu          sync.Mutex
	now         func() time.Time
	tokens      map[string]time.Time // access token -> expiry
	grants      int
	revoked     bool
	refuseAll   bool
	unauth      int
	tokenTTL    time.Duration
	queue       []Fault
	down        Fault
	actions     map[string]bool
	processing  int
	failAs      string
	partial     int
	requests    int
	validations int
	events      []Received
	statusOf    map[string][]map[string]any
	statusCalls int
	lastRequest json.RawMessage
	// refused are the transaction ids Google refuses, with why (Refuse).
	refused map[string]string
}

// New starts a Server, closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{key: key, now: time.Now, tokens: map[string]time.Time{}, tokenTTL: time.Hour,
		statusOf: map[string][]map[string]any{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", s.token)
	mux.HandleFunc("POST /v1/events:ingest", s.ingest)
	mux.HandleFunc("GET /v1/requestStatus:retrieve", s.status)
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// TokenURL is the token endpoint.
func (s *Server) TokenURL() string { return s.URL + "/token" }

// ServiceAccountKey returns a service account key file whose token_uri is
// this server's.
func (s *Server) ServiceAccountKey() string {
	der, _ := x509.MarshalPKCS8PrivateKey(s.key)
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	b, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "googletest", "private_key_id": "k1",
		"private_key": string(pemKey), "client_email": ServiceAccount, "client_id": "1",
		"token_uri": s.TokenURL(),
	})
	return string(b)
}

// SetNow sets the server's clock (default time.Now).
func (s *Server) SetNow(now func() time.Time) { s.mu.Lock(); s.now = now; s.mu.Unlock() }

// SetTokenTTL sets how long issued access tokens live.
func (s *Server) SetTokenTTL(d time.Duration) { s.mu.Lock(); s.tokenTTL = d; s.mu.Unlock() }

// RevokeGrant makes every refresh token and key answer invalid_grant and
// every issued access token UNAUTHENTICATED; RestoreGrant undoes it.
func (s *Server) RevokeGrant() {
	s.mu.Lock()
	s.revoked = true
	s.tokens = map[string]time.Time{}
	s.mu.Unlock()
}

// ExpireTokens makes every access token issued so far UNAUTHENTICATED
// before its expires_in is up, as Google does with a token it ends early,
// while the grant behind it still holds: a new token from it is taken.
func (s *Server) ExpireTokens() {
	s.mu.Lock()
	s.tokens = map[string]time.Time{}
	s.mu.Unlock()
}

// RefuseTokens makes the API answer UNAUTHENTICATED to every access token,
// new ones included (a project without the Data Manager API enabled),
// while the token endpoint keeps issuing them; false undoes it.
func (s *Server) RefuseTokens(refuse bool) { s.mu.Lock(); s.refuseAll = refuse; s.mu.Unlock() }

// Unauthenticated is how many calls were answered UNAUTHENTICATED.
func (s *Server) Unauthenticated() int { s.mu.Lock(); defer s.mu.Unlock(); return s.unauth }

// RestoreGrant accepts the credentials again.
func (s *Server) RestoreGrant() { s.mu.Lock(); s.revoked = false; s.mu.Unlock() }

// SetConversionActions limits the conversion action ids Google knows;
// none set accepts any digits.
func (s *Server) SetConversionActions(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.actions = map[string]bool{}
	for _, id := range ids {
		s.actions[id] = true
	}
}

// FailNext answers the next n ingest requests with f.
func (s *Server) FailNext(n int, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 0; i < n; i++ {
		s.queue = append(s.queue, f)
	}
}

// Refuse makes Google refuse the event whose transactionId is id, as it
// refuses a request with one bad event (fast fail): the whole request
// fails INVALID_ARGUMENT with a field violation naming events[N] and why.
func (s *Server) Refuse(id, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refused == nil {
		s.refused = map[string]string{}
	}
	s.refused[id] = why
}

// Allow takes the event id again after Refuse.
func (s *Server) Allow(id string) { s.mu.Lock(); delete(s.refused, id); s.mu.Unlock() }

// SetDown answers every ingest request with f until SetDown(FaultNone).
func (s *Server) SetDown(f Fault) { s.mu.Lock(); s.down = f; s.mu.Unlock() }

// SetProcessing makes the next n status calls answer PROCESSING.
func (s *Server) SetProcessing(n int) { s.mu.Lock(); s.processing = n; s.mu.Unlock() }

// SetProcessingFailure makes Google fail the requests accepted from now on
// when it processes them (requestStatus FAILED, with reason in
// errorInfo), as it does with events it cannot use; "" undoes it.
func (s *Server) SetProcessingFailure(reason string) {
	s.mu.Lock()
	s.failAs, s.partial = reason, 0
	s.mu.Unlock()
}

// SetPartialFailure makes Google process the requests accepted from now
// on only in part: n events of each destination fail with reason
// (requestStatus PARTIAL_SUCCESS, the counts in errorInfo, and no word
// of which events), as Google answers a batch some of whose events it
// could not use; n 0 undoes it.
func (s *Server) SetPartialFailure(reason string, n int) {
	s.mu.Lock()
	s.failAs, s.partial = reason, n
	s.mu.Unlock()
}

// Grants is how many tokens the token endpoint issued.
func (s *Server) Grants() int { s.mu.Lock(); defer s.mu.Unlock(); return s.grants }

// Requests is how many ingest requests arrived (refused ones included).
func (s *Server) Requests() int { s.mu.Lock(); defer s.mu.Unlock(); return s.requests }

// Validations is how many validateOnly requests passed.
func (s *Server) Validations() int { s.mu.Lock(); defer s.mu.Unlock(); return s.validations }

// StatusCalls is how many requestStatus:retrieve calls arrived.
func (s *Server) StatusCalls() int { s.mu.Lock(); defer s.mu.Unlock(); return s.statusCalls }

// Events returns the accepted events in arrival order.
func (s *Server) Events() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.events...)
}

// LastRequest is the body of the last ingest request.
func (s *Server) LastRequest() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastRequest
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func tokenError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

// token is the OAuth 2.0 token endpoint.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, 400, "invalid_request", "unreadable form")
		return
	}
	s.mu.Lock()
	revoked, now := s.revoked, s.now()
	s.mu.Unlock()
	switch r.PostForm.Get("grant_type") {
	case "refresh_token":
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		if id != ClientID || secret != ClientSecret {
			tokenError(w, 401, "invalid_client", "The OAuth client was not found.")
			return
		}
		if revoked || r.PostForm.Get("refresh_token") != RefreshToken {
			tokenError(w, 400, "invalid_grant", "Token has been expired or revoked.")
			return
		}
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		if why := s.checkAssertion(r.PostForm.Get("assertion"), now); why != "" {
			tokenError(w, 400, "invalid_grant", why)
			return
		}
		if revoked {
			tokenError(w, 400, "invalid_grant", "Invalid JWT Signature.")
			return
		}
	default:
		tokenError(w, 400, "unsupported_grant_type", "Invalid grant_type.")
		return
	}
	var b [16]byte
	rand.Read(b[:])
	tok := "ya29.googletest-" + base64.RawURLEncoding.EncodeToString(b[:])
	s.mu.Lock()
	s.tokens[tok] = now.Add(s.tokenTTL)
	s.grants++
	ttl := s.tokenTTL
	s.mu.Unlock()
	writeJSON(w, 200, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(ttl.Seconds()), "scope": Scope})
}

// checkAssertion verifies a service account's signed JWT: RS256 with the
// server's key, issued by ServiceAccount for this token endpoint and the
// Data Manager scope, not expired.
func (s *Server) checkAssertion(a string, now time.Time) string {
	parts := strings.Split(a, ".")
	if len(parts) != 3 {
		return "Invalid JWT."
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return "Invalid JWT Signature."
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(&s.key.PublicKey, crypto.SHA256, sum[:], sig) != nil {
		return "Invalid JWT Signature."
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "Invalid JWT."
	}
	var c struct {
		Iss   string `json:"iss"`
		Aud   string `json:"aud"`
		Scope string `json:"scope"`
		Exp   int64  `json:"exp"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return "Invalid JWT."
	}
	switch {
	case c.Iss != ServiceAccount:
		return "Invalid issuer."
	case c.Aud != s.TokenURL():
		return "Invalid JWT audience."
	case !strings.Contains(" "+c.Scope+" ", " "+Scope+" "):
		return "Invalid scope."
	case time.Unix(c.Exp, 0).Before(now):
		return "Invalid JWT: Token must be a short-lived token and in a reasonable timeframe."
	}
	return ""
}

type violation struct {
	Field       string `json:"field"`
	Description string `json:"description"`
	Reason      string `json:"reason"`
}

func rpcError(w http.ResponseWriter, httpStatus int, status, reason, msg string, violations []violation) {
	details := []any{map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason,
		"domain": "datamanager.googleapis.com"}}
	if len(violations) > 0 {
		details = append(details, map[string]any{"@type": "type.googleapis.com/google.rpc.BadRequest",
			"fieldViolations": violations})
	}
	details = append(details, map[string]any{"@type": "type.googleapis.com/google.rpc.RequestInfo",
		"requestId": "googletest-error"})
	writeJSON(w, httpStatus, map[string]any{"error": map[string]any{"code": httpStatus, "message": msg,
		"status": status, "details": details}})
}

// authorized checks the bearer token.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	exp, known := s.tokens[tok]
	now := s.now()
	refused := !ok || !known || now.After(exp) || s.refuseAll
	if refused {
		s.unauth++
	}
	s.mu.Unlock()
	if refused {
		writeJSON(w, 401, map[string]any{"error": map[string]any{"code": 401,
			"message": "Request had invalid authentication credentials. Expected OAuth 2 access token.",
			"status":  "UNAUTHENTICATED"}})
		return false
	}
	return true
}

func (s *Server) fault(w http.ResponseWriter, f Fault) bool {
	switch f {
	case FaultNone:
		return false
	case FaultUnavailable:
		rpcError(w, 503, "UNAVAILABLE", "", "The service is currently unavailable.", nil)
	case FaultResourceExhausted:
		w.Header().Set("Retry-After", "30")
		rpcError(w, 429, "RESOURCE_EXHAUSTED", "RESOURCE_EXHAUSTED", "Too many requests.", nil)
	case FaultDeadline:
		rpcError(w, 504, "DEADLINE_EXCEEDED", "DEADLINE_EXCEEDED", "The request took too long to respond.", nil)
	case FaultInternal:
		rpcError(w, 500, "INTERNAL", "INTERNAL_ERROR", "An internal error has occurred.", nil)
	case FaultPermission:
		rpcError(w, 403, "PERMISSION_DENIED", "PERMISSION_DENIED", "The caller does not have permission.", nil)
	case FaultTerms:
		rpcError(w, 400, "FAILED_PRECONDITION", "TERMS_AND_CONDITIONS_NOT_SIGNED", "The required terms and conditions are not accepted.", nil)
	case FaultLeadsOff:
		rpcError(w, 400, "FAILED_PRECONDITION", "DESTINATION_ACCOUNT_NOT_ENABLED_ENHANCED_CONVERSIONS_FOR_LEADS",
			"The destination account is not enabled for enhanced conversions for leads.", nil)
	case FaultInvalidArgument:
		rpcError(w, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "Request contains an invalid argument.", nil)
	case FaultDrop:
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
				return true
			}
		}
		rpcError(w, 503, "UNAVAILABLE", "", "dropped", nil)
	}
	return true
}

type ingestBody struct {
	Destinations []struct {
		Reference        string `json:"reference"`
		OperatingAccount struct {
			AccountType string `json:"accountType"`
			AccountID   string `json:"accountId"`
		} `json:"operatingAccount"`
		LoginAccount *struct {
			AccountType string `json:"accountType"`
			AccountID   string `json:"accountId"`
		} `json:"loginAccount"`
		ProductDestinationID string `json:"productDestinationId"`
	} `json:"destinations"`
	Events       []json.RawMessage `json:"events"`
	ValidateOnly bool              `json:"validateOnly"`
	Encoding     string            `json:"encoding"`
}

var digits = regexp.MustCompile(`^[0-9]+$`)

func (s *Server) ingest(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	n := s.requests
	f := s.down
	if f == FaultNone && len(s.queue) > 0 {
		f, s.queue = s.queue[0], s.queue[1:]
	}
	s.mu.Unlock()
	if !s.authorized(w, r) || s.fault(w, f) {
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return
	}
	s.mu.Lock()
	s.lastRequest = raw
	now, actions := s.now(), s.actions
	refused := make(map[string]string, len(s.refused))
	for id, why := range s.refused {
		refused[id] = why
	}
	s.mu.Unlock()
	var b ingestBody
	if err := json.Unmarshal(raw, &b); err != nil {
		rpcError(w, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "Invalid JSON payload received: "+err.Error(), nil)
		return
	}
	bad := func(field, reason, desc string) {
		rpcError(w, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "There was a problem with the request.",
			[]violation{{Field: field, Reason: reason, Description: desc}})
	}
	switch {
	case len(b.Destinations) == 0:
		bad("destinations", "REQUIRED_FIELD_MISSING", "A required field is missing.")
		return
	case len(b.Destinations) > 10:
		bad("destinations", "TOO_MANY_DESTINATIONS", "The maximum number of destinations allowed per request is 10.")
		return
	case len(b.Events) == 0:
		bad("events", "REQUIRED_FIELD_MISSING", "A required field is missing.")
		return
	case len(b.Events) > MaxBatch:
		bad("events", "TOO_MANY_EVENTS", fmt.Sprintf("The maximum number of events allowed per request is %d.", MaxBatch))
		return
	}
	refs := map[string]string{}
	for i, d := range b.Destinations {
		p := fmt.Sprintf("destinations[%d]", i)
		switch {
		case d.OperatingAccount.AccountType != "GOOGLE_ADS" || !digits.MatchString(d.OperatingAccount.AccountID):
			bad(p+".operating_account", "INVALID_DESTINATION", "This destination is invalid.")
			return
		case d.LoginAccount != nil && (d.LoginAccount.AccountType != "GOOGLE_ADS" || !digits.MatchString(d.LoginAccount.AccountID)):
			bad(p+".login_account", "INVALID_DESTINATION", "This destination is invalid.")
			return
		case !digits.MatchString(d.ProductDestinationID) || actions != nil && !actions[d.ProductDestinationID]:
			rpcError(w, 400, "INVALID_ARGUMENT", "INVALID_CONVERSION_ACTION_ID", "The conversion action ID is invalid.",
				[]violation{{Field: p + ".product_destination_id", Reason: "INVALID_CONVERSION_ACTION_ID", Description: "The conversion action ID is invalid."}})
			return
		}
		refs[d.Reference] = d.ProductDestinationID
	}
	var vs []violation
	parsed := make([]map[string]any, len(b.Events))
	for i, ev := range b.Events {
		m, v := checkEvent(i, ev, b.Encoding, refs, len(b.Destinations), now)
		if id, _ := m["transactionId"].(string); refused[id] != "" {
			v = append(v, violation{Field: fmt.Sprintf("events[%d]", i), Reason: "INVALID_ARGUMENT", Description: refused[id]})
		}
		parsed[i] = m
		vs = append(vs, v...)
	}
	if len(vs) > 0 {
		rpcError(w, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "There was a problem with the request.", vs)
		return
	}
	if b.ValidateOnly {
		s.mu.Lock()
		s.validations++
		s.mu.Unlock()
		writeJSON(w, 200, map[string]any{})
		return
	}
	var idb [8]byte
	rand.Read(idb[:])
	reqID := fmt.Sprintf("%x", idb)
	perDest := map[string]int{}
	s.mu.Lock()
	for i, ev := range b.Events {
		var dests []string
		for _, r := range refsOf(parsed[i], b.Destinations[0].Reference, len(b.Destinations)) {
			dests = append(dests, refs[r])
			perDest[refs[r]]++
		}
		s.events = append(s.events, Received{Request: n, Index: i, RequestID: reqID, Destinations: dests, JSON: ev, Event: parsed[i]})
	}
	var st []map[string]any
	for _, d := range b.Destinations {
		r := map[string]any{
			"destination":           map[string]any{"reference": d.Reference, "productDestinationId": d.ProductDestinationID, "operatingAccount": d.OperatingAccount},
			"requestStatus":         "SUCCESS",
			"eventsIngestionStatus": map[string]any{"recordCount": strconv.Itoa(perDest[d.ProductDestinationID])},
		}
		if s.partial > 0 && s.failAs != "" {
			failed := min(s.partial, perDest[d.ProductDestinationID])
			r["requestStatus"] = "PARTIAL_SUCCESS"
			r["errorInfo"] = map[string]any{"errorCounts": []map[string]any{{"recordCount": strconv.Itoa(failed), "reason": s.failAs}}}
		} else if s.failAs != "" {
			r["requestStatus"] = "FAILED"
			r["errorInfo"] = map[string]any{"errorCounts": []map[string]any{{"recordCount": strconv.Itoa(perDest[d.ProductDestinationID]), "reason": s.failAs}}}
			r["eventsIngestionStatus"] = map[string]any{"recordCount": "0"}
		}
		st = append(st, r)
	}
	s.statusOf[reqID] = st
	s.mu.Unlock()
	writeJSON(w, 200, map[string]any{"requestId": reqID})
}

// refsOf is the destinations an event names; with one destination in the
// request an event may name none.
func refsOf(ev map[string]any, only string, n int) []string {
	var out []string
	if l, ok := ev["destinationReferences"].([]any); ok {
		for _, r := range l {
			if s, ok := r.(string); ok {
				out = append(out, s)
			}
		}
	}
	if len(out) == 0 && n == 1 {
		out = []string{only}
	}
	return out
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// checkEvent validates one event as Google does; every violation names
// events[i].
func checkEvent(i int, raw json.RawMessage, encoding string, refs map[string]string, ndest int, now time.Time) (map[string]any, []violation) {
	p := fmt.Sprintf("events[%d]", i)
	var vs []violation
	add := func(field, reason, desc string) {
		vs = append(vs, violation{Field: p + field, Reason: reason, Description: desc})
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		add("", "INVALID_FORMAT", "The event is not an object.")
		return nil, vs
	}
	str := func(k string) string { s, _ := m[k].(string); return s }
	if str("transactionId") == "" {
		add(".transaction_id", "REQUIRED_FIELD_MISSING", "A required field is missing.")
	}
	ts, err := time.Parse(time.RFC3339Nano, str("eventTimestamp"))
	switch {
	case err != nil:
		add(".event_timestamp", "INVALID_FORMAT", "The format is invalid.")
	case ts.After(now.Add(time.Hour)):
		add(".event_timestamp", "INVALID_EVENT", "The event time is in the future.")
	case ts.Before(now.Add(-90 * 24 * time.Hour)):
		add(".event_timestamp", "INVALID_EVENT", "The event is older than the conversion window allows.")
	}
	refList := refsOf(m, "", ndest)
	if len(refList) == 0 {
		add(".destination_references", "REQUIRED_FIELD_MISSING", "With several destinations each event must name its own.")
	}
	for _, r := range refList {
		if _, ok := refs[r]; !ok && ndest > 1 {
			add(".destination_references", "INVALID_DESTINATION", "The event names a destination the request does not have.")
		}
	}
	clicks := 0
	if a, ok := m["adIdentifiers"].(map[string]any); ok {
		for _, k := range []string{"gclid", "gbraid", "wbraid"} {
			if v, _ := a[k].(string); v != "" {
				clicks++
			}
		}
	}
	if clicks > 1 {
		add(".ad_identifiers", "INVALID_ARGUMENT", "Only one of gclid, gbraid and wbraid may be set.")
	}
	ids := 0
	if u, ok := m["userData"].(map[string]any); ok {
		list, _ := u["userIdentifiers"].([]any)
		ids = len(list)
		if ids > 0 && encoding != "HEX" && encoding != "BASE64" {
			vs = append(vs, violation{Field: "encoding", Reason: "REQUIRED_FIELD_MISSING", Description: "encoding is required to upload user data."})
		}
		if ids > 10 {
			add(".user_data.user_identifiers", "TOO_MANY_USER_IDENTIFIERS", "At most 10 user identifiers are allowed.")
		}
		for j, x := range list {
			q := fmt.Sprintf(".user_data.user_identifiers[%d]", j)
			id, _ := x.(map[string]any)
			if len(id) != 1 {
				add(q, "INVALID_ARGUMENT", "A user identifier has exactly one value.")
				continue
			}
			for k, v := range id {
				switch k {
				case "emailAddress", "phoneNumber":
					if s, _ := v.(string); !isHex64(s) {
						add(q, "INVALID_SHA256_FORMAT", "SHA256 encoded value is malformed.")
					}
				case "address":
					a, _ := v.(map[string]any)
					g, _ := a["givenName"].(string)
					f, _ := a["familyName"].(string)
					rc, _ := a["regionCode"].(string)
					pc, _ := a["postalCode"].(string)
					if !isHex64(g) || !isHex64(f) {
						add(q+".address", "INVALID_SHA256_FORMAT", "SHA256 encoded value is malformed.")
					}
					if len(rc) != 2 || strings.ToUpper(rc) != rc {
						add(q+".address.region_code", "INVALID_FORMAT", "The region code is invalid.")
					}
					if pc == "" {
						add(q+".address.postal_code", "INVALID_POSTAL_CODE", "The postal code is invalid.")
					}
				default:
					add(q, "INVALID_ARGUMENT", "Unknown user identifier "+k+".")
				}
			}
		}
	}
	if clicks == 0 && ids == 0 {
		add("", "INVALID_EVENT", "The event has neither an ad identifier nor user data.")
	}
	if v, ok := m["conversionValue"].(float64); ok && v != 0 {
		c := str("currency")
		if len(c) != 3 || strings.ToUpper(c) != c {
			add(".currency", "INVALID_CURRENCY_CODE", "The currency code is not supported.")
		}
	}
	if c, ok := m["consent"].(map[string]any); ok {
		for _, k := range []string{"adUserData", "adPersonalization"} {
			switch v, _ := c[k].(string); v {
			case "", "CONSENT_GRANTED", "CONSENT_DENIED", "CONSENT_STATUS_UNSPECIFIED":
			default:
				add(".consent."+k, "INVALID_ENUM_VALUE", "The enum value cannot be used.")
			}
		}
	}
	return m, vs
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	id := r.URL.Query().Get("requestId")
	s.mu.Lock()
	s.statusCalls++
	st, ok := s.statusOf[id]
	processing := s.processing > 0
	if processing {
		s.processing--
	}
	s.mu.Unlock()
	if !ok {
		rpcError(w, 404, "NOT_FOUND", "NOT_FOUND", "The request was not found.", nil)
		return
	}
	if processing {
		var p []map[string]any
		for _, d := range st {
			p = append(p, map[string]any{"destination": d["destination"], "requestStatus": "PROCESSING"})
		}
		st = p
	}
	writeJSON(w, 200, map[string]any{"requestStatusPerDestination": st})
}
