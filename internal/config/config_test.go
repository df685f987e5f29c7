package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestDefaults(t *testing.T) {
	c, err := Load("", envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:8080" || c.Database != DefaultDatabase || len(c.Sites) != 0 {
		t.Errorf("defaults: %+v", c)
	}
	if len(c.Proxies) != 2 {
		t.Errorf("default proxies: %v", c.Proxies)
	}
}

func TestLoadFile(t *testing.T) {
	env := envOf(map[string]string{
		"TEST_ADMIN_PASSWORD": "s3cret-password",
		"DENT_API_KEY":        "0123456789abcdef0123",
		"DENT_META_TOKEN":     "EAAtoken",
	})
	c, err := Load("testdata/full.yaml", env)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Sites[0]
	if s.APIKey != "0123456789abcdef0123" || s.Meta.AccessToken != "EAAtoken" || c.Admin.Password != "s3cret-password" {
		t.Errorf("secrets not expanded: %+v", s)
	}
	if s.Country != "TR" || s.Origins[0] != "https://www.istanbuldis.example" || s.Consent != model.ConsentImplied {
		t.Errorf("site not normalised: %+v", s)
	}
	if s.Meta.Stages["won"].Event != "Purchase" || s.Qualify.ReviewFrom != 25 ||
		time.Duration(s.Qualify.DuplicateWindow) != 5*24*time.Hour {
		t.Errorf("nested settings: %+v", s)
	}
	m := s.SiteModel()
	if m.ID != "dent" || !m.Pinned || m.AccessToken != "EAAtoken" || m.Settings.Meta.Mode != model.ModeTest {
		t.Errorf("site model: %+v", m)
	}
	dump := c.Dump()
	for _, secret := range []string{"EAAtoken", "s3cret-password", "0123456789abcdef0123"} {
		if strings.Contains(dump, secret) {
			t.Errorf("dump shows secret %q:\n%s", secret, dump)
		}
	}
	if !strings.Contains(dump, "pixel_id: \"123456789012345\"") {
		t.Errorf("dump lacks settings:\n%s", dump)
	}
}

func TestEnvOverrides(t *testing.T) {
	env := envOf(map[string]string{
		"TEST_ADMIN_PASSWORD":                   "s3cret-password",
		"DENT_API_KEY":                          "0123456789abcdef0123",
		"DENT_META_TOKEN":                       "EAAtoken",
		"CLEANADS_LISTEN":                       "0.0.0.0:80",
		"CLEANADS_TRUSTED_PROXIES":              "192.168.0.0/16, 10.1.2.3",
		"CLEANADS_SITES_DENT_META_MODE":         "dry_run",
		"CLEANADS_SITES_DENT_QUALIFY_JUNK_FROM": "80",
		"CLEANADS_SITES_DENT_ORIGINS":           "https://a.example,https://b.example",
		"CLEANADS_SITES_DENT_META_PAGE_VIEW":    "false",
		"CLEANADS_SITES_DENT_META_STAGES":       `{"meeting": {"event": "Schedule"}}`,
	})
	c, err := Load("testdata/full.yaml", env)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Sites[0]
	if c.Listen != "0.0.0.0:80" || len(c.Proxies) != 2 || s.Meta.Mode != model.ModeDryRun || s.Qualify.JunkFrom != 80 ||
		len(s.Origins) != 2 || s.Meta.PageView == nil || *s.Meta.PageView || s.Meta.Stages["meeting"].Event != "Schedule" {
		t.Errorf("env not applied: %+v %+v", c, s)
	}
}

