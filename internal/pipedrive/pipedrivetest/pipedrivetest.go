// Package pipedrivetest is a local stand-in for the parts of Pipedrive the
// pipedrive source uses, for tests: the API reads GET /api/v2/deals/{id},
// GET /api/v2/persons/{id} and GET /v1/users/me, answered as Pipedrive
// documents them ({"success": true, "data": ...}), and Pipedrive's side of
// a webhook: a deal moved, won or lost is posted as a webhooks v2 body
// (meta, data, previous with only the changed fields) with HTTP Basic
// auth, as a webhook created with http_auth_user and http_auth_password
// is.
//
// It checks the x-api-token header against Token (a missing or other
// token is 401, as Pipedrive answers), and can be told to fail the next
// requests with a status (500, 503, 429 with Retry-After, 401). It imports
// nothing of ours. A Server is safe for concurrent use.
package pipedrivetest

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Token is the API token the server takes.
const Token = "pipedrivetest-api-token-0123456789abcdef"

// Person is a person the server holds.
type Person struct {
	ID     int64
	Name   string
	Emails []string // the first is primary
	Phones []string
	Custom map[string]any
}

// Deal is a deal the server holds.
type Deal struct {
	ID       int64
	Title    string
	PersonID int64
	StageID  int64
	Status   string // open, won, lost
	Value    float64
	Currency string
	Custom   map[string]any
}

// Server is the stand-in; URL is its base address.
type Server struct {
	URL string
	srv *httptest.Server

	mu       sync.Mutex
	deals    map[int64]*Deal
	persons  map[int64]*Person
	fails    []int
	reads    int
	now      func() time.Time
	requests []string
}

// New starts a server, closed when the test ends.
func New(t testing.TB) *Server {
	s := &Server{deals: map[int64]*Deal{}, persons: map[int64]*Person{}, now: time.Now}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v2/deals/{id}", s.deal)
	mux.HandleFunc("GET /api/v2/persons/{id}", s.person)
	mux.HandleFunc("GET /v1/users/me", s.me)
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// SetNow sets the server's clock (the webhooks' timestamps).
func (s *Server) SetNow(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// AddPerson and AddDeal store a person and a deal.
func (s *Server) AddPerson(p Person) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.persons[p.ID] = &p
}

// AddDeal stores a deal (open when its status is empty).
func (s *Server) AddDeal(d Deal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.Status == "" {
		d.Status = "open"
	}
	s.deals[d.ID] = &d
}

// FailNext answers the next n API requests with status (429 with
// Retry-After: 1).
func (s *Server) FailNext(n, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.fails = append(s.fails, status)
	}
}

// Reads is how many API requests the server answered, failed ones
// included.
func (s *Server) Reads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

// start counts a request and answers it when it must fail or its token is
// wrong; false means it has been answered.
func (s *Server) start(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	s.reads++
	s.requests = append(s.requests, r.Method+" "+r.URL.Path)
	var fail int
	if len(s.fails) > 0 {
		fail, s.fails = s.fails[0], s.fails[1:]
	}
	s.mu.Unlock()
	if r.Header.Get("x-api-token") != Token {
		fail = http.StatusUnauthorized
	}
	switch fail {
	case 0:
		return true
	case http.StatusUnauthorized:
		answer(w, fail, map[string]any{"success": false, "error": "unauthorized access", "errorCode": 401})
	case http.StatusTooManyRequests:
		w.Header().Set("Retry-After", "1")
		answer(w, fail, map[string]any{"success": false, "error": "Request over limit", "errorCode": 429})
	default:
		answer(w, fail, map[string]any{"success": false, "error": http.StatusText(fail), "errorCode": fail})
	}
	return false
}

func answer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func notFound(w http.ResponseWriter, what string) {
	answer(w, http.StatusNotFound, map[string]any{"success": false, "error": what + " not found", "errorCode": 404})
}

