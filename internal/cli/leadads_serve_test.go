package cli_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

func leadAdsServeConfig(dsn, graphURL, token, leadAdsToken string) string {
	return testkit.Config{Database: dsn, GraphURL: graphURL, Delivery: "{poll: 1h}", SecretKey: true, Site: `
    meta:
      pixel_id: "111222333"
      access_token: "` + token + `"
      stages: {meeting: {event: Schedule}}
    lead_ads:
      page_ids: ["104857600123456"]
      access_token: "` + leadAdsToken + `"
      app_secret: "leadads-app-secret"
      verify_token: "leadgen-verify-0123456789"
      lead_event_source: DentCRM
      backfill: false
`}.YAML()
}

// TestServeLeadAds: on a running server, Meta's handshake is answered, a
// signed leadgen webhook of two Instant Form leads is kept at once, both
// leads are fetched from the Graph stand-in and judged: the one with a
// free-text answer is clean and sent as QualifiedLead, the one that says
// nothing waits in review until its CRM stage, which sends QualifiedLead
// and Schedule, each with lead_id. Forgotten, a lead is not brought back by
// Meta's redelivery.
func TestServeLeadAds(t *testing.T) {
	const page, form = "104857600123456", "987654321098765"
	g := graphtest.New(t)
	g.SetAppSecret("leadads-app-secret")
	g.AddForm(page, form, "Implant formu")
	now := time.Now().Add(-5 * time.Minute)
	contact := func(n string) []graphtest.Field {
		return []graphtest.Field{{Name: "full_name", Values: []string{"Ayşe Yılmaz"}},
			{Name: "email", Values: []string{"ayse.yilmaz" + n + "@gmail.com"}},
			{Name: "phone_number", Values: []string{"+90532412870" + n}}}
	}
	const talks, silent = "1200000000000101", "9007199254740993" // the second above 2^53
	g.AddLead(graphtest.Lead{ID: talks, Created: now, FormID: form, PageID: page, AdID: "120210000000000001", Platform: "fb",
		Fields: append(contact("1"), graphtest.Field{Name: "message",
			Values: []string{"Implant tedavisi için randevu almak istiyorum, hafta içi akşam uygunum."}})})
	g.AddLead(graphtest.Lead{ID: silent, Created: now, FormID: form, PageID: page, IsOrganic: true, Platform: "ig", Fields: contact("2")})

	dir, dsn := t.TempDir(), storetest.MigratedDSN(t)
	cfgText := leadAdsServeConfig(dsn, g.URL, graphtest.Token, graphtest.Token)
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
	resp, err := http.Get(base + "/v1/webhooks/leadgen/dent?hub.mode=subscribe&hub.verify_token=leadgen-verify-0123456789&hub.challenge=8123")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "8123" {
		t.Fatalf("handshake: %d %q", resp.StatusCode, b)
	}
	post := func(path, body string, hdr map[string]string) string { return postOK(t, base+path, body, hdr) }
	webhook := func() string {
		body := fmt.Sprintf(`{"object":"page","entry":[{"id":"%s","time":%d,"changes":[`+
			`{"field":"leadgen","value":{"leadgen_id":%s,"page_id":"%s","form_id":"%s","created_time":%d}},`+
			`{"field":"leadgen","value":{"leadgen_id":"%s","page_id":%s,"form_id":"%s","created_time":%d}}]}]}`,
			page, now.Unix(), silent, page, form, now.Unix(), talks, page, form, now.Unix())
		return post("/v1/webhooks/leadgen/dent", body, map[string]string{"X-Hub-Signature-256": metaSignature(body, "leadads-app-secret")})
	}
	if r := webhook(); !strings.Contains(r, `"queued":2`) {
		t.Fatalf("webhook: %s", r)
	}
	// Each lead's Lead event, and the clean one's QualifiedLead.
	sent := func(name, lead string) int {
		n := 0
		for _, ev := range g.Events() {
			if ev.EventName == name && strings.Contains(string(ev.JSON), `"lead_id":`+lead) &&
				ev.ActionSource == "system_generated" && strings.Contains(string(ev.JSON), `"event_source":"crm"`) &&
				strings.Contains(string(ev.JSON), `"lead_event_source":"DentCRM"`) {
				n++
			}
		}
		return n
	}
	waitUntil(t, func() bool {
		return sent("Lead", talks) == 1 && sent("Lead", silent) == 1 && sent("QualifiedLead", talks) == 1
	})
	if sent("QualifiedLead", silent) != 0 {
		t.Fatal("a form that says nothing was sent as qualified")
	}
	api := map[string]string{"Authorization": "Bearer dent-key-0123456789abcdef"}
	if r := post("/v1/events", `{"lead":{"lead_id":"`+silent+`"},"type":"stage","stage":"meeting"}`, api); !strings.Contains(r, `"clean"`) {
		t.Fatalf("stage: %s", r)
	}
	waitUntil(t, func() bool { return sent("QualifiedLead", silent) == 1 && sent("Schedule", silent) == 1 })

	// Forgotten, the person stays gone when Meta redelivers the webhook.
	if code, out, errOut := runCLI("", "forget", "--email", "ayse.yilmaz2@gmail.com", "--config", cfg); code != 0 || !strings.Contains(out, `"leads": 1`) {
		t.Fatalf("forget: %d %s %s", code, out, errOut)
	}
	if r := webhook(); !strings.Contains(r, `"queued":0`) || !strings.Contains(r, `"duplicate":2`) {
		t.Fatalf("redelivery after forget: %s", r)
	}
}

// postOK posts a JSON body to url with the headers and returns the answer,
// failing the test on anything but 200.
func postOK(t *testing.T, url, body string, hdr map[string]string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
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
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}

// metaSignature is a Meta webhook's X-Hub-Signature-256 of body.
func metaSignature(body, secret string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}
