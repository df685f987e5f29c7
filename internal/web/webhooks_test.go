package web_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/metahook"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
	"github.com/cleanads/cleanads/internal/web"
)

const (
	waVerify    = "verify-0123456789abcdef"
	waSecret    = "app-secret-0123456789abcdef"
	waNumberID  = "106540352242922"
	callToken   = "dent-calls-0123456789abcdef"
	leadPhone   = "0533 218 44 90"
	leadPhoneWA = "905332184490"
)

// newStageEnv is newEnv with the site's stages, WhatsApp number and call
// token, and the WhatsApp webhook on.
func newStageEnv(t *testing.T) *env {
	t.Helper()
	return newWhatsAppEnv(t, func(s *model.Site) {
		s.Settings.CallTokenHash = model.HashAPIKey(callToken)
		s.Settings.Meta.Stages["won"] = model.StageEvent{Event: "Purchase"}
	})
}

// newWhatsAppEnv serves site dent (its WhatsApp number, Meta's stages in
// dry run) changed by edit, with the WhatsApp webhook on.
func newWhatsAppEnv(t *testing.T, edit func(s *model.Site)) *env {
	t.Helper()
	db := storetest.New(t)
	testkit.AddSite(t, db, testkit.Site(testkit.WithMeta("123456789012345", model.ModeDryRun), func(s *model.Site) {
		s.Name, s.APIKeyHash, s.Settings.Origins = "Istanbul Dental", model.HashAPIKey(apiKey), []string{origin}
		s.Settings.WhatsApp.PhoneNumberIDs = []string{waNumberID}
		s.Settings.Meta.Stages = map[string]model.StageEvent{"qualified": {Event: "QualifiedLead"}, "meeting": {Event: "Schedule"}}
	}, edit), time.Now())
	svc := app.New(app.Options{Store: db})
	h := web.New(web.Options{App: svc, Store: db, SourceSettings: map[string]string{"whatsapp.verify_token": waVerify, "whatsapp.app_secret": waSecret}}).Handler()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &env{t: t, db: db, srv: srv}
}

// greyLead posts a lead the rules hold for review and returns its id.
func (e *env) greyLead() string {
	e.t.Helper()
	code, _, body := e.do("POST", "/v1/leads", "application/json",
		`{"site":"dent","phone":"`+leadPhone+`","email":"mehmet.demir@gmail.com","name":"Mehmet Demir",
		  "message":"Bu fiyat geçerli mi? https://www.istanbuldis.example/implant","lead_id":"120212345678901234"}`, fromSite)
	if code != 202 {
		e.t.Fatalf("lead: %d %s", code, body)
	}
	var out struct{ ID string }
	json.Unmarshal([]byte(body), &out)
	if v := e.lead(out.ID)["verdict"]; v != "review" {
		e.t.Fatalf("want a review lead, got %v", v)
	}
	return out.ID
}

// deliveriesOf returns a lead's deliveries by kind, with their payloads.
func (e *env) deliveriesOf(id string) map[string]map[string]any {
	e.t.Helper()
	list, err := e.db.DeliveriesByLead(context.Background(), model.LeadID(id))
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, d := range list {
		var p map[string]any
		json.Unmarshal(d.Payload, &p)
		out[d.Kind] = p
	}
	return out
}

var withKey = map[string]string{"Authorization": "Bearer " + apiKey}

func TestStagesOverHTTP(t *testing.T) {
	e := newStageEnv(t)
	id := e.greyLead()
	at := func(d time.Duration) string {
		return time.Now().Add(d).UTC().Truncate(time.Second).Format(time.RFC3339)
	}
	tQual, tMeet, tWon := at(-50*time.Hour), at(-26*time.Hour), at(-time.Hour)
	calls := []string{
		`{"lead":{"email":" Mehmet.Demir@GMAIL.com"},"type":"stage","stage":"qualified","at":"` + tQual + `"}`,
		`{"lead":{"phone":"+90 (533) 218-4490"},"type":"stage","stage":"meeting","at":"` + tMeet + `","action_source":"phone_call"}`,
		`{"lead":{"lead_id":"120212345678901234"},"type":"stage","stage":"won","value":6000,"currency":"EUR","at":"` + tWon + `"}`,
	}
	for _, c := range calls {
		code, _, body := e.do("POST", "/v1/events", "application/json", c, withKey)
		if code != 200 || !strings.Contains(body, `"id":"`+id+`"`) {
			t.Fatalf("%s: %d %s", c, code, body)
		}
	}
	d := e.deliveriesOf(id)
	for kind, want := range map[string]struct{ name, at string }{
		"qualified": {"QualifiedLead", tQual}, "stage:meeting": {"Schedule", tMeet}, "stage:won": {"Purchase", tWon},
	} {
		p := d[kind]
		wantAt, _ := time.Parse(time.RFC3339, want.at)
		if p == nil || p["event_name"] != want.name || p["event_time"] != float64(wantAt.Unix()) {
			t.Errorf("%s: %v", kind, p)
		}
	}
	cd := d["stage:won"]["custom_data"].(map[string]any)
	if cd["value"] != 6000.0 || cd["currency"] != "EUR" || cd["event_source"] != "crm" {
		t.Errorf("won custom_data: %v", cd)
	}
	if ud := d["stage:won"]["user_data"].(map[string]any); ud["lead_id"] != 120212345678901234.0 {
		t.Errorf("won user_data lacks the Lead Ads id: %v", ud)
	}
	n := len(d)
	// The same calls again: 200 with the lead as it stands, nothing queued.
	for _, c := range calls {
		if code, _, body := e.do("POST", "/v1/events", "application/json", c, withKey); code != 200 {
			t.Errorf("repeat: %d %s", code, body)
		}
	}
	if code, _, body := e.do("POST", "/v1/leads/"+id+"/events", "application/json", `{"type":"stage","stage":"won","value":1,"currency":"USD"}`, withKey); code != 200 {
		t.Errorf("repeat by id: %d %s", code, body)
	}
	if m := len(e.deliveriesOf(id)); m != n {
		t.Errorf("repeats queued %d events", m-n)
	}

	for _, c := range []struct {
		path, body string
		status     int
		mention    string
	}{
		{"/v1/events", `{"lead":{"email":"nobody@gmail.com"},"type":"stage","stage":"won"}`, 404, "not found"},
		{"/v1/events", `{"type":"stage","stage":"won"}`, 400, "lead"},
		{"/v1/events", `{"lead":{"phone":"0533 218 44 90"},"type":"stage","stage":"signed"}`, 400, "meeting, qualified, won"},
		{"/v1/events", `{"lead":{"phone":"0533 218 44 90"},"type":"stage","stage":"won","value":-5,"currency":"EUR"}`, 400, "value"},
		{"/v1/events", `{"lead":{"phone":"0533 218 44 90"},"type":"stage","stage":"won","value":5,"currency":"euros"}`, 400, "currency"},
		{"/v1/events", `{"lead":{"phone":"0533 218 44 90"},"type":"stage","stage":"won","colour":"red"}`, 400, "colour"},
		{"/v1/leads/" + id + "/events", `{"type":"stage","stage":"lost","at":"` + at(-9*24*time.Hour) + `"}`, 400, "lost"},
	} {
		code, _, body := e.do("POST", c.path, "application/json", c.body, withKey)
		if code != c.status || !strings.Contains(body, c.mention) {
			t.Errorf("%s: %d %s, want %d mentioning %q", c.body, code, body, c.status, c.mention)
		}
	}
	if code, _, _ := e.do("POST", "/v1/events", "application/json", calls[0], nil); code != 401 {
		t.Errorf("without a key: %d", code)
	}
}

