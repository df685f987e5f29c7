package hubspottest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/hubspot/hubspottest"
)

func get(t *testing.T, url, token string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// TestStandIn: the token is checked, objects are answered with the asked
// properties (unknown ones null) and associations, missing ones 404, and
// ordered failures come first with HubSpot's error body.
func TestStandIn(t *testing.T) {
	s := hubspottest.New(t)
	s.AddContact(hubspottest.Contact{ID: "501", Email: "a@example.com"})
	s.AddDeal(hubspottest.Deal{ID: "9001", Stage: "closedwon", Amount: "10", Contacts: []string{"501"}})
	if code, body, _ := get(t, s.URL+"/crm/v3/objects/deals/9001", "wrong"); code != 401 || !strings.Contains(body, "INVALID_AUTHENTICATION") {
		t.Errorf("wrong token: %d %s", code, body)
	}
	code, body, _ := get(t, s.URL+"/crm/v3/objects/deals/9001?properties=amount,dealstage,deal_currency_code&associations=contacts", hubspottest.Token)
	if code != 200 || !strings.Contains(body, `"amount":"10"`) || !strings.Contains(body, `"deal_currency_code":null`) ||
		!strings.Contains(body, `"results":[{"id":"501"`) {
		t.Errorf("deal: %d %s", code, body)
	}
	if code, _, _ := get(t, s.URL+"/crm/v3/objects/contacts/404", hubspottest.Token); code != 404 {
		t.Errorf("missing contact: %d", code)
	}
	s.FailNext(1, 429, 7)
	if code, _, h := get(t, s.URL+"/crm/v3/objects/contacts/501", hubspottest.Token); code != 429 || h.Get("Retry-After") != "7" {
		t.Errorf("throttled: %d %v", code, h)
	}
	if code, body, _ := get(t, s.URL+"/crm/v3/objects/contacts?limit=1&properties=email", hubspottest.Token); code != 200 || !strings.Contains(body, "a@example.com") {
		t.Errorf("list: %d %s", code, body)
	}
}
