package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGoogleSettings(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "refresh")
	os.WriteFile(tokenFile, []byte("1//refresh-token\n"), 0o600)
	path := filepath.Join(dir, "c.yaml")
	os.WriteFile(path, []byte(`
sites:
  - id: dent
    country: TR
    api_key: "0123456789abcdef-api"
    meta:
      stages:
        won: {event: Purchase}
    google:
      operating_account_id: 123-456-7890
      login_account_id: "9876543210"
      qualified_conversion_action: "111"
      stages: {won: "222"}
      currency: eur
      consent: {ad_user_data: granted, ad_personalization: denied}
      client_id: cid.apps.googleusercontent.com
      client_secret: "${G_SECRET}"
      refresh_token_file: "`+tokenFile+`"
`), 0o600)
	c, err := Load(path, envOf(map[string]string{"G_SECRET": "client-secret-value"}))
	if err != nil {
		t.Fatal(err)
	}
	g := c.Sites[0].Google
	if g.OperatingAccountID != "1234567890" || g.Currency != "EUR" || g.Mode != "live" ||
		g.Credentials.RefreshToken != "1//refresh-token" || g.Credentials.ClientSecret != "client-secret-value" {
		t.Errorf("google: %+v", g)
	}
	m := c.Sites[0].SiteModel().Settings.Google
	if m == nil || m.ConversionAction("stage:won") != "222" || m.ConversionAction("qualified") != "111" {
		t.Errorf("model: %+v", m)
	}
	if d := c.Dump(); strings.Contains(d, "client-secret-value") || strings.Contains(d, "1//refresh-token") {
		t.Errorf("dump shows a Google secret:\n%s", d)
	}
	if c.Google.APIURL != "https://datamanager.googleapis.com" {
		t.Errorf("api url %q", c.Google.APIURL)
	}
}

func TestGoogleSettingsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "key.json")
	os.WriteFile(key, []byte(`{"type": "authorized_user"}`), 0o600)
	path := filepath.Join(dir, "c.yaml")
	os.WriteFile(path, []byte(`
sites:
  - id: dent
    country: TR
    api_key: "0123456789abcdef-api"
    google:
      operating_account_id: "12345"
      qualified_conversion_action: "abc"
      stages: {won: "2x2"}
      currency: euro
      consent: {ad_user_data: yes}
      mode: test
      credentials_file: "`+key+`"
  - id: two
    country: TR
    api_key: "0123456789abcdef-ap2"
    google:
      client_id: x
`), 0o600)
	_, err := Load(path, envOf(nil))
	var p Problems
	if !errors.As(err, &p) {
		t.Fatalf("want problems, got %v", err)
	}
	for _, k := range []string{"sites[0].google.operating_account_id", "sites[0].google.qualified_conversion_action",
		"sites[0].google.stages.won", "sites[0].google.currency", "sites[0].google.consent.ad_user_data",
		"sites[0].google.mode", "sites[0].google.credentials_file", "sites[1].google.operating_account_id"} {
		if !strings.Contains(err.Error(), k+":") {
			t.Errorf("no problem for %s in:\n%v", k, err)
		}
	}
}

// The google block's secrets come from CLEANADS_SITES_<ID>_GOOGLE_* too.
func TestGoogleSettingsFromEnv(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	os.WriteFile(path, []byte(`
sites:
  - id: dent
    country: TR
    api_key: "0123456789abcdef-api"
    google:
      operating_account_id: "1234567890"
      qualified_conversion_action: "111"
      client_id: cid
`), 0o600)
	c, err := Load(path, envOf(map[string]string{"CLEANADS_SITES_DENT_GOOGLE_CLIENT_SECRET": "env-secret",
		"CLEANADS_SITES_DENT_GOOGLE_REFRESH_TOKEN": "env-refresh", "CLEANADS_SITES_DENT_GOOGLE_MODE": "validate"}))
	if err != nil {
		t.Fatal(err)
	}
	g := c.Sites[0].Google
	if g.Credentials.ClientSecret != "env-secret" || g.Credentials.RefreshToken != "env-refresh" || g.Mode != "validate" {
		t.Errorf("from env: %+v", g)
	}
}

// A site that sends only to Google needs no meta block: its stages are
// Google's alone.
func TestGoogleOnlySite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	os.WriteFile(path, []byte(`
sites:
  - id: shop
    country: DE
    api_key: "0123456789abcdef-api"
    google:
      operating_account_id: 123-456-7890
      stages: {meeting: "333", won: "222"}
      client_id: cid.apps.googleusercontent.com
      client_secret: secret
      refresh_token: "1//refresh"
`), 0o600)
	c, err := Load(path, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	s := c.Sites[0].SiteModel()
	if s.Settings.Meta.PixelID != "" || s.Settings.Google.ConversionAction("stage:meeting") != "333" {
		t.Errorf("site: %+v", s.Settings)
	}
}