func TestOldStageRefusedOverHTTP(t *testing.T) {
	e := newStageEnv(t)
	id := e.greyLead()
	old := time.Now().Add(-8 * 24 * time.Hour).UTC().Format(time.RFC3339)
	code, _, body := e.do("POST", "/v1/leads/"+id+"/events", "application/json",
		`{"type":"stage","stage":"won","value":6000,"currency":"EUR","at":"`+old+`"}`, withKey)
	if code != 400 || !strings.Contains(body, "7 days") {
		t.Fatalf("old stage: %d %s", code, body)
	}
	if _, ok := e.deliveriesOf(id)["stage:won"]; ok {
		t.Error("an old stage was queued")
	}
	hist := e.lead(id)["history"].([]any)
	last := hist[len(hist)-1].(map[string]any)
	if last["kind"] != "stage" || last["data"].(map[string]any)["refused"] == nil {
		t.Errorf("refusal not in the history: %v", last)
	}
}

// sign is Meta's X-Hub-Signature-256 of body (metahook's own test checks
// it against a known answer).
func sign(body, secret string) string { return metahook.Sign([]byte(body), secret) }

func TestCallWebhook(t *testing.T) {
	e := newStageEnv(t)
	id := e.greyLead()
	call := `{"caller":"+90 533 218 44 90","duration_s":75,"call_id":"CAL123"}`
	for _, c := range []struct {
		name   string
		path   string
		hdr    map[string]string
		status int
	}{
		{"no token", "/v1/calls", nil, 401},
		{"wrong token", "/v1/calls", map[string]string{"Authorization": "Bearer nope-0123456789abcdef"}, 401},
		{"wrong query token", "/v1/calls?token=nope", nil, 401},
	} {
		if code, _, body := e.do("POST", c.path, "application/json", call, c.hdr); code != c.status {
			t.Errorf("%s: %d %s", c.name, code, body)
		}
	}
	if v := e.lead(id)["verdict"]; v != "review" {
		t.Fatalf("a refused call changed the lead: %v", v)
	}
	code, _, body := e.do("POST", "/v1/calls?token="+callToken, "application/json", call, nil)
	if code != 200 || !strings.Contains(body, `"outcome":"evidence"`) || !strings.Contains(body, `"verdict":"clean"`) {
		t.Fatalf("call: %d %s", code, body)
	}
	if e.deliveriesOf(id)["qualified"] == nil {
		t.Error("no qualified event after a 75 s call")
	}
	code, _, body = e.do("POST", "/v1/calls", "application/json", call, map[string]string{"Authorization": "Bearer " + callToken})
	if code != 200 || !strings.Contains(body, `"outcome":"duplicate"`) {
		t.Errorf("repeated call: %d %s", code, body)
	}
	code, _, body = e.do("POST", "/v1/calls", "application/json", `{"caller":"0542 111 22 33","duration_s":90}`, withKey)
	if code != 200 || !strings.Contains(body, `"outcome":"no_lead"`) {
		t.Errorf("stranger with the API key: %d %s", code, body)
	}
	code, _, body = e.do("POST", "/v1/calls", "application/json", `{"caller":"","duration_s":-1}`, withKey)
	if code != 400 || !strings.Contains(body, "caller") || !strings.Contains(body, "duration_s") {
		t.Errorf("bad call: %d %s", code, body)
	}
	// The call token opens nothing else.
	if code, _, _ := e.do("GET", "/v1/leads/"+id, "", "", map[string]string{"Authorization": "Bearer " + callToken}); code != 401 {
		t.Errorf("call token read a lead: %d", code)
	}
}
