package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/google"
	"github.com/cleanads/cleanads/internal/google/googletest"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

func googleConfig(dsn, graphURL, googleURL, tokenURL, token, clientID, clientSecret, refreshToken string) string {
	return testkit.Config{Database: dsn, GraphURL: graphURL, Delivery: "{poll: 1h}", SecretKey: true,
		Top: `google: {api_url: "` + googleURL + `", token_url: "` + tokenURL + `"}`,
		Site: `
    meta:
      pixel_id: "111"
      access_token: "` + token + `"
      stages:
        won: {event: Purchase}
    google:
      operating_account_id: 123-456-7890
      qualified_conversion_action: "555"
      stages: {won: "666"}
      currency: EUR
      consent: {ad_user_data: granted, ad_personalization: granted}
      client_id: "` + clientID + `"
      client_secret: "` + clientSecret + `"
      refresh_token: "` + refreshToken + `"
`}.YAML()
}

// TestServeDeliversToMetaAndGoogle: a website lead with a gclid judged
// clean reaches the Graph stand-in and the Google stand-in; its won stage
// of 6,000 EUR reaches both; a grey lead reaches neither until a call
// makes it clean.
func TestServeDeliversToMetaAndGoogle(t *testing.T) {
	g := graphtest.New(t)
	gg := googletest.New(t)
	gg.SetConversionActions("555", "666")
	base, stop, errOut := serveConfig(t, googleConfig(storetest.MigratedDSN(t), g.URL, gg.URL, gg.TokenURL(), graphtest.Token,
		googletest.ClientID, googletest.ClientSecret, googletest.RefreshToken))
	defer func() {
		if code := stop(); code != 0 {
			t.Errorf("serve exited %d: %s", code, errOut.String())
		}
	}()
	call := func(method, path, body string) map[string]any {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer dent-key-0123456789abcdef")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode/100 != 2 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
		var m map[string]any
		json.Unmarshal(b, &m)
		return m
	}
	post := func(path, body string) map[string]any { t.Helper(); return call("POST", path, body) }
	verdict := func(id any) any { t.Helper(); return call("GET", fmt.Sprintf("/v1/leads/%v", id), "")["verdict"] }
	lead := post("/v1/leads", `{"site":"dent","email":"Ayse.Yilmaz+dis@gmail.com","phone":"05324128719","name":"Ayşe Yılmaz","fill_ms":8400,`+
		`"message":"Implant tedavisi için randevu almak istiyorum, hafta içi akşam uygunum.","gclid":"Cj0KCQiA-gclid",`+
		`"page_url":"https://www.istanbuldis.example/x","user_agent":"Mozilla/5.0","client_ip":"203.0.113.1"}`)
	id, _ := lead["id"].(string)
	if id == "" || verdict(id) != "clean" {
		t.Fatalf("lead answer %v, verdict %v", lead, verdict(id))
	}
	waitUntil(t, func() bool { return len(g.Events()) == 2 && len(gg.Events()) == 1 })
	ev := gg.Events()[0]
	if ev.Destinations[0] != "555" {
		t.Errorf("qualified went to %v", ev.Destinations)
	}
	var e google.Event
	json.Unmarshal(ev.JSON, &e)
	if e.AdIdentifiers == nil || e.AdIdentifiers.GClid != "Cj0KCQiA-gclid" || e.TransactionID != google.TransactionID(model.LeadID(id), "qualified") ||
		e.UserData.UserIdentifiers[0].EmailAddress != google.Hash("ayseyilmaz@gmail.com") ||
		e.UserData.UserIdentifiers[1].PhoneNumber != google.Hash("+905324128719") || e.Consent.AdUserData != google.ConsentGranted {
		t.Errorf("google qualified event: %s", ev.JSON)
	}
	if !strings.Contains(string(gg.LastRequest()), `"encoding":"HEX"`) || !strings.Contains(string(gg.LastRequest()), `"accountId":"1234567890"`) {
		t.Errorf("request: %s", gg.LastRequest())
	}

	won := post("/v1/leads/"+id+"/events", `{"type":"stage","stage":"won","value":6000,"currency":"EUR"}`)
	var dests []string
	for _, d := range won["deliveries"].([]any) {
		dests = append(dests, d.(map[string]any)["destination"].(string)+"/"+d.(map[string]any)["kind"].(string))
	}
	if got := strings.Join(dests, " "); !strings.Contains(got, "google/qualified") || !strings.Contains(got, "meta/qualified") ||
		!strings.Contains(got, "google/stage:won") || !strings.Contains(got, "meta/lead") {
		t.Errorf("the lead's deliveries: %s", got)
	}
	waitUntil(t, func() bool { return len(g.Events()) == 3 && len(gg.Events()) == 2 })
	json.Unmarshal(gg.Events()[1].JSON, &e)
	if gg.Events()[1].Destinations[0] != "666" || e.ConversionValue != 6000 || e.Currency != "EUR" {
		t.Errorf("won at Google: %s", gg.Events()[1].JSON)
	}
	if m := g.Events()[2]; m.EventName != "Purchase" || !strings.Contains(string(m.JSON), `"value":6000`) {
		t.Errorf("won at Meta: %s", m.JSON)
	}

	grey := post("/v1/leads", `{"site":"dent","phone":"0533 218 44 90","name":"Mehmet Demir","message":"fiyat?","fill_ms":9000,`+
		`"gclid":"grey-gclid","page_url":"https://www.istanbuldis.example/x","user_agent":"Mozilla/5.0","client_ip":"203.0.113.2"}`)
	gid, _ := grey["id"].(string)
	// The grey lead's raw Lead goes to Meta as every lead's does; nothing
	// qualified goes anywhere until evidence comes.
	waitUntil(t, func() bool { return len(g.Events()) == 4 })
	if v := verdict(gid); v != "review" || g.Events()[3].EventName != "Lead" {
		t.Fatalf("the price-only lead: verdict %v, its event at Meta %s", v, g.Events()[3].EventName)
	}
	if len(gg.Events()) != 2 {
		t.Fatalf("a grey lead reached Google: %d events", len(gg.Events()))
	}
	post("/v1/leads/"+gid+"/events", `{"type":"call","duration_s":95}`)
	waitUntil(t, func() bool { return len(g.Events()) == 5 && len(gg.Events()) == 3 })
	if m := g.Events()[4]; m.EventName != "QualifiedLead" || !strings.Contains(string(m.JSON), `"action_source":"system_generated"`) {
		t.Errorf("the grey lead's qualified event at Meta after the call: %s", m.JSON)
	}
	json.Unmarshal(gg.Events()[2].JSON, &e)
	if e.AdIdentifiers.GClid != "grey-gclid" {
		t.Errorf("grey lead at Google: %s", gg.Events()[2].JSON)
	}

	// A visit from a Google app campaign (gbraid on the landing URL): the
	// lead that follows it carries the visit's click id to Google.
	req, _ := http.NewRequest("POST", base+"/v1/collect?site=dent", strings.NewReader(
		`{"url":"https://www.istanbuldis.example/implant?gbraid=0AAAAA-gbraid","consent":true}`))
	req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
	req.Header.Set("Origin", "https://www.istanbuldis.example")
	req.Header.Set("User-Agent", "Mozilla/5.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var visit struct {
		EventID string `json:"event_id"`
	}
	json.NewDecoder(resp.Body).Decode(&visit)
	resp.Body.Close()
	post("/v1/leads", `{"site":"dent","email":"zeynep.kaya@gmail.com","phone":"05357771122","name":"Zeynep Kaya","fill_ms":12000,`+
		`"message":"Diş beyazlatma için randevu almak istiyorum, cumartesi uygunum.","event_id":"`+visit.EventID+`",`+
		`"page_url":"https://www.istanbuldis.example/implant","user_agent":"Mozilla/5.0","client_ip":"203.0.113.3"}`)
	waitUntil(t, func() bool { return len(gg.Events()) == 4 })
	e = google.Event{}
	json.Unmarshal(gg.Events()[3].JSON, &e)
	if e.AdIdentifiers == nil || e.AdIdentifiers.GBraid != "0AAAAA-gbraid" || e.AdIdentifiers.GClid != "" {
		t.Errorf("the visit's gbraid at Google: %s", gg.Events()[3].JSON)
	}
}

