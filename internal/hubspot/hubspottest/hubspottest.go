// Package hubspottest is a local stand-in for HubSpot, for the tests of
// every package: it serves the CRM API v3 reads the HubSpot source makes
// (a deal with its associated contacts, a contact, the first contact),
// checks the private app's Bearer token as HubSpot does, answers HubSpot's
// error bodies (401, 404, 429 with Retry-After, 5xx) when told to, and
// signs webhook posts exactly as HubSpot signs them (v3).
package hubspottest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/hubspot"
)

// The stand-in's credentials.
const (
	Token        = "pat-eu1-11111111-2222-3333-4444-555555555555"
	ClientSecret = "hubspot-client-secret-0123456789"
	PortalID     = 62515
)

// Deal is a deal held by the stand-in.
type Deal struct {
	ID, Stage, Amount, Currency, CloseDate string
	Contacts                               []string
}

// Contact is a contact held by the stand-in; Props are its other
// properties (a lead id property).
type Contact struct {
	ID, Email, Phone, Mobile string
	Props                    map[string]string
}

// Server is the stand-in; its URL is the base URL to give the source.
type Server struct {
	*httptest.Server

	mu         sync.Mutex
	deals      map[string]Deal
	contacts   map[string]Contact
	failStatus int
	failLeft   int
	retryAfter int
	reads      int
}

// New starts a stand-in that is closed when the test ends.
func New(t testing.TB) *Server {
	s := &Server{deals: map[string]Deal{}, contacts: map[string]Contact{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /crm/v3/objects/deals/{id}", s.deal)
	mux.HandleFunc("GET /crm/v3/objects/contacts/{id}", s.contact)
	mux.HandleFunc("GET /crm/v3/objects/contacts", s.list)
	s.Server = httptest.NewServer(s.guard(mux))
	t.Cleanup(s.Close)
	return s
}

// AddDeal holds d (replacing a deal of its id).
func (s *Server) AddDeal(d Deal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deals[d.ID] = d
}

// AddContact holds c.
func (s *Server) AddContact(c Contact) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.contacts[c.ID] = c
}

// FailNext answers the next n reads with status (HubSpot's error body);
// a 429 carries Retry-After retryAfter seconds when it is more than 0.
func (s *Server) FailNext(n, status, retryAfter int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failLeft, s.failStatus, s.retryAfter = n, status, retryAfter
}

// Reads counts the reads answered (failed ones included).
func (s *Server) Reads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

// Failing tells how many failures are left to answer.
func (s *Server) Failing() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failLeft
}

func apiError(w http.ResponseWriter, status int, category, msg string) {
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"status": "error", "message": msg, "category": category,
		"correlationId": "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"})
}

// guard counts the read, answers an ordered failure, and checks the token.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reads++
		status, retry := 0, s.retryAfter
		if s.failLeft > 0 {
			s.failLeft--
			status = s.failStatus
		}
		s.mu.Unlock()
		switch {
		case status == http.StatusTooManyRequests:
			if retry > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(retry))
			}
			apiError(w, status, "RATE_LIMITS", "You have reached your secondly limit.")
			return
		case status == http.StatusUnauthorized:
			apiError(w, status, "INVALID_AUTHENTICATION", "The OAuth token used to make this call expired 1 day(s) ago.")
			return
		case status != 0:
			apiError(w, status, "", "internal error")
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+Token {
			apiError(w, http.StatusUnauthorized, "INVALID_AUTHENTICATION",
				"Authentication credentials not found. This API supports OAuth 2.0 authentication.")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// properties answers the asked properties of have: an unknown one is
// null, as HubSpot answers a property the object has no value for.
func properties(r *http.Request, id string, have map[string]string) map[string]*string {
	out := map[string]*string{"hs_object_id": &id}
	for _, p := range strings.Split(r.URL.Query().Get("properties"), ",") {
		if p == "" {
			continue
		}
		if v, ok := have[p]; ok && v != "" {
			out[p] = &v
		} else {
			out[p] = nil
		}
	}
	return out
}

func (s *Server) deal(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	d, ok := s.deals[r.PathValue("id")]
	s.mu.Unlock()
	if !ok {
		apiError(w, http.StatusNotFound, "OBJECT_NOT_FOUND", "resource not found")
		return
	}
	obj := map[string]any{"id": d.ID, "archived": false, "properties": properties(r, d.ID, map[string]string{
		"amount": d.Amount, "dealstage": d.Stage, "deal_currency_code": d.Currency, "closedate": d.CloseDate})}
	if strings.Contains(r.URL.Query().Get("associations"), "contacts") && len(d.Contacts) > 0 {
		var res []map[string]string
		for _, c := range d.Contacts {
			res = append(res, map[string]string{"id": c, "type": "deal_to_contact"})
		}
		obj["associations"] = map[string]any{"contacts": map[string]any{"results": res}}
	}
	writeJSON(w, obj)
}

func (s *Server) contactObject(r *http.Request, c Contact) map[string]any {
	have := map[string]string{"email": c.Email, "phone": c.Phone, "mobilephone": c.Mobile}
	for k, v := range c.Props {
		have[k] = v
	}
	return map[string]any{"id": c.ID, "archived": false, "properties": properties(r, c.ID, have)}
}

func (s *Server) contact(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	c, ok := s.contacts[r.PathValue("id")]
	s.mu.Unlock()
	if !ok {
		apiError(w, http.StatusNotFound, "OBJECT_NOT_FOUND", "resource not found")
		return
	}
	writeJSON(w, s.contactObject(r, c))
}

// list answers the first contacts (limit, at most 100), without paging.
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	limit, err := strconv.Atoi(r.URL.Query().Get("limit"))
	if err != nil || limit < 1 || limit > 100 {
		limit = 10
	}
	s.mu.Lock()
	var results []map[string]any
	for _, c := range s.contacts {
		if len(results) < limit {
			results = append(results, s.contactObject(r, c))
		}
	}
	s.mu.Unlock()
	writeJSON(w, map[string]any{"results": results})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	_ = json.NewEncoder(w).Encode(v)
}

