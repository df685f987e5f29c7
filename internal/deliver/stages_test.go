package deliver_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/web"
)

// The lead's life end to end: HTTP in (intake, CRM stages, a signed
// WhatsApp webhook), the delivery runner out, Meta's stand-in recording
// what arrives.

const (
	e2eKey      = "dent-key-0123456789abcdef"
	e2eSecret   = "app-secret-0123456789abcdef"
	e2eNumberID = "106540352242922"
)

type e2e struct {
	*fixture
	srv *httptest.Server
}

func newE2E(t *testing.T) *e2e {
	t.Helper()
	f := newFixture(t, model.ModeLive)
	f.site.APIKeyHash = model.HashAPIKey(e2eKey)
	f.site.Settings.WhatsApp.PhoneNumberIDs = []string{e2eNumberID}
	f.site.Settings.Meta.Stages = map[string]model.StageEvent{
		"qualified": {Event: "QualifiedLead"}, "meeting": {Event: "Schedule"}, "won": {Event: "Purchase"}}
	if err := f.db.SiteUpsert(f.ctx, f.site, f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	h := web.New(web.Options{App: f.svc, Store: f.db, Now: f.clk.Now,
		SourceSettings: map[string]string{"whatsapp.verify_token": "verify-0123456789abcdef", "whatsapp.app_secret": e2eSecret}}).Handler()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &e2e{fixture: f, srv: srv}
}

func (e *e2e) post(t *testing.T, path, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", e.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// greyLead posts a lead the rules hold for review (a link, no fill time).
func (e *e2e) greyLead(t *testing.T, phone, email string) string {
	t.Helper()
	// As t.js posts a lead its form's plugin confirmed: final, sent at once
	// (one nobody confirmed waits out its attempt window).
	code, body := e.post(t, "/v1/leads", fmt.Sprintf(`{"site":"dent","confirmed":true,"phone":%q,"email":%q,"name":"Mehmet Demir",
		"message":"Bu fiyat geçerli mi? https://www.istanbuldis.example/implant","fbclid":"IwAR2xYz",
		"lead_id":"120212345678901234","page_url":"https://www.istanbuldis.example/implant"}`, phone, email),
		map[string]string{"Origin": "https://www.istanbuldis.example", "User-Agent": "Mozilla/5.0 (test)"})
	if code != 202 {
		t.Fatalf("lead: %d %s", code, body)
	}
	var out struct{ ID string }
	json.Unmarshal([]byte(body), &out)
	l, _ := e.db.LeadByID(e.ctx, model.LeadID(out.ID))
	if l.Verdict != model.VerdictReview {
		t.Fatalf("want a review lead, got %s %+v", l.Verdict, l.Reasons)
	}
	return out.ID
}

// received is an event as the stand-in accepted it.
type received struct {
	EventName    string         `json:"event_name"`
	EventTime    int64          `json:"event_time"`
	EventID      string         `json:"event_id"`
	ActionSource string         `json:"action_source"`
	CustomData   map[string]any `json:"custom_data"`
	UserData     struct {
		Email  []string    `json:"em"`
		Phone  []string    `json:"ph"`
		FBC    string      `json:"fbc"`
		LeadID json.Number `json:"lead_id"`
	} `json:"user_data"`
}

func decode(t *testing.T, list []graphtest.Received) []received {
	t.Helper()
	out := make([]received, len(list))
	for i, r := range list {
		if err := json.Unmarshal(r.JSON, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestStagesReachMetaThroughTheRunner(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	id := e.greyLead(t, "0533 218 44 90", "mehmet.demir@gmail.com")
	submitted := e.clk.Now()
	e.run(t)
	if n := len(e.g.Events()); n != 1 {
		t.Fatalf("want the raw lead event only, got %d", n)
	}
	key := map[string]string{"Authorization": "Bearer " + e2eKey}
	var times []time.Time
	for _, c := range []struct{ ref, stage, extra string }{
		{`{"email":"MEHMET.DEMIR@gmail.com "}`, "qualified", ""},
		{`{"phone":"+90 533 218 4490"}`, "meeting", ""},
		{`{"id":"` + id + `"}`, "won", `,"value":6000,"currency":"EUR"`},
	} {
		e.clk.Add(30 * time.Hour)
		at := e.clk.Now().Add(-time.Hour)
		times = append(times, at)
		body := fmt.Sprintf(`{"lead":%s,"type":"stage","stage":%q,"at":%q%s}`, c.ref, c.stage, at.Format(time.RFC3339), c.extra)
		if code, resp := e.post(t, "/v1/events", body, key); code != 200 {
			t.Fatalf("%s: %d %s", c.stage, code, resp)
		}
		// The CRM retries: nothing is queued twice.
		if code, resp := e.post(t, "/v1/events", body, key); code != 200 {
			t.Fatalf("%s again: %d %s", c.stage, code, resp)
		}
		e.run(t)
	}
	all := e.g.Events()
	if len(all) != 4 {
		t.Fatalf("want 4 events at Meta, got %d", len(all))
	}
	got := decode(t, all[1:])
	email, _ := capi.HashField(capi.FieldEmail, "mehmet.demir@gmail.com", "TR")
	want := []struct {
		name  string
		value any
	}{{"QualifiedLead", nil}, {"Schedule", nil}, {"Purchase", 6000.0}}
	for i, w := range want {
		g := got[i]
		if g.EventName != w.name || g.EventTime != times[i].Unix() || g.ActionSource != "system_generated" {
			t.Errorf("%s: %+v", w.name, g)
		}
		if g.CustomData["value"] != w.value || g.CustomData["event_source"] != "crm" || g.CustomData["lead_event_source"] != "CleanAds" {
			t.Errorf("%s custom_data: %v", w.name, g.CustomData)
		}
		if len(g.UserData.Email) != 1 || g.UserData.Email[0] != email || g.UserData.Phone[0] != capi.Hash("905332184490") ||
			g.UserData.FBC != capi.MintFBC("IwAR2xYz", submitted) || g.UserData.LeadID != "120212345678901234" {
			t.Errorf("%s user_data is not the original lead's: %+v", w.name, g.UserData)
		}
	}
	if got[2].CustomData["currency"] != "EUR" {
		t.Errorf("currency: %v", got[2].CustomData)
	}
	// An old stage is refused and never reaches Meta.
	old := e.clk.Now().Add(-8 * 24 * time.Hour).Format(time.RFC3339)
	code, resp := e.post(t, "/v1/leads/"+id+"/events", `{"type":"stage","stage":"signed","at":"`+old+`"}`, key)
	if code != 400 || !strings.Contains(resp, "meeting, qualified, won") {
		t.Errorf("unknown stage: %d %s", code, resp)
	}
	e.site.Settings.Meta.Stages["lost"] = model.StageEvent{Event: "LeadLost"}
	e.db.SiteUpsert(e.ctx, e.site, e.clk.Now())
	code, resp = e.post(t, "/v1/leads/"+id+"/events", `{"type":"stage","stage":"lost","at":"`+old+`"}`, key)
	if code != 400 || !strings.Contains(resp, "7 days") {
		t.Errorf("old stage: %d %s", code, resp)
	}
	e.run(t)
	if n := len(e.g.Events()); n != 4 {
		t.Errorf("%d events at Meta after repeats and an old stage", n)
	}
}

func TestWhatsAppReplySendsTheQualifiedEvent(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	id := e.greyLead(t, "0533 218 44 90", "mehmet.demir@gmail.com")
	submitted := e.clk.Now()
	e.run(t)
	e.clk.Add(2 * time.Hour)
	body := fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{
		"messaging_product":"whatsapp","metadata":{"display_phone_number":"905320000000","phone_number_id":%q},
		"messages":[{"from":"905332184490","id":"wamid.e2e","timestamp":"%d","type":"text","text":{"body":"Evet"}}]}}]}]}`,
		e2eNumberID, e.clk.Now().Unix())
	mac := hmac.New(sha256.New, []byte(e2eSecret))
	mac.Write([]byte(body))
	signed := map[string]string{"X-Hub-Signature-256": "sha256=" + hex.EncodeToString(mac.Sum(nil))}

	if code, _ := e.post(t, "/v1/webhooks/whatsapp", body, nil); code != 401 {
		t.Errorf("unsigned: %d", code)
	}
	for range 2 { // Meta retries: handled once
		if code, resp := e.post(t, "/v1/webhooks/whatsapp", body, signed); code != 200 {
			t.Fatalf("signed: %d %s", code, resp)
		}
	}
	e.run(t)
	all := e.g.Events()
	if len(all) != 2 {
		t.Fatalf("want the lead and its qualified event, got %d", len(all))
	}
	q := decode(t, all[1:])[0]
	if q.EventName != "QualifiedLead" || q.EventTime != submitted.Unix() || q.ActionSource != "system_generated" ||
		all[1].EventID != capi.QualifiedEventID(model.LeadID(id), model.KindQualified) {
		t.Errorf("qualified event: %+v", q)
	}
}