func TestSecretFiles(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("from-a-file-123\n"), 0o600)
	c, err := Load("", envOf(map[string]string{
		"CLEANADS_ADMIN_EMAIL":         "a@example.com",
		"CLEANADS_ADMIN_PASSWORD_FILE": pw,
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Admin.Password != "from-a-file-123" {
		t.Errorf("password = %q", c.Admin.Password)
	}
}

// TestEveryProblemAtOnce writes one file with a mistake in every key and
// expects each to be reported, by key, in one error.
func TestEveryProblemAtOnce(t *testing.T) {
	bad := `
listen: "nonsense"
database: "mysql://x"
public_url: "ftp://x"
trusted_proxies: ["10.0.0.0/99", "not-an-ip"]
meta: {graph_url: "graph.facebook.com", api_version: "25"}
admin: {email: "nobody", password: "short", time_zone: "Mars/Olympus"}
log: {level: loud, format: xml}
secret_key: "a"
secret_key_file: "/nonexistent/key"
sites:
  - id: "Bad Id"
    api_key: "short"
    origins: ["www.example.com", "https://ok.example/path"]
    country: "XX"
    cookie_domain: "https://x"
    thank_you_url: "https://elsewhere.example/thanks"
    consent: "maybe"
    meta:
      pixel_id: "abc"
      mode: "tset"
      lead_event: "1bad"
      stages: {won: {event: "", value: -1, currency: "EURO"}}
    qualify: {review_from: 80, junk_from: 70, min_fill_ms: -5, review_timeout: 10d}
  - id: "Bad Id"
    country: ""
    meta: {mode: test}
  - id: "s3"
    country: "DE"
    api_key: "${UNSET_VARIABLE}"
`
	path := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(path, []byte(bad), 0o600)
	_, err := Load(path, envOf(nil))
	var p Problems
	if !errors.As(err, &p) {
		t.Fatalf("want Problems, got %v", err)
	}
	want := []string{
		"listen", "database", "public_url", "trusted_proxies[0]", "trusted_proxies[1]", "meta.graph_url",
		"meta.api_version", "admin.email", "admin.password", "admin.time_zone", "log.level", "log.format", "secret_key",
		"sites[0].id", "sites[0].api_key", "sites[0].origins[0]", "sites[0].origins[1]", "sites[0].country",
		"sites[0].cookie_domain", "sites[0].thank_you_url", "sites[0].consent", "sites[0].meta.pixel_id",
		"sites[0].meta.mode", "sites[0].meta.lead_event", "sites[0].meta.stages.won",
		"sites[0].qualify.review_from", "sites[0].qualify.min_fill_ms", "sites[0].qualify.review_timeout",
		"sites[1].id", "sites[1].country", "sites[1].meta.pixel_id", "sites[1].meta.access_token",
		"sites[1].meta.test_event_code", "sites[2].api_key",
	}
	got := map[string]bool{}
	for _, e := range p {
		got[e.Key] = true
	}
	for _, k := range want {
		if !got[k] {
			t.Errorf("no problem reported for %s", k)
		}
	}
	if !strings.Contains(err.Error(), "environment variable UNSET_VARIABLE is not set") {
		t.Errorf("unset variable not named:\n%v", err)
	}
	t.Logf("%v", err)
}

func TestUnknownKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "typo.yaml")
	os.WriteFile(path, []byte("listen: \"127.0.0.1:1\"\nlisen: x\n"), 0o600)
	_, err := Load(path, envOf(nil))
	if err == nil || !strings.Contains(err.Error(), "lisen") {
		t.Fatalf("want an error naming the unknown key, got %v", err)
	}
}

func TestBadEnvValue(t *testing.T) {
	_, err := Load("testdata/full.yaml", envOf(map[string]string{
		"TEST_ADMIN_PASSWORD": "s3cret-password", "DENT_API_KEY": "0123456789abcdef0123", "DENT_META_TOKEN": "x",
		"CLEANADS_SITES_DENT_QUALIFY_JUNK_FROM": "many",
	}))
	if err == nil || !strings.Contains(err.Error(), "CLEANADS_SITES_DENT_QUALIFY_JUNK_FROM") {
		t.Fatalf("want the variable named, got %v", err)
	}
}

func TestExpand(t *testing.T) {
	var p Problems
	got := expand("k", "a$$b${X}c", envOf(map[string]string{"X": "1"}), &p)
	if got != "a$b1c" || len(p) != 0 {
		t.Errorf("expand = %q, %v", got, p)
	}
}

