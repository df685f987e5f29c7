package cli_test

import (
	debugbuildinfo "debug/buildinfo"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestBinaryReportsItsToolchain: a binary built stripped, as
// scripts/release.sh builds it, says in "cleanads version" the toolchain its
// build information names: what govulncheck -mode binary reads to find the
// standard library's vulnerabilities in it. release.sh checks the same of
// the release binaries against the toolchain go.mod names.
func TestBinaryReportsItsToolchain(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "cleanads")
	build := exec.Command("go", "build", "-ldflags", "-s -w", "-o", bin, "github.com/cleanads/cleanads/cmd/cleanads")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	bi, err := debugbuildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if bi.GoVersion != runtime.Version() {
		t.Errorf("go build made a binary with %s, the tests run on %s", bi.GoVersion, runtime.Version())
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("cleanads version: %v", err)
	}
	if want := "built with " + bi.GoVersion + ";"; !strings.Contains(string(out), want) {
		t.Errorf("cleanads version printed %q, want it to contain %q", out, want)
	}
}
