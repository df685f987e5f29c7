package pipedrivetest_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cleanads/cleanads/internal/pipedrive/pipedrivetest"
)

func get(t *testing.T, url, token string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("x-api-token", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

func TestReadsCheckTheToken(t *testing.T) {
	s := pipedrivetest.New(t)
	s.AddPerson(pipedrivetest.Person{ID: 1, Emails: []string{"a@example.com", "b@example.com"}})
	for _, tok := range []string{"", "other"} {
		if code, body := get(t, s.URL+"/api/v2/persons/1", tok); code != 401 || body["success"] != false {
			t.Errorf("token %q: %d %v", tok, code, body)
		}
	}
	code, body := get(t, s.URL+"/api/v2/persons/1", pipedrivetest.Token)
	data, _ := body["data"].(map[string]any)
	emails, _ := data["emails"].([]any)
	if code != 200 || len(emails) != 2 || emails[0].(map[string]any)["primary"] != true {
		t.Errorf("person: %d %v", code, body)
	}
	if code, _ := get(t, s.URL+"/api/v2/deals/9", pipedrivetest.Token); code != 404 {
		t.Errorf("missing deal: %d", code)
	}
}

func TestFailNext(t *testing.T) {
	s := pipedrivetest.New(t)
	s.FailNext(2, 503)
	for _, want := range []int{503, 503, 200} {
		if code, _ := get(t, s.URL+"/v1/users/me", pipedrivetest.Token); code != want {
			t.Errorf("got %d, want %d", code, want)
		}
	}
	if s.Reads() != 3 {
		t.Errorf("reads %d", s.Reads())
	}
}

func TestWebhookIsV2WithBasicAuth(t *testing.T) {
	s := pipedrivetest.New(t)
	s.AddDeal(pipedrivetest.Deal{ID: 5, PersonID: 1, StageID: 1, Value: 10, Currency: "EUR"})
	var user, pass string
	var got map[string]json.RawMessage
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ = r.BasicAuth()
		_ = json.NewDecoder(r.Body).Decode(&got)
	}))
	defer hook.Close()
	if code, _, err := pipedrivetest.Post(hook.URL, "u", "p", s.Move(5, 3)); err != nil || code != 200 {
		t.Fatal(code, err)
	}
	var meta struct{ Action, Entity, Version, ID string }
	var prev map[string]any
	var data struct {
		StageID int64 `json:"stage_id"`
	}
	_ = json.Unmarshal(got["meta"], &meta)
	_ = json.Unmarshal(got["previous"], &prev)
	_ = json.Unmarshal(got["data"], &data)
	if user != "u" || pass != "p" || meta.Action != "change" || meta.Entity != "deal" || meta.Version != "2.0" || meta.ID == "" ||
		data.StageID != 3 || len(prev) != 1 || prev["stage_id"] != float64(1) {
		t.Errorf("auth %q/%q, meta %+v, data %+v, previous %v", user, pass, meta, data, prev)
	}
}
