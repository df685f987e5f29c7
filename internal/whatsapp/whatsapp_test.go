package whatsapp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/metahook"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/source"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
	"github.com/cleanads/cleanads/internal/web"
	"github.com/cleanads/cleanads/internal/webforms"
	"github.com/cleanads/cleanads/internal/whatsapp"
)

const (
	origin      = "https://www.istanbuldis.example"
	apiKey      = "dent-key-0123456789abcdef"
	waVerify    = "verify-0123456789abcdef"
	waSecret    = "app-secret-0123456789abcdef"
	waNumberID  = "106540352242922"
	leadPhone   = "0533 218 44 90"
	leadPhoneWA = "905332184490"
)

var (
	fromSite = map[string]string{"Origin": origin, "User-Agent": "Mozilla/5.0 test"}
	withKey  = map[string]string{"Authorization": "Bearer " + apiKey}
)

// env is the HTTP server with the WhatsApp source on the Meta app's
// secrets, its database and site dent.
type env struct {
	t   *testing.T
	db  *store.DB
	srv *httptest.Server
}

// settings are the Meta app's webhook secrets, as serve fills them from the
// config file.
var settings = map[string]string{whatsapp.SettingVerifyToken: waVerify, whatsapp.SettingAppSecret: waSecret}

// serve serves the app on db with the WhatsApp source built on set.
func serve(t *testing.T, db *store.DB, set map[string]string) *env {
	t.Helper()
	svc := app.New(app.Options{Store: db})
	src := whatsapp.New(source.Deps{Deps: platform.Deps{}, App: svc, Sites: db, Pauses: db, Settings: set})
	// The website's forms too: the tests post the lead a chat is matched with.
	forms := webforms.New(source.Deps{App: svc, Sites: db})
	srv := httptest.NewServer(web.New(web.Options{App: svc, Store: db, Sources: []source.Source{forms, src}}).Handler())
	t.Cleanup(srv.Close)
	return &env{t: t, db: db, srv: srv}
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
	return serve(t, db, settings)
}

// newStageEnv is newWhatsAppEnv with the won stage.
func newStageEnv(t *testing.T) *env {
	t.Helper()
	return newWhatsAppEnv(t, func(s *model.Site) {
		s.Settings.Meta.Stages["won"] = model.StageEvent{Event: "Purchase"}
	})
}

func (e *env) do(method, path, ctype, body string, hdr map[string]string) (int, http.Header, string) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// lead reads a lead through the API.
func (e *env) lead(id string) map[string]any {
	e.t.Helper()
	code, _, body := e.do("GET", "/v1/leads/"+id, "", "", map[string]string{"Authorization": "Bearer " + apiKey})
	if code != 200 {
		e.t.Fatalf("get lead: %d %s", code, body)
	}
	var m map[string]any
	json.Unmarshal([]byte(body), &m)
	return m
}