// TestSendTestGoogle: send-test --google checks a sample event with
// validateOnly (Google records nothing) and says what Google refused.
func TestSendTestGoogle(t *testing.T) {
	g := graphtest.New(t)
	gg := googletest.New(t)
	gg.SetConversionActions("555", "666")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte(googleConfig("sqlite:"+filepath.Join(dir, "db"), g.URL, gg.URL, gg.TokenURL(), graphtest.Token,
		googletest.ClientID, googletest.ClientSecret, googletest.RefreshToken)), 0o600)
	code, out, errOut := runCLI("", "send-test", "--google", "--site", "dent", "--config", cfg)
	if code != 0 || !strings.Contains(out, `"validateOnly": true`) || !strings.Contains(out, "Google validated the test event") ||
		!strings.Contains(out, `"productDestinationId": "555"`) {
		t.Fatalf("send-test --google: %d\n%s\n%s", code, out, errOut)
	}
	if gg.Validations() != 1 || len(gg.Events()) != 0 {
		t.Errorf("%d validations, %d events recorded", gg.Validations(), len(gg.Events()))
	}
	gg.RevokeGrant()
	code, _, errOut = runCLI("", "send-test", "--google", "--site", "dent", "--config", cfg)
	if code == 0 || !strings.Contains(errOut, "Authorise CleanAds again") || strings.Contains(errOut, googletest.ClientSecret) {
		t.Errorf("revoked grant: %d %s", code, errOut)
	}
	if code, _, errOut := runCLI("", "send-test", "--google", "--site", "nope", "--config", cfg); code == 0 || !strings.Contains(errOut, "nope") {
		t.Errorf("unknown site: %d %s", code, errOut)
	}
}

