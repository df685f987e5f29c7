package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// uncommentTLS does to init's file what its comment and the README ask
// of a user: one "# " off each line of the tls: block, from "# tls:" to
// the blank line after it.
func uncommentTLS(t *testing.T, yaml string) string {
	t.Helper()
	lines := strings.Split(yaml, "\n")
	in, found := false, false
	for i, l := range lines {
		switch {
		case l == "# tls:":
			in, found = true, true
		case in && l == "":
			in = false
		}
		if in {
			if !strings.HasPrefix(l, "# ") {
				t.Fatalf("line %d of the tls: block is not a comment: %q", i+1, l)
			}
			lines[i] = strings.TrimPrefix(l, "# ")
		}
	}
	if !found {
		t.Fatalf("init wrote no tls: block:\n%s", yaml)
	}
	return strings.Join(lines, "\n")
}

// setLine replaces the one line that is old (leading spaces aside) with
// new at the same indentation, as a user edits the file.
func setLine(t *testing.T, yaml, old, new string) string {
	t.Helper()
	lines := strings.Split(yaml, "\n")
	n := 0
	for i, l := range lines {
		if trimmed := strings.TrimLeft(l, " "); trimmed == old {
			lines[i] = l[:len(l)-len(trimmed)] + new
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d lines %q in:\n%s", n, old, yaml)
	}
	return strings.Join(lines, "\n")
}

// The file init writes, with its tls: block uncommented as it says,
// passes config check: with Let's Encrypt as it stands, with the staging
// line uncommented too, and with another CA's directory and its root.
func TestInitTLSBlockUncommented(t *testing.T) {
	dir := t.TempDir()
	cfg, _, _ := runInit(t, dir)
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	on := uncommentTLS(t, string(b))
	ca := newTestCA(t)
	caFile := filepath.Join(t.TempDir(), "acme-ca.pem")
	writeTestFile(t, caFile, ca.pem)
	private := setLine(t, setLine(t, on, "# directory: staging", `directory: "https://acme.internal.example/directory"`),
		"# directory_ca_file: /etc/cleanads/acme-ca.pem", "directory_ca_file: "+caFile)
	for _, tc := range []struct{ name, yaml, shows string }{
		{"Let's Encrypt", on, "acme-v02.api.letsencrypt.org"},
		{"staging", setLine(t, on, "# directory: staging", "directory: staging"), "acme-staging-v02.api.letsencrypt.org"},
		{"a private CA", private, "acme.internal.example"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writeFile(t, cfg, tc.yaml, 0o600)
			code, out, errOut := runCLI("", "config", "check", "--config", cfg)
			if code != 0 || !strings.Contains(out, "1 site(s)") {
				t.Fatalf("config check with tls: uncommented: %d %s %s\n%s", code, out, errOut, tc.yaml)
			}
			code, out, errOut = runCLI("", "config", "show", "--config", cfg)
			if code != 0 || !strings.Contains(out, "t.istanbuldis.example") || !strings.Contains(out, tc.shows) {
				t.Errorf("config show: %d %s %s", code, out, errOut)
			}
		})
	}
	// Uncommenting cert_file as well, beside acme, is named as a problem.
	both := setLine(t, setLine(t, on, "# cert_file: /etc/cleanads/t.istanbuldis.example.crt", "cert_file: /etc/cleanads/t.istanbuldis.example.crt"),
		"# key_file: /etc/cleanads/t.istanbuldis.example.key", "key_file: /etc/cleanads/t.istanbuldis.example.key")
	writeFile(t, cfg, both, 0o600)
	if code, _, errOut := runCLI("", "config", "check", "--config", cfg); code == 0 || !strings.Contains(errOut, "not both") {
		t.Errorf("config check with acme and cert_file: %d %s", code, errOut)
	}
}

// The fresh-server path with HTTPS, end to end: init, the tls: block
// uncommented and pointed at Pebble (its directory and CA file, and test
// ports for 443 and 80), the server gets its certificate, serves on it,
// and probe without a URL finds it through the config.
func TestInitThenHTTPSByItself(t *testing.T) {
	ports := freePorts(t, 2)
	httpsPort, httpPort := ports[0], ports[1]
	p := startPebble(t, httpPort, httpsPort, 90*24*time.Hour)
	dir := t.TempDir()
	code, out, errOut := runCLI("", "init", "--yes", "--dir", dir, "--domain", acmeName, "--origin", "https://www.istanbuldis.example",
		"--country", "TR", "--email", "owner@istanbuldis.example", "--site", "dent")
	if code != 0 {
		t.Fatalf("init: %d %s %s", code, out, errOut)
	}
	cfg := filepath.Join(dir, "cleanads.yaml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	y := uncommentTLS(t, string(b))
	y = setLine(t, y, "# directory: staging", "directory: "+p.dir)
	y = setLine(t, y, "# directory_ca_file: /etc/cleanads/acme-ca.pem", "directory_ca_file: "+p.caFile)
	y = setLine(t, y, `# listen_https: ":443"`, fmt.Sprintf(`listen_https: "127.0.0.1:%d"`, httpsPort))
	y = setLine(t, y, `# listen_http: ":80"`, fmt.Sprintf(`listen_http: "127.0.0.1:%d"`, httpPort))
	writeFile(t, cfg, y, 0o600)
	if code, out, errOut := runCLI("", "config", "check", "--config", cfg); code != 0 {
		t.Fatalf("config check: %d %s %s\n%s", code, out, errOut, y)
	}

	base, stdout, stderr, stop := startServe(t, dir, y, nil)
	logs := func() string { return stdout.String() + stderr.String() + "\n--- pebble\n" + p.log.String() }
	if want := fmt.Sprintf("https://%s:%d", acmeName, httpsPort); base != want {
		t.Fatalf("serve says it listens on %s, want %s", base, want)
	}
	roots := p.root(t)
	serial := waitServed(t, fmt.Sprintf("127.0.0.1:%d", httpsPort), roots, logs)
	if p.orders() != 1 || serial == "" {
		t.Fatalf("%d orders, serial %q", p.orders(), serial)
	}
	resp, err := httpsClient(roots).Get(base + "/t.js")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("t.js over https: %v %v\n%s", resp, err, logs())
	}
	resp.Body.Close()
	// The container's health check: probe with the config and no URL.
	if code, out, errOut := runCLI("", "probe", "--config", cfg); code != 0 || !strings.Contains(out, "200") {
		t.Errorf("probe --config: %d %s %s", code, out, errOut)
	}
	if code := stop(); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, logs())
	}
}
