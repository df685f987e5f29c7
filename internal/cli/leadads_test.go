package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

func leadAdsConfig(dsn, graphURL, token string) string {
	return testkit.Config{Database: dsn, GraphURL: graphURL, SecretKey: true, Keyless: true, Site: `
    lead_ads:
      page_ids: ["104857600123456"]
      access_token: "` + token + `"
      app_secret: "leadads-app-secret"
      verify_token: "leadgen-verify-0123456789"
`}.YAML()
}

func TestLeadAdsCheckCommand(t *testing.T) {
	g := graphtest.New(t)
	g.SetAppSecret("leadads-app-secret")
	g.AddForm("104857600123456", "987654321098765", "Implant formu")
	dir, dsn := t.TempDir(), storetest.MigratedDSN(t)
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte(leadAdsConfig(dsn, g.URL, graphtest.Token)), 0o600)
	runCLI("", "migrate", "--config", cfg)

	code, out, errOut := runCLI("", "leadads", "check", "--site", "dent", "--config", cfg)
	if code != 1 || !strings.Contains(out, "FIX  Page 104857600123456 sends no leadgen webhooks") ||
		!strings.Contains(out, "subscribed_apps?subscribed_fields=leadgen") || !strings.Contains(out, "ok   The access token works") {
		t.Errorf("without the subscription: %d\n%s%s", code, out, errOut)
	}
	g.SetSubscribedApps("104857600123456", graphtest.App{ID: "555", Name: "Dent CRM", Fields: []string{"leadgen"}})
	g.SetPermission("leads_retrieval", "declined")
	if code, out, _ := runCLI("", "leadads", "check", "--site", "dent", "--config", cfg); code != 1 ||
		!strings.Contains(out, "lacks the permission(s) leads_retrieval") {
		t.Errorf("without leads_retrieval: %d\n%s", code, out)
	}
	g.SetPermission("leads_retrieval", "granted")
	code, out, errOut = runCLI("", "leadads", "check", "--site", "dent", "--config", cfg)
	if code != 0 || strings.Contains(out, "FIX") || !strings.Contains(out, "Lead Ads is connected for site dent: webhooks at /v1/webhooks/leadgen/dent") {
		t.Errorf("all right: %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(out+errOut, graphtest.Token) || strings.Contains(out+errOut, "leadads-app-secret") {
		t.Error("a secret was printed")
	}
	if code, _, errOut := runCLI("", "leadads", "check", "--config", cfg); code != 2 || !strings.Contains(errOut, "--site") {
		t.Errorf("without --site: %d %s", code, errOut)
	}
	if code, _, _ := runCLI("", "leadads"); code != 2 {
		t.Errorf("without check: %d", code)
	}
}