// TestGooglePauseAcrossRestart: a site's Google pause stands when serve
// starts again on the same config, and is lifted at the start whose
// config brings new Google credentials (the owner authorised again).
func TestGooglePauseAcrossRestart(t *testing.T) {
	g := graphtest.New(t)
	gg := googletest.New(t)
	dsn := storetest.MigratedDSN(t)
	cfg := func(refresh string) string {
		return googleConfig(dsn, g.URL, gg.URL, gg.TokenURL(), graphtest.Token,
			googletest.ClientID, googletest.ClientSecret, refresh)
	}
	serveOnce := func(config string) {
		t.Helper()
		_, stop, errOut := serveConfig(t, config)
		if code := stop(); code != 0 {
			t.Fatalf("serve exited %d: %s", code, errOut.String())
		}
	}
	sh := model.Share{Site: "dent", Destination: model.DestinationGoogle}
	withDB := func(f func(db *store.DB)) {
		t.Helper()
		db, err := store.Open(context.Background(), dsn, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		f(db)
	}
	paused := func() (r string) {
		t.Helper()
		withDB(func(db *store.DB) { r, _ = db.DestinationPauseReason(context.Background(), sh) })
		return r
	}
	serveOnce(cfg(googletest.RefreshToken))
	withDB(func(db *store.DB) {
		if err := db.DestinationPauseSet(context.Background(), sh, "the customer data terms are not accepted", time.Now()); err != nil {
			t.Fatal(err)
		}
	})
	serveOnce(cfg(googletest.RefreshToken))
	if paused() == "" {
		t.Fatal("a restart on the same config lifted the Google pause")
	}
	serveOnce(cfg("1//a-new-refresh-token"))
	if r := paused(); r != "" {
		t.Errorf("new credentials left the pause: %q", r)
	}
}
