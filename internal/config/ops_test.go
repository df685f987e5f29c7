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

func TestOpsDefaults(t *testing.T) {
	c, err := Load("", envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if time.Duration(c.HTTP.ReadHeaderTimeout) != 5*time.Second || c.HTTP.MaxHeaderBytes != 32<<10 {
		t.Errorf("http defaults: %+v", c.HTTP)
	}
	if c.Limits.PublicPerIP != (model.Rate{N: 300, Per: time.Minute}) || c.Limits.APIPerKey.Off() {
		t.Errorf("limits defaults: %+v", c.Limits)
	}
	if c.Retention.LeadDays != 365 || c.Retention.ClickDays != 90 || c.MetricsListen != "" || c.MetricsToken != "" {
		t.Errorf("defaults: %+v %q", c.Retention, c.MetricsListen)
	}
}

func TestOpsKeys(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "metrics")
	os.WriteFile(tokenFile, []byte("metrics-token-0123456789\n"), 0o600)
	path := filepath.Join(dir, "c.yaml")
	os.WriteFile(path, []byte(`
http: {read_header_timeout: 2s, read_timeout: 10s, max_header_bytes: 16384}
limits: {public_per_ip: "60/m", api_per_key: off}
metrics_listen: "127.0.0.1:9090"
metrics_token_file: "`+tokenFile+`"
retention: {lead_days: 0, visit_days: 30}
secret_key: "0123456789abcdef0123456789abcdef"
sites:
  - id: dent
    country: TR
    limits: {public_per_ip: "10/s"}
`), 0o600)
	c, err := Load(path, envOf(map[string]string{"CLEANADS_LIMITS_API_PER_KEY": "100/h", "CLEANADS_SITES_DENT_LIMITS_API_PER_KEY": "5/s"}))
	if err != nil {
		t.Fatal(err)
	}
	if time.Duration(c.HTTP.ReadHeaderTimeout) != 2*time.Second || time.Duration(c.HTTP.WriteTimeout) != 30*time.Second ||
		c.HTTP.MaxHeaderBytes != 16384 {
		t.Errorf("http: %+v", c.HTTP)
	}
	if c.Limits.PublicPerIP.String() != "60/m" || c.Limits.APIPerKey.String() != "100/h" {
		t.Errorf("limits: %v %v", c.Limits.PublicPerIP, c.Limits.APIPerKey)
	}
	sl := c.Sites[0].Limits
	if sl.PublicPerIP == nil || sl.PublicPerIP.String() != "10/s" || sl.APIPerKey == nil || sl.APIPerKey.String() != "5/s" {
		t.Errorf("site limits: %+v", sl)
	}
	if c.MetricsToken != "metrics-token-0123456789" || c.Retention.LeadDays != 0 || c.Retention.VisitDays != 30 {
		t.Errorf("metrics/retention: %q %+v", c.MetricsToken, c.Retention)
	}
	dump := c.Dump()
	if strings.Contains(dump, "metrics-token-0123456789") || !strings.Contains(dump, "public_per_ip: 60/m") {
		t.Errorf("dump:\n%s", dump)
	}
}

func TestOpsProblems(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(path, []byte(`
listen: "127.0.0.1:8080"
http: {read_header_timeout: 20s, read_timeout: 10s, idle_timeout: 0s, max_header_bytes: 10}
metrics_listen: "127.0.0.1:8080"
metrics_token: "short"
retention: {lead_days: -1, visit_days: -2, receipt_days: 3, event_days: 7, click_days: 7}
secret_key: "too-short"
`), 0o600)
	_, err := Load(path, envOf(nil))
	var p Problems
	if !errors.As(err, &p) {
		t.Fatalf("want Problems, got %v", err)
	}
	got := map[string]bool{}
	for _, e := range p {
		got[e.Key] = true
	}
	for _, k := range []string{"http.read_header_timeout", "http.idle_timeout", "http.max_header_bytes", "metrics_listen",
		"metrics_token", "retention.lead_days", "retention.visit_days", "retention.receipt_days", "retention.event_days", "retention.click_days", "secret_key"} {
		if !got[k] {
			t.Errorf("no problem for %s in:\n%v", k, err)
		}
	}
	if _, err := Load("", envOf(map[string]string{"CLEANADS_LIMITS_PUBLIC_PER_IP": "lots"})); err == nil ||
		!strings.Contains(err.Error(), "CLEANADS_LIMITS_PUBLIC_PER_IP") {
		t.Errorf("a bad rate in the environment: %v", err)
	}
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]string{"60/m": "60/m", " 5 / s ": "5/s", "off": "off", "0": "off", "1000/h": "1000/h"} {
		r, err := model.ParseRate(in)
		if err != nil || r.String() != want {
			t.Errorf("%q: %v %v", in, r, err)
		}
	}
	for _, bad := range []string{"60", "60/d", "-1/m", "x/m", "60/", "/m"} {
		if _, err := model.ParseRate(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
