package cli_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// opsConfig is site dent on a SQLite database in dir, with no limit per
// API key; a test may add lines for the site after it.
func opsConfig(dir string) string {
	return testkit.Config{Database: "sqlite:" + dir + "/cleanads.db", Top: "limits: {api_per_key: off}"}.YAML()
}

// postLead posts one lead with the site's key and returns the status.
func postLead(base, body string) (int, error) {
	req, _ := http.NewRequest("POST", base+"/v1/leads", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer dent-key-0123456789abcdef")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func TestBackupWhileWriting(t *testing.T) {
	dir := t.TempDir()
	cfgText := opsConfig(dir)
	base, _, _, stop := startServe(t, dir, cfgText, nil)
	cfg := filepath.Join(dir, "cleanads.yaml")

	// Writers keep posting leads while the copy is made.
	var accepted atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				code, err := postLead(base, fmt.Sprintf(`{"site":"dent","email":"w%d-%d@example.com","message":"backup test"}`, w, i))
				if err == nil && code == 202 {
					accepted.Add(1)
				}
			}
		}(w)
	}
	// Some leads are in before the copy starts.
	for accepted.Load() < 20 {
		code, err := postLead(base, `{"site":"dent","email":"first@example.com","event_id":"first-`+fmt.Sprint(accepted.Load())+`"}`)
		if err != nil || code != 202 {
			t.Fatalf("lead: %d %v", code, err)
		}
		accepted.Add(1)
	}
	before := accepted.Load()
	out := filepath.Join(dir, "copy.db")
	code, stdout, stderr := runCLI("", "backup", "--config", cfg, out)
	close(done)
	wg.Wait()
	if code != 0 || !strings.Contains(stdout, "backed up") || !strings.Contains(stdout, "secret.key") {
		t.Fatalf("backup: %d %s %s", code, stdout, stderr)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("copy mode: %v %v", fi, err)
	}
	stop()

	// The copy opens as a database of its own, at this binary's schema,
	// with every lead accepted before the copy began.
	ctx := context.Background()
	cp, err := store.Open(ctx, "sqlite:"+out, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	if err := cp.CheckSchema(ctx); err != nil {
		t.Fatal(err)
	}
	n, err := cp.LeadCount(ctx, "dent")
	if err != nil || int64(n) < before || int64(n) > accepted.Load() {
		t.Errorf("copy has %d leads; %d were accepted before, %d in all (%v)", n, before, accepted.Load(), err)
	}
	// An existing file is never overwritten; PostgreSQL is pointed to pg_dump.
	if code, _, stderr := runCLI("", "backup", "--config", cfg, out); code != 1 || !strings.Contains(stderr, "exists") {
		t.Errorf("backup over a file: %d %s", code, stderr)
	}
	if code, _, _ := runCLI("", "backup", "--config", cfg); code != 2 {
		t.Errorf("backup without a file: %d", code)
	}
	pg := filepath.Join(dir, "pg.yaml")
	os.WriteFile(pg, []byte(`database: "postgres://cleanads@127.0.0.1/cleanads"`), 0o600)
	if code, _, stderr := runCLI("", "backup", "--config", pg, filepath.Join(dir, "pg.db")); code != 1 || !strings.Contains(stderr, "pg_dump") {
		t.Errorf("backup on PostgreSQL: %d %s", code, stderr)
	}
}

