package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWebhookSettings(t *testing.T) {
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "app_secret")
	os.WriteFile(secretFile, []byte("0123456789abcdef-app-secret\n"), 0o600)
	path := filepath.Join(dir, "c.yaml")
	os.WriteFile(path, []byte(`
whatsapp:
  verify_token: "${WA_VERIFY}"
  app_secret_file: "`+secretFile+`"
sites:
  - id: dent
    country: TR
    api_key: "0123456789abcdef-api"
    call_token: "0123456789abcdef-calls"
    whatsapp: {phone_number_ids: [" 106540352242922 "]}
    meta:
      stages:
        qualified: {event: QualifiedLead}
        won: {event: Purchase, value: 6000, currency: eur}
`), 0o600)
	c, err := Load(path, envOf(map[string]string{"WA_VERIFY": "verify-0123456789abcdef",
		"CLEANADS_SITES_DENT_WHATSAPP_PHONE_NUMBER_IDS": "106540352242922,106540352242923"}))
	if err != nil {
		t.Fatal(err)
	}
	s := c.Sites[0]
	if c.WhatsApp.AppSecret != "0123456789abcdef-app-secret" || c.WhatsApp.VerifyToken != "verify-0123456789abcdef" ||
		s.CallToken != "0123456789abcdef-calls" {
		t.Errorf("secrets: %+v %+v", c.WhatsApp, s)
	}
	m := s.SiteModel()
	if ids := m.Settings.WhatsApp.PhoneNumberIDs; len(ids) != 2 || ids[1] != "106540352242923" ||
		!m.Settings.WhatsApp.HasPhoneNumberID("106540352242922") {
		t.Errorf("site whatsapp settings: %+v", m.Settings.WhatsApp)
	}
	if m.Settings.CallTokenHash != "" {
		t.Errorf("SiteModel hashed the call token itself")
	}
	dump := c.Dump()
	for _, secret := range []string{"0123456789abcdef-app-secret", "verify-0123456789abcdef", "0123456789abcdef-calls"} {
		if strings.Contains(dump, secret) {
			t.Errorf("dump shows secret %q:\n%s", secret, dump)
		}
	}
}

func TestWebhookProblems(t *testing.T) {
	cases := []struct {
		name, yaml string
		keys       []string
	}{
		{"token without secret", "whatsapp: {verify_token: verify-0123456789abcdef}\n", []string{"whatsapp"}},
		{"numbers without the app", "sites: [{id: a, country: TR, whatsapp: {phone_number_ids: ['12']}}]\n",
			[]string{"whatsapp.app_secret"}},
		{"short verify token", "whatsapp: {verify_token: short, app_secret: s}\n", []string{"whatsapp.verify_token"}},
		{"bad number id", "whatsapp: {verify_token: verify-0123456789abcdef, app_secret: s}\n" +
			"sites: [{id: a, country: TR, whatsapp: {phone_number_ids: ['+90 532']}}]\n",
			[]string{"sites[0].whatsapp.phone_number_ids[0]"}},
		{"short call token", "sites: [{id: a, country: TR, call_token: short}]\n", []string{"sites[0].call_token"}},
		{"call token is the API key", "sites: [{id: a, country: TR, api_key: 0123456789abcdef, call_token: 0123456789abcdef}]\n",
			[]string{"sites[0].call_token"}},
		{"stage value without currency", "sites: [{id: a, country: TR, meta: {stages: {won: {event: Purchase, value: 10}}}}]\n",
			[]string{"sites[0].meta.stages.won"}},
		{"stage currency not a code", "sites: [{id: a, country: TR, meta: {stages: {won: {event: Purchase, currency: E1R}}}}]\n",
			[]string{"sites[0].meta.stages.won"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantProblems(t, c.yaml, c.keys)
		})
	}
}

// wantProblems loads yaml and checks that it is refused with exactly one
// problem for each of keys; it returns the error.
func wantProblems(t *testing.T, yaml string, keys []string) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(path, []byte(yaml), 0o600)
	_, err := Load(path, envOf(nil))
	var p Problems
	if !errors.As(err, &p) {
		t.Fatalf("want Problems, got %v", err)
	}
	got := map[string]bool{}
	for _, e := range p {
		got[e.Key] = true
	}
	for _, k := range keys {
		if !got[k] {
			t.Errorf("no problem for %s: %v", k, err)
		}
	}
	if len(p) != len(keys) {
		t.Errorf("want %d problems, got %v", len(keys), err)
	}
	return err
}
