package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLeadAdsSettings(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "page_token")
	os.WriteFile(tokenFile, []byte("EAAB-page-token-0123456789\n"), 0o600)
	path := filepath.Join(dir, "c.yaml")
	os.WriteFile(path, []byte(`
sites:
  - id: dent
    country: TR
    lead_ads:
      page_ids: [" 104857600123456 "]
      access_token_file: "`+tokenFile+`"
      app_secret: "${LA_SECRET}"
      verify_token: "leadgen-verify-0123456789"
      lead_event_source: DentCRM
      fields: {comments: message}
      forms:
        "987654321098765": {fields: {hangi_tedavi: message, dogum_tarihi: "-"}}
`), 0o600)
	c, err := Load(path, envOf(map[string]string{"LA_SECRET": "app-secret-0123456789",
		"CLEANADS_SITES_DENT_LEAD_ADS_LEAD_EVENT_SOURCE": "DentCRM v2"}))
	if err != nil {
		t.Fatal(err)
	}
	m := c.Sites[0].SiteModel()
	la := m.Settings.LeadAds
	if !la.HasPage("104857600123456") || la.EventSource() != "DentCRM v2" || la.Target("987654321098765", "hangi_tedavi") != "message" ||
		la.Target("987654321098765", "dogum_tarihi") != "-" || la.Target("1", "comments") != "message" || la.Target("1", "x") != "" {
		t.Errorf("settings %+v", la)
	}
	if m.LeadAds.AccessToken != "EAAB-page-token-0123456789" || m.LeadAds.AppSecret != "app-secret-0123456789" ||
		m.LeadAds.VerifyToken != "leadgen-verify-0123456789" {
		t.Errorf("secrets %+v", m.LeadAds)
	}
	dump := c.Dump()
	for _, secret := range []string{"EAAB-page-token-0123456789", "app-secret-0123456789", "leadgen-verify-0123456789"} {
		if strings.Contains(dump, secret) {
			t.Errorf("config show prints %q:\n%s", secret, dump)
		}
	}
	if !strings.Contains(dump, "lead_event_source: DentCRM v2") {
		t.Errorf("dump lacks the lead_ads block:\n%s", dump)
	}
}

func TestLeadAdsProblems(t *testing.T) {
	cases := []struct {
		name, yaml string
		keys       []string
	}{
		{"pages without secrets", "sites: [{id: a, country: TR, lead_ads: {page_ids: ['1']}}]\n", []string{"sites[0].lead_ads"}},
		{"secrets without pages", "sites: [{id: a, country: TR, lead_ads: {access_token: t}}]\n", []string{"sites[0].lead_ads.page_ids"}},
		{"bad page id and mapping", "sites: [{id: a, country: TR, lead_ads: {page_ids: ['my-page'], access_token: t, app_secret: s, " +
			"verify_token: leadgen-verify-0123456789, fields: {q: telephone}, forms: {'x1': {fields: {q: email}}}}}]\n",
			[]string{"sites[0].lead_ads.page_ids[0]", "sites[0].lead_ads.fields.q", "sites[0].lead_ads.forms.x1"}},
		{"short verify token", "sites: [{id: a, country: TR, lead_ads: {page_ids: ['1'], access_token: t, app_secret: s, verify_token: short}}]\n",
			[]string{"sites[0].lead_ads.verify_token"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantProblems(t, c.yaml, c.keys)
		})
	}
}
