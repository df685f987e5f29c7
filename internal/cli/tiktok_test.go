package cli_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
	"github.com/cleanads/cleanads/internal/tiktok/tiktoktest"
)

// TestServeDeliversToTikTokAlone: a config site with only a platforms:
// tiktok block (no meta:, no google:) sends its clean lead to TikTok: the
// website lead to the pixel with its event_id, the qualified lead to the
// CRM event set; the token comes from the file's block, sealed on start.
func TestServeDeliversToTikTokAlone(t *testing.T) {
	tt := tiktoktest.New(t)
	cfg := testkit.Config{Database: storetest.MigratedDSN(t), Delivery: "{poll: 1h}", SecretKey: true,
		Top: `platform_api_urls: {tiktok: "` + tt.URL + `"}`,
		Site: `
    platforms:
      tiktok:
        pixel_code: ` + tiktoktest.PixelCode + `
        crm_event_set_id: "` + tiktoktest.CRMEventSetID + `"
        access_token: "` + tiktoktest.AccessToken + `"
        stages: "won = Purchase"
`}.YAML()
	base, stop, errOut := serveConfig(t, cfg)
	defer func() {
		if code := stop(); code != 0 {
			t.Errorf("serve exited %d: %s", code, errOut.String())
		}
	}()
	req, _ := http.NewRequest("POST", base+"/v1/leads", strings.NewReader(`{"site":"dent","event_id":"browser-tt-1",`+
		`"email":"ayse.yilmaz@gmail.com","phone":"05324128719","name":"Ayşe Yılmaz","fill_ms":8400,`+
		`"message":"Implant tedavisi için randevu almak istiyorum, hafta içi akşam uygunum.",`+
		`"page_url":"https://www.istanbuldis.example/x?ttclid=E.C.P.tt-click","user_agent":"Mozilla/5.0","client_ip":"203.0.113.1"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer dent-key-0123456789abcdef")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("lead: %d %s", resp.StatusCode, b)
	}
	waitUntil(t, func() bool { return len(tt.Accepted()) == 2 })
	ids := strings.Join(tt.AcceptedIDs(), " ")
	if !strings.Contains(ids, "browser-tt-1") {
		t.Errorf("the pixel's lead event does not carry the lead's event_id: %s", ids)
	}
}
