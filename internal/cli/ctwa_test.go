package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

func ctwaConfig(dsn, graphURL, token string) string {
	return testkit.Config{Database: dsn, GraphURL: graphURL, Delivery: "{poll: 1h}", SecretKey: true,
		Top: `whatsapp: {verify_token: "verify-0123456789abcdef", app_secret: "app-secret-0123456789abcdef"}`,
		Site: `
    meta:
      pixel_id: "111"
      access_token: "` + token + `"
      mode: test
      test_event_code: "TEST7"
      stages: {meeting: {event: Schedule}, won: {event: Purchase, currency: TRY}}
    whatsapp:
      phone_number_ids: ["106540352242922"]
      business_account_id: "102290129340398"
      dataset_id: "1283471935762519"
      stages: {meeting: QualifiedLead}
`}.YAML()
}

// TestServeCTWA: Click-to-WhatsApp first messages posted to a running
// server's webhook become leads, judged; a grey one answered after the
// business wrote, and one the owner confirms, reach the Graph stand-in's
// WABA dataset as QualifiedLead with their ctwa_clid and the WABA id, a won
// stage as a Purchase with its value, and a pitch sends nothing.
func TestServeCTWA(t *testing.T) {
	const (
		dataset = "1283471935762519"
		waba    = "102290129340398"
	)
	g := graphtest.New(t)
	g.SetDataset(dataset, waba)
	dir, dsn := t.TempDir(), storetest.MigratedDSN(t)
	cfgText := ctwaConfig(dsn, g.URL, graphtest.Token)
	cfg := filepath.Join(dir, "cleanads.yaml")
	os.WriteFile(cfg, []byte(cfgText), 0o600)
	if code, _, errOut := runCLI("", "migrate", "--config", cfg); code != 0 {
		t.Fatalf("migrate: %s", errOut)
	}
	base, _, errOut, stop := startServe(t, dir, cfgText, nil)
	defer func() {
		if code := stop(); code != 0 {
			t.Errorf("serve exited %d: %s", code, errOut.String())
		}
	}()
	post := func(path, body string, hdr map[string]string) string { return postOK(t, base+path, body, hdr) }
	webhook := func(value string) string {
		body := `{"object":"whatsapp_business_account","entry":[{"id":"` + waba + `","changes":[{"field":"messages","value":{` +
			`"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"106540352242922"},` +
			value + `}}]}]}`
		return post("/v1/webhooks/whatsapp", body, map[string]string{"X-Hub-Signature-256": metaSignature(body, "app-secret-0123456789abcdef")})
	}
	t0 := time.Now().Add(-20 * time.Minute).Unix()
	first := func(id, user, clid, text string) string {
		return fmt.Sprintf(`"contacts":[{"profile":{"name":"Ayşe"},"user_id":%q}],"messages":[{"from_user_id":%q,"id":%q,`+
			`"timestamp":"%d","type":"text","text":{"body":%q},"referral":{"source_url":"https://fb.me/3cr4Wqqkv",`+
			`"source_id":"120226305854810726","source_type":"ad","headline":"İmplant","ctwa_clid":%q}}]`, user, user, id, t0, text, clid)
	}
	api := map[string]string{"Authorization": "Bearer dent-key-0123456789abcdef"}

	// A grey first message, answered after the business wrote: evidence.
	if r := webhook(first("wamid.A1", "TR.1000000000000001", "ClidA", "Fiyat ne kadar?")); !strings.Contains(r, `"lead":1`) {
		t.Fatalf("first message: %s", r)
	}
	webhook(fmt.Sprintf(`"statuses":[{"id":"wamid.OUT","status":"delivered","timestamp":"%d","recipient_user_id":"TR.1000000000000001"}]`, t0+60))
	if r := webhook(fmt.Sprintf(`"contacts":[{"profile":{"name":"Ayşe"},"user_id":"TR.1000000000000001"}],"messages":[{"from_user_id":"TR.1000000000000001",`+
		`"id":"wamid.A2","timestamp":"%d","type":"text","text":{"body":"Yarın gelebilirim"}}]`, t0+120)); !strings.Contains(r, `"joined":1`) {
		t.Fatalf("answer: %s", r)
	}
	// A pitch: junk, nothing sent.
	webhook(first("wamid.P1", "TR.1000000000000002", "ClidP",
		"Merhaba, dijital ajansımızla SEO ve Google reklam hizmeti sunuyoruz, web siteniz için teklif verebilir miyiz?"))
	// A grey lead the owner confirms.
	webhook(first("wamid.C1", "TR.1000000000000003", "ClidC", "fiyat?"))
	post("/v1/events", `{"lead":{"whatsapp_user_id":"TR.1000000000000003"},"type":"customer"}`, api)
	// The first one is won, with its value.
	post("/v1/events", `{"lead":{"whatsapp_user_id":"TR.1000000000000001"},"type":"stage","stage":"won","value":4500}`, api)

	// LeadSubmitted for the two grey leads, QualifiedLead for both, one Purchase.
	waitUntil(t, func() bool { return len(g.Events()) >= 5 })
	got := map[string]map[string]any{}
	for _, ev := range g.Events() {
		var p struct {
			UserData   map[string]any `json:"user_data"`
			CustomData map[string]any `json:"custom_data"`
			EventTime  int64          `json:"event_time"`
		}
		json.Unmarshal(ev.JSON, &p)
		if ev.PixelID != dataset || ev.ActionSource != "business_messaging" || ev.TestEventCode != "TEST7" ||
			p.UserData["whatsapp_business_account_id"] != waba {
			t.Errorf("event %+v", ev)
		}
		clid, _ := p.UserData["ctwa_clid"].(string)
		key := ev.EventName + "/" + clid
		if got[key] != nil {
			t.Errorf("%s sent twice", key)
		}
		got[key] = map[string]any{"time": p.EventTime, "cd": p.CustomData}
	}
	for _, k := range []string{"LeadSubmitted/ClidA", "QualifiedLead/ClidA", "Purchase/ClidA", "LeadSubmitted/ClidC", "QualifiedLead/ClidC"} {
		if got[k] == nil {
			t.Errorf("no %s at Meta: %v", k, got)
		}
	}
	if len(got) != 5 {
		t.Errorf("Meta got %d events: %v", len(got), got)
	}
	if q := got["QualifiedLead/ClidA"]; q != nil && q["time"] != t0 {
		t.Errorf("QualifiedLead at %v, want the first message's time %d", q["time"], t0)
	}
	if p := got["Purchase/ClidA"]; p != nil {
		cd := p["cd"].(map[string]any)
		if cd["value"] != 4500.0 || cd["currency"] != "TRY" {
			t.Errorf("purchase custom_data %v", cd)
		}
	}
}
