package cli_test

import (
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/buildinfo"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

// rawDB opens dsn with database/sql, for statements no store method makes.
func rawDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	driver, name := "pgx", dsn
	if p, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		driver, name = "sqlite", "file:"+p
	}
	db, err := sql.Open(driver, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestVersionCommand(t *testing.T) {
	code, out, errOut := runCLI("", "version")
	if code != 0 {
		t.Fatalf("version: %d %s", code, errOut)
	}
	for _, want := range []string{"cleanads ", runtime.Version(), fmt.Sprintf("database schema %d", store.LatestVersion())} {
		if !strings.Contains(out, want) {
			t.Errorf("version printed %q, want it to contain %q", out, want)
		}
	}
}

// serve says what it is in its start log and in cleanads_build_info, and
// records its version with the migrations it applies.
func TestServeShowsItsVersion(t *testing.T) {
	dir := t.TempDir()
	cfg := opsConfig(dir) + "metrics_listen: \"127.0.0.1:0\"\n"
	_, stdout, stderr, stop := startServe(t, dir, cfg, nil)
	short := buildinfo.Read().Short()
	if !strings.Contains(stderr.String(), `msg="starting cleanads" version=`+short) {
		t.Errorf("the start log does not give the version %s: %s", short, stderr.String())
	}
	var maddr string
	for _, line := range strings.Split(stdout.String(), "\n") {
		if a, ok := strings.CutPrefix(line, "metrics on "); ok {
			maddr = a
		}
	}
	resp, err := http.Get(maddr)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := fmt.Sprintf(`cleanads_build_info{goversion=%q,revision=%q,version=%q} 1`, runtime.Version(), buildinfo.Read().Revision, short); !strings.Contains(string(body), want) {
		t.Errorf("metrics lack %s", want)
	}
	stop()
	var got string
	err = rawDB(t, "sqlite:"+dir+"/cleanads.db").QueryRow(fmt.Sprintf(`SELECT binary_version FROM schema_migrations WHERE version = %d`, store.LatestVersion())).Scan(&got)
	if err != nil || got != short {
		t.Errorf("the newest migration was recorded as applied by %q (%v), want %q", got, err, short)
	}
}

// An older binary meets a database a newer one migrated: serve refuses to
// start and names the version to run.
func TestServeRefusesANewerSchema(t *testing.T) {
	dsn := storetest.MigratedDSN(t)
	storetest.Open(t, dsn)
	if _, err := rawDB(t, dsn).Exec(fmt.Sprintf(`INSERT INTO schema_migrations (version, name, applied_at, binary_version) VALUES (%d, 'future', %d, 'v9.1.0')`,
		store.LatestVersion()+1000, time.Now().UnixMilli())); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := dir + "/cleanads.yaml"
	writeFile(t, cfg, testConfig(dsn), 0o600)
	var out, errOut syncBuffer
	code := runWithEnv(&out, &errOut, map[string]string{"DENT_KEY": dentKey}, "serve", "--config", cfg)
	if code == 0 || !strings.Contains(errOut.String(), "upgrade cleanads to v9.1.0 or newer") {
		t.Errorf("serve on a newer schema: exit %d, %s", code, errOut.String())
	}
	if strings.Contains(out.String(), "listening") {
		t.Errorf("serve started on a newer schema: %s", out.String())
	}
}

// probe without a URL asks the server its config describes for /readyz:
// on listen behind a proxy, on the plain-HTTP side with HTTPS by itself,
// over TLS when it serves no plain HTTP; and fails when nothing answers.
func TestProbeByConfig(t *testing.T) {
	ca := newTestCA(t)
	certPEM, keyPEM := ca.leaf(t, 0x70, acmeName)
	cases := []struct {
		name  string
		block func(dir string, ports []int) string
	}{
		{"behind a proxy", func(dir string, ports []int) string {
			return fmt.Sprintf("listen: \"0.0.0.0:%d\"\ndatabase: \"sqlite:%s/cleanads.db\"\n", ports[0], dir)
		}},
		{"https with plain http", func(dir string, ports []int) string {
			return tlsFilesConfig(t, dir, certPEM, keyPEM, fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf(`"127.0.0.1:%d"`, ports[1]))
		}},
		{"https alone", func(dir string, ports []int) string {
			return tlsFilesConfig(t, dir, certPEM, keyPEM, fmt.Sprintf("127.0.0.1:%d", ports[0]), `""`)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cfgText := c.block(dir, freePorts(t, 2))
			_, _, _, stop := startServe(t, dir, cfgText, nil)
			cfg := filepath.Join(dir, "cleanads.yaml")
			if code, out, errOut := runCLI("", "probe", "--config", cfg); code != 0 || !strings.Contains(out, "200") {
				t.Errorf("probe of a running server: %d %q %q", code, out, errOut)
			}
			stop()
			if code, _, _ := runCLI("", "probe", "--timeout", "2s", "--config", cfg); code == 0 {
				t.Error("probe succeeded with the server stopped")
			}
		})
	}
}

// tlsFilesConfig is a config serving HTTPS with a certificate file on
// https, plain HTTP on plain ("" for none).
func tlsFilesConfig(t *testing.T, dir string, certPEM, keyPEM []byte, https, plain string) string {
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeTestFile(t, certFile, certPEM)
	writeTestFile(t, keyFile, keyPEM)
	return tlsServeConfig("sqlite:"+dir+"/cleanads.db",
		fmt.Sprintf("  cert_file: %s\n  key_file: %s\n  listen_https: %q\n  listen_http: %s\n", certFile, keyFile, https, plain))
}