func (s *Server) deal(w http.ResponseWriter, r *http.Request) {
	if !s.start(w, r) {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.mu.Lock()
	d, ok := s.deals[id]
	var data map[string]any
	if ok {
		data = dealJSON(d)
	}
	s.mu.Unlock()
	if !ok {
		notFound(w, "Deal")
		return
	}
	answer(w, http.StatusOK, map[string]any{"success": true, "data": data})
}

func (s *Server) person(w http.ResponseWriter, r *http.Request) {
	if !s.start(w, r) {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.mu.Lock()
	p, ok := s.persons[id]
	var data map[string]any
	if ok {
		list := func(vs []string, label string) []map[string]any {
			out := []map[string]any{}
			for i, v := range vs {
				out = append(out, map[string]any{"value": v, "primary": i == 0, "label": label})
			}
			return out
		}
		data = map[string]any{"id": p.ID, "name": p.Name, "emails": list(p.Emails, "work"),
			"phones": list(p.Phones, "mobile"), "custom_fields": orEmpty(p.Custom)}
	}
	s.mu.Unlock()
	if !ok {
		notFound(w, "Person")
		return
	}
	answer(w, http.StatusOK, map[string]any{"success": true, "data": data})
}

func (s *Server) me(w http.ResponseWriter, r *http.Request) {
	if !s.start(w, r) {
		return
	}
	answer(w, http.StatusOK, map[string]any{"success": true, "data": map[string]any{
		"id": 18487521, "name": "Test Owner", "company_name": "Dent", "company_domain": "dent"}})
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func dealJSON(d *Deal) map[string]any {
	out := map[string]any{"id": d.ID, "title": d.Title, "stage_id": d.StageID, "status": d.Status,
		"value": d.Value, "currency": d.Currency, "pipeline_id": 1, "custom_fields": orEmpty(d.Custom)}
	if d.PersonID != 0 {
		out["person_id"] = d.PersonID
	} else {
		out["person_id"] = nil
	}
	return out
}

// Webhook is one webhook body and where it goes.
type Webhook struct {
	Body []byte
}

// Move moves the deal to stage and returns the webhook Pipedrive sends.
func (s *Server) Move(dealID, stage int64) Webhook {
	return s.change(dealID, func(d *Deal) map[string]any {
		prev := map[string]any{"stage_id": d.StageID}
		d.StageID = stage
		return prev
	})
}

// Win marks the deal won with value and currency and returns the webhook.
func (s *Server) Win(dealID int64, value float64, currency string) Webhook {
	return s.change(dealID, func(d *Deal) map[string]any {
		prev := map[string]any{"status": d.Status}
		if d.Value != value {
			prev["value"] = d.Value
		}
		d.Status, d.Value, d.Currency = "won", value, currency
		return prev
	})
}

// Lose marks the deal lost and returns the webhook.
func (s *Server) Lose(dealID int64) Webhook {
	return s.change(dealID, func(d *Deal) map[string]any {
		prev := map[string]any{"status": d.Status}
		d.Status = "lost"
		return prev
	})
}

// change edits a stored deal and builds the v2 "change" webhook of it:
// previous holds only the fields that changed.
func (s *Server) change(dealID int64, edit func(d *Deal) map[string]any) Webhook {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.deals[dealID]
	if !ok {
		panic(fmt.Sprintf("pipedrivetest: no deal %d", dealID))
	}
	prev := edit(d)
	now := s.now().UTC()
	data := dealJSON(d)
	data["update_time"] = now.Format(time.RFC3339)
	body, _ := json.Marshal(map[string]any{
		"meta": map[string]any{"action": "change", "entity": "deal", "version": "2.0", "id": rand.Text(),
			"entity_id": strconv.FormatInt(d.ID, 10), "company_id": "12882925", "user_id": "18487521",
			"attempt": 1, "host": "dent.pipedrive.com", "timestamp": now.Format(time.RFC3339), "change_source": "app",
			"webhook_id": "99", "webhook_owner_id": "18487521", "permitted_user_ids": []string{"18487521"}},
		"data":     data,
		"previous": prev,
	})
	return Webhook{Body: body}
}

// Post posts the webhook to url with HTTP Basic auth user and password
// (none when both are empty), as Pipedrive does, and returns the answer's
// status and body.
func Post(url, user, password string, w Webhook) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(w.Body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Pipedrive Webhooks")
	if user != "" || password != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String(), nil
}
