package cli_test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/cli"
)

func writeFile(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
}

// runWithEnv runs a command in-process with the given environment.
func runWithEnv(stdout, stderr *syncBuffer, env map[string]string, args ...string) int {
	return cli.Run(context.Background(), append([]string{"cleanads"}, args...), func(k string) string { return env[k] },
		strings.NewReader(""), stdout, stderr)
}

// initFlags are the answers of a scripted init for dir.
func initFlags(dir string, extra ...string) []string {
	return append([]string{"init", "--yes", "--dir", dir, "--domain", "t.istanbuldis.example",
		"--origin", "https://www.istanbuldis.example", "--country", "tr", "--email", "owner@istanbuldis.example",
		"--listen", "127.0.0.1:0"}, extra...)
}

var passwordLine = regexp.MustCompile(`(?m)^Password: +(\S+)$`)

// runInit runs a scripted init and returns the config path and the
// printed password.
func runInit(t *testing.T, dir string, extra ...string) (cfg, password, out string) {
	t.Helper()
	code, out, errOut := runCLI("", initFlags(dir, extra...)...)
	if code != 0 {
		t.Fatalf("init: exit %d\n%s\n%s", code, out, errOut)
	}
	m := passwordLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("init printed no password:\n%s", out)
	}
	return filepath.Join(dir, "cleanads.yaml"), m[1], out
}

// snapshotDir reads every file in dir: name -> content.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}

func TestInitWritesAWorkingInstall(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cleanads")
	cfg, password, out := runInit(t, dir)

	// The file passes config check.
	if code, checked, errOut := runCLI("", "config", "check", "--config", cfg); code != 0 || !strings.Contains(checked, "1 site(s)") {
		t.Fatalf("config check on init's file: %d %s %s", code, checked, errOut)
	}
	for name, want := range map[string]os.FileMode{"cleanads.yaml": 0o600, "secret.key": 0o600, "cleanads.db": 0o600} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s is mode %v, want %v", name, fi.Mode().Perm(), want)
		}
	}
	// The password is printed once and kept nowhere in clear.
	if n := strings.Count(out, password); n != 1 {
		t.Errorf("the password is printed %d times, want once:\n%s", n, out)
	}
	for name, text := range snapshotDir(t, dir) {
		if strings.Contains(text, password) {
			t.Errorf("%s holds the admin password in clear", name)
		}
	}
	yaml := snapshotDir(t, dir)["cleanads.yaml"]
	for _, want := range []string{`public_url: "https://t.istanbuldis.example"`, `id: "istanbuldis"`, `country: "TR"`,
		`cookie_domain: ".istanbuldis.example"`, `mode: dry_run`, "# tls:", `#     domains: ["t.istanbuldis.example"]`,
		`#     email: "owner@istanbuldis.example"`, "#   # cert_file:", "#   # listen_https:", "#   # listen_http:",
		`secret_key_file: "` + filepath.Join(dir, "secret.key") + `"`,
		"      stages:\n        meeting: {event: Schedule}\n        won: {event: Purchase, currency: TRY}\n"} {
		if !strings.Contains(yaml, want) {
			t.Errorf("cleanads.yaml lacks %s:\n%s", want, yaml)
		}
	}
	// The three next steps.
	for _, want := range []string{"cleanads serve --config " + cfg,
		`<script src="https://t.istanbuldis.example/t.js" data-site="istanbuldis" async></script>`,
		"<form data-cleanads", "cleanads send-test --site istanbuldis --config " + cfg} {
		if !strings.Contains(out, want) {
			t.Errorf("init's next steps lack %s:\n%s", want, out)
		}
	}

	// The server starts on the file, and the password logs in.
	base, _, stderr, _ := startServe(t, t.TempDir(), yaml, nil)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	login := func(pw string) *http.Response {
		resp, err := client.PostForm(base+"/admin/login", url.Values{"email": {"owner@istanbuldis.example"}, "password": {pw}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := login(password); resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) == 0 {
		t.Errorf("logging in with init's password: %s, cookies %v\n%s", resp.Status, resp.Cookies(), stderr.String())
	}
	if resp := login(password + "x"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong password: %s", resp.Status)
	}
}

func TestInitNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	runInit(t, dir)
	before := snapshotDir(t, dir)
	code, out, errOut := runCLI("", initFlags(dir)...)
	if code == 0 || !strings.Contains(errOut, "cleanads.yaml, "+filepath.Join(dir, "secret.key")) ||
		!strings.Contains(errOut, "already exist;") || !strings.Contains(errOut, "wrote nothing") {
		t.Errorf("a second init: exit %d, %s %s", code, out, errOut)
	}
	if passwordLine.MatchString(out) {
		t.Errorf("a refused init printed a password: %s", out)
	}
	after := snapshotDir(t, dir)
	if len(after) != len(before) {
		t.Errorf("files before %d, after %d", len(before), len(after))
	}
	for name, text := range before {
		if after[name] != text {
			t.Errorf("%s changed", name)
		}
	}

	// A folder with only a key file in it: refused, no config written.
	other := t.TempDir()
	writeFile(t, filepath.Join(other, "secret.key"), "0123456789abcdef0123456789abcdef0123456789abcdef\n", 0o600)
	if code, _, errOut := runCLI("", initFlags(other)...); code == 0 || !strings.Contains(errOut, "secret.key already exists") {
		t.Errorf("init over a key file: %d %s", code, errOut)
	}
	if len(snapshotDir(t, other)) != 1 {
		t.Errorf("init wrote beside an existing key file: %v", snapshotDir(t, other))
	}
}