func TestForgetCommand(t *testing.T) {
	dir := t.TempDir()
	base, _, _, stop := startServe(t, dir, opsConfig(dir), nil)
	cfg := filepath.Join(dir, "cleanads.yaml")
	for _, body := range []string{
		`{"site":"dent","email":"Ayse.Yilmaz@Example.com","phone":"0532 412 87 19","name":"Ayşe Yılmaz","message":"Implant randevusu"}`,
		`{"site":"dent","phone":"+905324128719","message":"Tekrar ben"}`,
		`{"site":"dent","email":"mehmet@example.com","phone":"0533 218 44 90"}`,
	} {
		if code, err := postLead(base, body); err != nil || code != 202 {
			t.Fatalf("lead: %d %v", code, err)
		}
	}
	stop()
	if code, _, stderr := runCLI("", "forget", "--config", cfg); code != 2 || !strings.Contains(stderr, "exactly one") {
		t.Errorf("forget nobody: %d %s", code, stderr)
	}
	if code, _, stderr := runCLI("", "forget", "--config", cfg, "--phone", "1", "--whatsapp-user", "TR.1"); code != 2 || !strings.Contains(stderr, "--whatsapp-user") {
		t.Errorf("forget two ways: %d %s", code, stderr)
	}
	if code, stdout, _ := runCLI("", "forget", "--config", cfg, "--whatsapp-user", "TR.1502576394655843"); code != 0 || !strings.Contains(stdout, "No lead of this person") {
		t.Errorf("forget a WhatsApp user with no lead: %d %s", code, stdout)
	}
	if code, _, stderr := runCLI("", "forget", "--config", cfg, "--phone", "1", "--site", "nope"); code != 1 || !strings.Contains(stderr, "not found") {
		t.Errorf("unknown site: %d %s", code, stderr)
	}
	code, stdout, stderr := runCLI("", "forget", "--config", cfg, "--phone", "0 (532) 412-87-19")
	if code != 0 || !strings.Contains(stdout, `"leads": 2`) || !strings.Contains(stdout, "hashed match keys") {
		t.Fatalf("forget: %d %s %s", code, stdout, stderr)
	}
	code, stdout, _ = runCLI("", "forget", "--config", cfg, "--email", "ayse.yilmaz@example.com")
	if code != 0 || !strings.Contains(stdout, `"leads": 0`) {
		t.Errorf("second forget: %d %s", code, stdout)
	}
	// The leads stay for statistics (their content is checked in app's
	// tests); the other person is still there to be found.
	db, err := store.Open(context.Background(), "sqlite:"+filepath.Join(dir, "cleanads.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n, _ := db.LeadCount(context.Background(), "dent"); n != 3 {
		t.Errorf("leads kept for statistics: %d", n)
	}
	if code, stdout, _ := runCLI("", "forget", "--config", cfg, "--email", "mehmet@example.com"); code != 0 || !strings.Contains(stdout, `"leads": 1`) {
		t.Errorf("the other person: %s", stdout)
	}
}

func TestMetricsNeverOpenByDefault(t *testing.T) {
	dir := t.TempDir()
	base, _, _, _ := startServe(t, dir, opsConfig(dir), nil)
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("/metrics without metrics_listen or metrics_token: %d", resp.StatusCode)
	}
}

func TestMetricsOnTheirOwnAddress(t *testing.T) {
	dir := t.TempDir()
	cfg := opsConfig(dir) + "metrics_listen: \"127.0.0.1:0\"\n"
	base, stdout, _, _ := startServe(t, dir, cfg, nil)
	var maddr string
	for _, line := range strings.Split(stdout.String(), "\n") {
		if a, ok := strings.CutPrefix(line, "metrics on "); ok {
			maddr = a
		}
	}
	if maddr == "" {
		t.Fatalf("no metrics address printed: %s", stdout.String())
	}
	get := func(u string) (int, string) {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	postLead(base, `{"site":"dent","email":"m@example.com"}`)
	if code, body := get(maddr); code != 200 || !strings.Contains(body, `cleanads_http_requests_total{route="POST /v1/leads",status="202"} 1`) {
		t.Errorf("metrics address: %d %s", code, body)
	}
	if code, _ := get(base + "/metrics"); code != 404 {
		t.Errorf("the main address serves metrics too: %d", code)
	}
}

// TestTokensNeedTheirKey: a token sealed with the key file does not open
// with another secret_key, and the server says so instead of sending
// garbage to Meta.
func TestTokensNeedTheirKey(t *testing.T) {
	dir := t.TempDir()
	cfgText := opsConfig(dir) + "    meta: {pixel_id: \"111\", access_token: \"EAAG-secret-token-123\", mode: dry_run}\n"
	cfg := filepath.Join(dir, "cleanads.yaml")
	os.WriteFile(cfg, []byte(cfgText), 0o600)
	if code, out, errOut := runCLI("", "migrate", "--config", cfg); code != 0 {
		t.Fatalf("migrate: %d %s %s", code, out, errOut)
	}
	_, _, _, stop := startServe(t, dir, cfgText, nil)
	stop()
	os.WriteFile(cfg, []byte(cfgText+"secret_key: \"another-secret-key-0123456789abcdef\"\n"), 0o600)
	if code, _, errOut := runCLI("", "migrate", "--config", cfg); code != 1 || !strings.Contains(errOut, "[dent]") {
		t.Errorf("another key: %d %s", code, errOut)
	}
}