func (e *env) count() int {
	n, err := e.db.LeadCount(context.Background(), "dent")
	if err != nil {
		e.t.Fatal(err)
	}
	return n
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

func sign(body, secret string) string { return metahook.Sign([]byte(body), secret) }

// waBody is a WhatsApp Cloud API messages webhook as Meta sends it.
func waBody(msgID, from string) string {
	return fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"value":{
		"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":%q},
		"contacts":[{"profile":{"name":"Mehmet"},"wa_id":%q,"user_id":"TR.1502576394655843"}],
		"messages":[{"from":%q,"from_user_id":"TR.1502576394655843","id":%q,"timestamp":"%d","type":"text","text":{"body":"Merhaba, evet ilgileniyorum"}}]},
		"field":"messages"}]}]}`, waNumberID, from, from, msgID, time.Now().Unix())
}

func TestWhatsAppHandshake(t *testing.T) {
	e := newStageEnv(t)
	q := url.Values{"hub.mode": {"subscribe"}, "hub.verify_token": {waVerify}, "hub.challenge": {"1158201444"}}
	code, hdr, body := e.do("GET", "/v1/webhooks/whatsapp?"+q.Encode(), "", "", nil)
	if code != 200 || body != "1158201444" || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
		t.Errorf("handshake: %d %q %v", code, body, hdr)
	}
	for _, bad := range []url.Values{
		{"hub.mode": {"subscribe"}, "hub.verify_token": {"wrong"}, "hub.challenge": {"1"}},
		{"hub.mode": {"unsubscribe"}, "hub.verify_token": {waVerify}, "hub.challenge": {"1"}},
		{"hub.challenge": {"1"}},
	} {
		if code, _, body := e.do("GET", "/v1/webhooks/whatsapp?"+bad.Encode(), "", "", nil); code != 403 || strings.Contains(body, `"1"`) {
			t.Errorf("%v: %d %s", bad, code, body)
		}
	}
}

func TestWhatsAppWebhook(t *testing.T) {
	e := newStageEnv(t)
	id := e.greyLead()
	body := waBody("wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=", leadPhoneWA)

	// Unsigned, signed with another secret, or over other bytes: refused,
	// nothing recorded.
	for _, c := range []struct {
		sig    string
		status int
	}{
		{"", 401}, {sign(body, "another-secret"), 403}, {sign(body+" ", waSecret), 403}, {"sha256=zz", 403},
		{strings.TrimPrefix(sign(body, waSecret), "sha256="), 403},
	} {
		h := map[string]string{}
		if c.sig != "" {
			h["X-Hub-Signature-256"] = c.sig
		}
		if code, _, resp := e.do("POST", "/v1/webhooks/whatsapp", "application/json", body, h); code != c.status {
			t.Errorf("signature %q: %d %s", c.sig, code, resp)
		}
	}
	if v := e.lead(id)["verdict"]; v != "review" {
		t.Fatalf("a refused webhook changed the lead: %v", v)
	}

	signed := map[string]string{"X-Hub-Signature-256": sign(body, waSecret)}
	code, _, resp := e.do("POST", "/v1/webhooks/whatsapp", "application/json", body, signed)
	if code != 200 || !strings.Contains(resp, `"evidence":1`) {
		t.Fatalf("signed webhook: %d %s", code, resp)
	}
	l := e.lead(id)
	if l["verdict"] != "clean" || l["decided_by"] != "evidence" {
		t.Errorf("after the reply: %v %v", l["verdict"], l["decided_by"])
	}
	q := e.deliveriesOf(id)["qualified"]
	if q == nil || q["event_name"] != "QualifiedLead" || q["action_source"] != "system_generated" {
		t.Errorf("qualified event: %v", q)
	}

	// Meta retries: the same message is handled once.
	code, _, resp = e.do("POST", "/v1/webhooks/whatsapp", "application/json", body, signed)
	if code != 200 || !strings.Contains(resp, `"duplicate":1`) {
		t.Errorf("retry: %d %s", code, resp)
	}
	evidence := 0
	for _, h := range e.lead(id)["history"].([]any) {
		if h.(map[string]any)["kind"] == "evidence" {
			evidence++
		}
	}
	if evidence != 1 {
		t.Errorf("%d evidence entries for one message", evidence)
	}

	// A stranger's message and a status update are answered 200.
	other := waBody("wamid.other", "905421112233")
	code, _, resp = e.do("POST", "/v1/webhooks/whatsapp", "application/json", other, map[string]string{"X-Hub-Signature-256": sign(other, waSecret)})
	if code != 200 || !strings.Contains(resp, `"no_lead":1`) {
		t.Errorf("stranger: %d %s", code, resp)
	}
	status := `{"object":"whatsapp_business_account","entry":[{"changes":[{"field":"messages","value":{"metadata":{"phone_number_id":"` +
		waNumberID + `"},"statuses":[{"id":"wamid.x","status":"read"}]}}]}]}`
	if code, _, resp := e.do("POST", "/v1/webhooks/whatsapp", "application/json", status, map[string]string{"X-Hub-Signature-256": sign(status, waSecret)}); code != 200 {
		t.Errorf("status update: %d %s", code, resp)
	}
}

func TestWhatsAppWebhookOff(t *testing.T) {
	e := serve(t, storetest.New(t), nil)
	body := waBody("wamid.1", leadPhoneWA)
	if code, _, _ := e.do("POST", "/v1/webhooks/whatsapp", "application/json", body, map[string]string{"X-Hub-Signature-256": sign(body, "")}); code != 404 {
		t.Errorf("webhook without a secret: %d", code)
	}
	if code, _, _ := e.do("GET", "/v1/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=&hub.challenge=1", "", "", nil); code != 403 {
		t.Errorf("handshake without a token: %d", code)
	}
}