func TestInitScriptedFlags(t *testing.T) {
	t.Run("missing answers", func(t *testing.T) {
		dir := t.TempDir()
		code, _, errOut := runCLI("", "init", "--yes", "--dir", dir, "--country", "TR", "--email", "o@example.com")
		if code == 0 || !strings.Contains(errOut, "--domain, --origin are missing") {
			t.Errorf("init without domain and origin: %d %s", code, errOut)
		}
		if len(snapshotDir(t, dir)) != 0 {
			t.Errorf("init wrote files without its answers: %v", snapshotDir(t, dir))
		}
	})
	t.Run("bad answers, all named", func(t *testing.T) {
		dir := t.TempDir()
		code, _, errOut := runCLI("", "init", "--yes", "--dir", dir, "--domain", "https://t.example.com/x",
			"--origin", "www.example.com", "--country", "ZZ", "--email", "nobody", "--pixel-id", "abc")
		for _, want := range []string{"--domain", "--email", "origin like https://www.example.com", "unknown region", "pixel's digits"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("init with bad answers does not name %q: %s", want, errOut)
			}
		}
		if code == 0 || len(snapshotDir(t, dir)) != 0 {
			t.Errorf("init with bad answers: exit %d, files %v", code, snapshotDir(t, dir))
		}
	})
	t.Run("pixel, token and test code", func(t *testing.T) {
		g := graphtest.New(t)
		dir := t.TempDir()
		cfg, _, _ := runInit(t, dir, "--site", "dent", "--pixel-id", "123456789012345", "--meta-token", graphtest.Token,
			"--test-event-code", "TEST123")
		yaml := snapshotDir(t, dir)["cleanads.yaml"]
		for _, want := range []string{`id: "dent"`, `pixel_id: "123456789012345"`, `test_event_code: "TEST123"`, "mode: test"} {
			if !strings.Contains(yaml, want) {
				t.Errorf("cleanads.yaml lacks %s", want)
			}
		}
		// The third step works as printed.
		var out, errOut syncBuffer
		if code := runWithEnv(&out, &errOut, map[string]string{"CLEANADS_META_GRAPH_URL": g.URL}, "send-test", "--site", "dent", "--config", cfg); code != 0 {
			t.Fatalf("send-test on init's file: %d %s %s", code, out.String(), errOut.String())
		}
		if ev := g.Events(); len(ev) != 1 || ev[0].TestEventCode != "TEST123" || ev[0].PixelID != "123456789012345" {
			t.Errorf("Meta received %+v", ev)
		}
	})
	t.Run("a token without a test code goes live", func(t *testing.T) {
		dir := t.TempDir()
		runInit(t, dir, "--pixel-id", "1", "--meta-token", "EAAB-token")
		if yaml := snapshotDir(t, dir)["cleanads.yaml"]; !strings.Contains(yaml, "mode: live") {
			t.Errorf("cleanads.yaml: %s", yaml)
		}
	})
}

// A step that fails after files were written (the database cannot be
// reached) takes them back: nothing is left half-made.
func TestInitRemovesWhatItWroteOnFailure(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI("", initFlags(dir, "--database", "postgres://cleanads@127.0.0.1:1/cleanads?sslmode=disable&connect_timeout=5")...)
	if code == 0 || passwordLine.MatchString(out) {
		t.Fatalf("init on an unreachable database: exit %d\n%s", code, out)
	}
	if files := snapshotDir(t, dir); len(files) != 0 {
		t.Errorf("init left %v behind: %s", files, errOut)
	}
}

// Questions on standard input (--ask stands for a terminal): a wrong
// answer is asked again, Enter keeps the flag's value.
func TestInitAsks(t *testing.T) {
	dir := t.TempDir()
	answers := strings.Join([]string{"t.clinic.example", "https://www.clinic.example", "XX", "de",
		"", "12345", "", ""}, "\n") + "\n"
	var out, errOut syncBuffer
	code := cli.Run(context.Background(), []string{"cleanads", "init", "--ask", "--dir", dir, "--email", "boss@clinic.example"},
		func(string) string { return "" }, strings.NewReader(answers), &out, &errOut)
	if code != 0 {
		t.Fatalf("init --ask: %d %s %s", code, out.String(), errOut.String())
	}
	if !strings.Contains(errOut.String(), "unknown region") || !strings.Contains(errOut.String(), "[boss@clinic.example]") {
		t.Errorf("the questions: %s", errOut.String())
	}
	yaml := snapshotDir(t, dir)["cleanads.yaml"]
	for _, want := range []string{`country: "DE"`, `origins: ["https://www.clinic.example"]`, `pixel_id: "12345"`, "mode: dry_run", `id: "clinic"`} {
		if !strings.Contains(yaml, want) {
			t.Errorf("cleanads.yaml lacks %s:\n%s", want, yaml)
		}
	}
	// Input that ends before the answers: nothing written.
	empty := t.TempDir()
	code = cli.Run(context.Background(), []string{"cleanads", "init", "--ask", "--dir", empty},
		func(string) string { return "" }, strings.NewReader("t.example.com\n"), &out, &errOut)
	if code == 0 || len(snapshotDir(t, empty)) != 0 {
		t.Errorf("init on cut-off input: exit %d, files %v", code, snapshotDir(t, empty))
	}
}