func TestDeliverySettings(t *testing.T) {
	c, err := Load("", envOf(map[string]string{"CLEANADS_DELIVERY_WORKERS": "8", "CLEANADS_DELIVERY_POLL": "5s"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Delivery.Workers != 8 || time.Duration(c.Delivery.Poll) != 5*time.Second ||
		time.Duration(c.Delivery.Lease) != 10*time.Minute || time.Duration(c.Delivery.Timeout) != 30*time.Second {
		t.Errorf("delivery: %+v", c.Delivery)
	}
	if d := c.Dump(); !strings.Contains(d, "lease: 10m0s") {
		t.Errorf("dump shows the lease as %q", d)
	}
	path := filepath.Join(t.TempDir(), "d.yaml")
	os.WriteFile(path, []byte("delivery: {workers: 0, lease: 1m, timeout: 30s, poll: 2h}\n"), 0o600)
	_, err = Load(path, envOf(nil))
	var p Problems
	if !errors.As(err, &p) || len(p) != 3 {
		t.Fatalf("want 3 problems, got %v", err)
	}
	for _, k := range []string{"delivery.workers", "delivery.lease", "delivery.poll"} {
		if !strings.Contains(err.Error(), k) {
			t.Errorf("%s not named in %v", k, err)
		}
	}
}

func TestCheckSite(t *testing.T) {
	s := Site{ID: "dent", Origins: []string{"HTTPS://WWW.Dent.example/"}, Country: "tr",
		Meta: SiteMeta{MetaSettings: model.MetaSettings{Mode: "test", PixelID: "12ab"}}}
	problems := CheckSite(&s)
	keys := map[string]bool{}
	for _, p := range problems {
		keys[p.Key] = true
	}
	for _, k := range []string{"meta.pixel_id", "meta.access_token", "meta.test_event_code"} {
		if !keys[k] {
			t.Errorf("no problem for %s in %v", k, problems)
		}
	}
	if s.Origins[0] != "https://www.dent.example" || s.Country != "TR" || s.Name != "dent" {
		t.Errorf("not normalised: %+v", s)
	}
	ok := Site{ID: "dent", Origins: []string{"https://dent.example"}, Country: "TR",
		Meta: SiteMeta{MetaSettings: model.MetaSettings{Mode: "dry_run"}}}
	if p := CheckSite(&ok); len(p) != 0 {
		t.Errorf("a good site has problems: %v", p)
	}
}

func TestTimeZone(t *testing.T) {
	c, err := Load("", envOf(map[string]string{"CLEANADS_ADMIN_TIME_ZONE": "Europe/Istanbul"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Admin.Location == nil || c.Admin.Location.String() != "Europe/Istanbul" {
		t.Errorf("location = %v", c.Admin.Location)
	}
}

func TestDumpHidesDatabasePassword(t *testing.T) {
	c, err := Load("", envOf(map[string]string{"CLEANADS_DATABASE": "postgres://app:hunter22@db.internal:5432/cleanads"}))
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Dump(); strings.Contains(d, "hunter22") || !strings.Contains(d, "db.internal") {
		t.Errorf("dump:\n%s", d)
	}
}

// Qualification settings the rules refuse (found by FuzzLoad: an unknown
// phrase list passed and was replaced by the defaults at serve time) are
// problems of the config, each under its key.
func TestQualifySettingsTheRulesRefuse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.yaml")
	os.WriteFile(path, []byte(`sites:
  - id: dent
    country: TR
    qualify:
      weights: {NOPE: 5, HONEYPOT: 500}
      phrases: {vendorz: {tr: ["bayilik"]}, job: {english: ["work placement"]}}
`), 0o600)
	_, err := Load(path, envOf(nil))
	var p Problems
	if !errors.As(err, &p) {
		t.Fatalf("want problems, got %v", err)
	}
	for _, key := range []string{"sites[0].qualify.weights.NOPE", "sites[0].qualify.weights.HONEYPOT",
		"sites[0].qualify.phrases.vendorz", "sites[0].qualify.phrases.job.english"} {
		found := false
		for _, pr := range p {
			found = found || pr.Key == key
		}
		if !found {
			t.Errorf("no problem for %s in %v", key, err)
		}
	}
}