// Event is one webhook event as HubSpot posts it.
type Event = hubspot.Event

// DealStage is the event of deal dealID moved to stage at at.
func DealStage(eventID int64, dealID, stage string, at time.Time) Event {
	return Event{EventID: num(eventID), SubscriptionID: "4071", PortalID: num(PortalID), AppID: "1160452",
		OccurredAt: at.UnixMilli(), SubscriptionType: hubspot.DealChange, AttemptNumber: 0, ObjectID: json.Number(dealID),
		PropertyName: "dealstage", PropertyValue: stage, ChangeSource: "CRM_UI"}
}

// Lifecycle is the event of contact contactID moved to lifecycle stage
// stage at at.
func Lifecycle(eventID int64, contactID, stage string, at time.Time) Event {
	return Event{EventID: num(eventID), SubscriptionID: "4072", PortalID: num(PortalID), AppID: "1160452",
		OccurredAt: at.UnixMilli(), SubscriptionType: hubspot.ContactChange, ObjectID: json.Number(contactID),
		PropertyName: "lifecyclestage", PropertyValue: stage, ChangeSource: "CRM_UI"}
}

func num(n int64) json.Number { return json.Number(strconv.FormatInt(n, 10)) }

// Body is a webhook post's body: the events as a JSON array.
func Body(events ...Event) []byte {
	b, err := json.Marshal(events)
	if err != nil {
		panic(err)
	}
	return b
}

// Signature is HubSpot's X-HubSpot-Signature-v3 of a POST of body to
// signedURL at ts (the X-HubSpot-Request-Timestamp, milliseconds), made
// here on its own from HubSpot's documentation (not with the source's
// code, so that the test checks the source against the documentation):
// base64 of HMAC-SHA256 keyed with the client secret over "POST" + the
// URL, with the escapes HubSpot lists decoded, + body + timestamp.
func Signature(clientSecret, signedURL string, body []byte, ts string) string {
	uri := signedURL
	for esc, c := range map[string]string{"%3A": ":", "%2F": "/", "%3F": "?", "%40": "@", "%21": "!", "%24": "$",
		"%27": "'", "%28": "(", "%29": ")", "%2A": "*", "%2C": ",", "%3B": ";"} {
		uri = strings.ReplaceAll(uri, esc, c)
		uri = strings.ReplaceAll(uri, strings.ToLower(esc), c)
	}
	mac := hmac.New(sha256.New, []byte(clientSecret))
	mac.Write([]byte("POST" + uri + string(body) + ts))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Post posts body to postURL signed as HubSpot signs it at at: over
// signedURL, the address HubSpot was given (postURL itself unless
// CleanAds is behind a proxy), with clientSecret.
func Post(t testing.TB, postURL, signedURL, clientSecret string, body []byte, at time.Time) (int, string) {
	t.Helper()
	ts := strconv.FormatInt(at.UnixMilli(), 10)
	req, err := http.NewRequest(http.MethodPost, postURL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "HubSpot Connect 2.0 (http://dev.hubspot.com/) - WebhooksExecutorDaemon-executor")
	req.Header.Set("X-HubSpot-Request-Timestamp", ts)
	req.Header.Set("X-HubSpot-Signature-v3", Signature(clientSecret, signedURL, body, ts))
	req.Header.Set("X-HubSpot-Signature-Version", "v3")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, fmt.Sprint(b.String())
}
