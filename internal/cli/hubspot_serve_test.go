package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/hubspot"
	"github.com/cleanads/cleanads/internal/hubspot/hubspottest"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/secret"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestServeHubSpot: on a running server behind a proxy (public_url), a
// deal moved to the meeting stage in HubSpot, posted signed over the
// public address, reaches Meta as the Schedule event of the lead whose
// e-mail the deal's contact has, read from the HubSpot stand-in with the
// site's sealed token.
func TestServeHubSpot(t *testing.T) {
	g := graphtest.New(t)
	hs := hubspottest.New(t)
	const public = "https://ads.example.com"
	dir, dsn := t.TempDir(), storetest.MigratedDSN(t)
	cfgText := testkit.Config{Database: dsn, GraphURL: g.URL, Delivery: "{poll: 1h}", SecretKey: true,
		Top: "public_url: \"" + public + "\"\nplatform_api_urls: {hubspot: \"" + hs.URL + "\"}", Site: `
    meta:
      pixel_id: "111222333"
      access_token: "` + graphtest.Token + `"
      stages: {meeting: {event: Schedule}}
`}.YAML()
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
	req, _ := http.NewRequest("POST", base+"/v1/leads", strings.NewReader(`{"site":"dent","event_id":"browser-hs-1",`+
		`"email":"ayse.yilmaz@gmail.com","phone":"05324128719","name":"Ayşe Yılmaz","fill_ms":8400,`+
		`"message":"Implant tedavisi için randevu almak istiyorum, hafta içi akşam uygunum.",`+
		`"page_url":"https://www.istanbuldis.example/implant","user_agent":"Mozilla/5.0","client_ip":"203.0.113.1"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testkit.SiteKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("lead: %d %s", resp.StatusCode, b)
	}

	// The owner connects HubSpot on the site's page: its settings and
	// sealed secrets, as the page stores them.
	box, err := secret.NewBox(testkit.SecretKey)
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), dsn, store.Options{Secrets: box})
	if err != nil {
		t.Fatal(err)
	}
	site, err := db.SiteByID(context.Background(), "dent")
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(hubspot.Settings{DealStages: map[string]string{"appointmentscheduled": "meeting"}})
	if site.Settings.Platforms == nil {
		site.Settings.Platforms = map[string]json.RawMessage{}
	}
	site.Settings.Platforms[hubspot.Name] = doc
	site.Secrets = map[string]string{
		platform.SecretName(hubspot.Name, hubspot.SecretAccessToken):  hubspottest.Token,
		platform.SecretName(hubspot.Name, hubspot.SecretClientSecret): hubspottest.ClientSecret}
	if err := db.SiteUpsert(context.Background(), site, time.Now()); err != nil {
		t.Fatal(err)
	}
	db.Close()

	hs.AddContact(hubspottest.Contact{ID: "501", Email: "Ayse.Yilmaz@gmail.com"})
	hs.AddDeal(hubspottest.Deal{ID: "9001", Stage: "appointmentscheduled", Contacts: []string{"501"}})
	body := hubspottest.Body(hubspottest.DealStage(1001, "9001", "appointmentscheduled", time.Now().Add(-time.Minute)))
	if code, answer := hubspottest.Post(t, base+"/v1/webhooks/hubspot/dent", public+"/v1/webhooks/hubspot/dent",
		hubspottest.ClientSecret, body, time.Now()); code != 200 || !strings.Contains(answer, `"queued":1`) {
		t.Fatalf("webhook: %d %s", code, answer)
	}
	waitUntil(t, func() bool {
		for _, e := range g.Events() {
			if e.EventName == "Schedule" {
				return true
			}
		}
		return false
	})
}
