package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/platform"
)

// A config site gives a platform without a block of its own (TikTok) its
// settings and secrets in platforms:, keyed as the admin UI's fields are;
// the secret never shows in the dump.
func TestSitePlatforms(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "tt")
	os.WriteFile(tokenFile, []byte("tt-token-from-file\n"), 0o600)
	path := filepath.Join(dir, "c.yaml")
	os.WriteFile(path, []byte(`
sites:
  - id: dent
    country: TR
    api_key: "0123456789abcdef-api"
    platforms:
      tiktok:
        pixel_code: C4ABCD1234EFGH5678IJ
        crm_event_set_id: "${TT_SET}"
        access_token_file: "`+tokenFile+`"
        mode: test
        test_event_code: TEST42
        stages: "won = Purchase\nmeeting = Schedule"
`), 0o600)
	c, err := Load(path, envOf(map[string]string{"TT_SET": "7300000000000000001"}))
	if err != nil {
		t.Fatal(err)
	}
	s := c.Sites[0].SiteModel()
	if got := s.Secrets[platform.SecretName("tiktok", "access_token")]; got != "tt-token-from-file" {
		t.Errorf("token %q", got)
	}
	doc := string(s.Settings.Platforms["tiktok"])
	for _, want := range []string{`"pixel_code":"C4ABCD1234EFGH5678IJ"`, `"crm_event_set_id":"7300000000000000001"`, `"won":"Purchase"`} {
		if !strings.Contains(doc, want) {
			t.Errorf("settings %s lack %s", doc, want)
		}
	}
	if d := c.Dump(); strings.Contains(d, "tt-token-from-file") {
		t.Errorf("the dump shows the token:\n%s", d)
	}

	os.WriteFile(path, []byte(`
sites:
  - id: dent
    country: TR
    api_key: "0123456789abcdef-api"
    platforms:
      pinterest: {tag_id: "1"}
      tiktok:
        pixel_code: C4ABCD1234EFGH5678IJ
        access_token: secret-value
        pixel: typo
        mode: loud
        stages: "won Purchase"
`), 0o600)
	_, err = Load(path, envOf(nil))
	if err == nil {
		t.Fatal("a wrong platforms: block loaded")
	}
	for _, k := range []string{"sites[0].platforms.pinterest:", "sites[0].platforms.tiktok.pixel:",
		"sites[0].platforms.tiktok.mode:", "sites[0].platforms.tiktok.stages:"} {
		if !strings.Contains(err.Error(), k) {
			t.Errorf("no problem for %s in:\n%v", k, err)
		}
	}
}
