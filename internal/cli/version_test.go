package cli_test

import (
	"database/sql"
	"fmt"
	"io"
	"net/http"
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
	cfg := fmt.Sprintf(opsConfig, dir) + "metrics_listen: \"127.0.0.1:0\"\n"
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
	dsn := storetest.DSN(t)
	storetest.Open(t, dsn)
	if _, err := rawDB(t, dsn).Exec(fmt.Sprintf(`INSERT INTO schema_migrations (version, name, applied_at, binary_version) VALUES (%d, 'future', %d, 'v9.1.0')`,
		store.LatestVersion()+1000, time.Now().UnixMilli())); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := dir + "/cleanads.yaml"
	writeFile(t, cfg, fmt.Sprintf(testConfig, dsn), 0o600)
	var out, errOut syncBuffer
	code := runWithEnv(&out, &errOut, map[string]string{"DENT_KEY": dentKey}, "serve", "--config", cfg)
	if code == 0 || !strings.Contains(errOut.String(), "upgrade cleanads to v9.1.0 or newer") {
		t.Errorf("serve on a newer schema: exit %d, %s", code, errOut.String())
	}
	if strings.Contains(out.String(), "listening") {
		t.Errorf("serve started on a newer schema: %s", out.String())
	}
}
