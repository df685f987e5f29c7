package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/auth"
	"github.com/cleanads/cleanads/internal/cli"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// syncBuffer is a bytes.Buffer safe for the server goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testConfig is the config of most serve tests: site dent, its key from
// DENT_KEY, and a call token; a test may add lines for the site after it.
func testConfig(dsn string) string {
	return testkit.Config{Database: dsn, APIKey: "${DENT_KEY}", Site: `
    call_token: "dent-calls-0123456789abcdef"
`}.YAML()
}

const dentKey = "dent-key-0123456789abcdef"

// server runs "cleanads serve" in-process on the database at dsn (the
// engine under test, from storetest.DSN) and returns its base URL and a
// stop function that returns the exit code.
func server(t *testing.T, dsn string) (base string, stop func() int, stderr *syncBuffer) {
	t.Helper()
	return serveConfig(t, testConfig(dsn))
}

// serveConfig runs "cleanads serve" in-process with the given config file
// text, like server, with DENT_KEY set.
func serveConfig(t *testing.T, config string) (base string, stop func() int, stderr *syncBuffer) {
	t.Helper()
	base, _, stderr, stop = startServe(t, t.TempDir(), config, map[string]string{"DENT_KEY": dentKey})
	return base, stop, stderr
}

func TestServePostStop(t *testing.T) {
	dsn := storetest.MigratedDSN(t)
	base, stop, _ := server(t, dsn)
	req, _ := http.NewRequest("POST", base+"/v1/leads", strings.NewReader(`{"site":"dent","email":"a@example.com","phone":"05324128719"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+dentKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		ID string `json:"id"`
	}
	json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if resp.StatusCode != 202 || out.ID == "" {
		t.Fatalf("post: %d", resp.StatusCode)
	}
	if code := stop(); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	// The lead outlived the server, and the config's site was provisioned.
	db, err := store.Open(context.Background(), dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.LeadByID(context.Background(), "ld_x"); err == nil {
		t.Fatal("found a lead that does not exist")
	}
	if l, err := db.LeadByID(context.Background(), modelLeadID(out.ID)); err != nil || l.PhoneKey != "905324128719" {
		t.Fatalf("lead after stop: %+v %v", l, err)
	}
	if s, err := db.SiteByID(context.Background(), "dent"); err != nil || !s.Pinned || s.APIKeyHash == "" || s.APIKeyHash == dentKey ||
		s.Settings.CallTokenHash != hashKey("dent-calls-0123456789abcdef") {
		t.Fatalf("provisioned site: %+v %v", s, err)
	}
}

// TestShutdownFinishesInFlight starts a lead whose body is still arriving,
// stops the server, and expects the lead to be answered and stored.
func TestShutdownFinishesInFlight(t *testing.T) {
	base, stop, _ := server(t, storetest.MigratedDSN(t))
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", base+"/v1/leads", pr)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+dentKey)
	type result struct {
		code int
		err  error
	}
	res := make(chan result, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			res <- result{err: err}
			return
		}
		resp.Body.Close()
		res <- result{code: resp.StatusCode}
	}()
	io.WriteString(pw, `{"site":"dent",`)
	time.Sleep(200 * time.Millisecond) // the request is in the handler now
	stopped := make(chan int, 1)
	go func() { stopped <- stop() }()
	time.Sleep(200 * time.Millisecond) // shutdown has begun
	select {
	case <-stopped:
		t.Fatal("serve stopped before the in-flight request finished")
	default:
	}
	io.WriteString(pw, `"email":"late@example.com"}`)
	pw.Close()
	r := <-res
	if r.err != nil || r.code != 202 {
		t.Fatalf("in-flight request: %d %v", r.code, r.err)
	}
	if code := <-stopped; code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	// New connections are refused after shutdown.
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("server still answers after shutdown")
	}
}

func TestServeRefusesBadConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(cfg, []byte("listen: nope\nsites: [{id: 'A B'}]\n"), 0o600)
	var out, errOut bytes.Buffer
	code := cli.Run(context.Background(), []string{"cleanads", "serve", "--config", cfg}, func(string) string { return "" }, nil, &out, &errOut)
	if code != 2 || !strings.Contains(errOut.String(), "listen") || !strings.Contains(errOut.String(), "sites[0].id") {
		t.Errorf("exit %d, stderr %s", code, errOut.String())
	}
}

func TestMigrateAndConfigCommands(t *testing.T) {
	dir, dsn := t.TempDir(), storetest.DSN(t)
	getenv := func(k string) string {
		return map[string]string{"CLEANADS_DATABASE": dsn, "DENT_KEY": dentKey}[k]
	}
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := cli.Run(context.Background(), append([]string{"cleanads"}, args...), getenv, nil, &out, &errOut)
		return code, out.String(), errOut.String()
	}
	if code, out, errOut := run("migrate"); code != 0 || !strings.Contains(out, "applied migrations") {
		t.Errorf("migrate: %d %s %s", code, out, errOut)
	}
	if code, out, _ := run("migrate"); code != 0 || !strings.Contains(out, "up to date") {
		t.Errorf("migrate again: %d %s", code, out)
	}
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte(testConfig(dsn)), 0o600)
	if code, out, errOut := run("config", "check", "--config", cfg); code != 0 || !strings.Contains(out, "1 site") {
		t.Errorf("config check: %d %s %s", code, out, errOut)
	}
	if code, out, _ := run("config", "show", "--config", cfg); code != 0 || strings.Contains(out, dentKey) || !strings.Contains(out, "********") {
		t.Errorf("config show leaks or hides: %d %s", code, out)
	}
	if code, _, errOut := run("nonsense"); code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Errorf("unknown command: %d %s", code, errOut)
	}
	if code, out, _ := run("help"); code != 0 || !strings.Contains(out, "serve") {
		t.Errorf("help: %d %s", code, out)
	}
}

func TestScoreCommand(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	// A SQLite path that must stay absent: score works without a database.
	os.WriteFile(cfg, []byte(testConfig("sqlite:"+dir+"/cleanads.db")), 0o600)
	getenv := func(k string) string { return map[string]string{"DENT_KEY": dentKey}[k] }
	var out, errOut bytes.Buffer
	lead := `{"name":"asdf","email":"test@mailinator.com","phone":"555 555 55 55","message":"test","fill_ms":400}`
	code := cli.Run(context.Background(), []string{"cleanads", "score", "--config", cfg, "--site", "dent"}, getenv, strings.NewReader(lead), &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var d struct {
		Verdict string `json:"verdict"`
		Score   int    `json:"score"`
		Reasons []struct {
			Code string `json:"code"`
		} `json:"reasons"`
	}
	if err := json.Unmarshal(out.Bytes(), &d); err != nil || d.Verdict != "junk" || d.Score != 100 || len(d.Reasons) < 3 {
		t.Errorf("score output: %s (%v)", out.String(), err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cleanads.db")); err == nil {
		t.Error("score created a database")
	}
	code = cli.Run(context.Background(), []string{"cleanads", "score", "--config", cfg, "--site", "nope"}, getenv, strings.NewReader(lead), &out, &errOut)
	if code != 1 {
		t.Errorf("unknown site: exit %d", code)
	}

	// A fast fill as our tracker measures it is final; as the site's server
	// posts it (--from-server), its points, saying whose figure it was.
	fast := `{"name":"Ayşe Yılmaz","phone":"0532 418 27 63","message":"İmplant için muayene randevusu almak istiyorum, hafta içi uygunum.","fill_ms":800}`
	for _, tt := range []struct {
		args   []string
		source string
		final  bool
	}{{nil, "tracker", true}, {[]string{"--from-server"}, "backend", false}} {
		out.Reset()
		args := append([]string{"cleanads", "score", "--config", cfg, "--site", "dent"}, tt.args...)
		if code := cli.Run(context.Background(), args, getenv, strings.NewReader(fast), &out, &errOut); code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.args, code, errOut.String())
		}
		var d struct {
			Verdict string `json:"verdict"`
			Reasons []struct {
				Code     string         `json:"code"`
				Final    bool           `json:"final"`
				Evidence map[string]any `json:"evidence"`
			} `json:"reasons"`
			Model struct {
				Class     string `json:"class"`
				Confident bool   `json:"confident"`
				Reason    *struct {
					Code string `json:"code"`
				} `json:"reason"`
			} `json:"model"`
		}
		// The fill time alone makes it junk; the built-in model's reading
		// of the message (a request, 0 points) is shown beside it.
		if err := json.Unmarshal(out.Bytes(), &d); err != nil || len(d.Reasons) < 1 || d.Reasons[0].Code != "FILL_TOO_FAST" ||
			d.Reasons[0].Evidence["source"] != tt.source || d.Reasons[0].Final != tt.final ||
			len(d.Reasons) > 1 && (len(d.Reasons) != 2 || d.Reasons[1].Code != "MODEL_REQUEST") {
			t.Errorf("%v: %s (%v)", tt.args, out.String(), err)
		}
		if d.Verdict == "clean" || d.Model.Class != "request" {
			t.Errorf("%v: the model's part: %s", tt.args, out.String())
		}
	}
}

func TestUserCommands(t *testing.T) {
	dir := t.TempDir()
	getenv := func(k string) string {
		return map[string]string{"CLEANADS_DATABASE": "sqlite:" + dir + "/u.db"}[k]
	}
	run := func(stdin string, args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := cli.Run(context.Background(), append([]string{"cleanads"}, args...), getenv, strings.NewReader(stdin), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	if code, out, errOut := run("correct horse battery\n", "user", "add", "--email", "Owner@Clinic.example"); code != 0 || !strings.Contains(out, "owner@clinic.example") {
		t.Fatalf("user add: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := run("another password\n", "user", "add", "--email", "owner@clinic.example"); code != 1 || !strings.Contains(errOut, "user passwd") {
		t.Errorf("user add twice: %d %s", code, errOut)
	}
	if code, _, errOut := run("short\n", "user", "add", "--email", "second@clinic.example"); code != 1 || !strings.Contains(errOut, "at least 8") {
		t.Errorf("short password: %d %s", code, errOut)
	}
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("from a file 123\n"), 0o600)
	if code, out, errOut := run("", "user", "passwd", "--email", "owner@clinic.example", "--password-file", pw); code != 0 || !strings.Contains(out, "password changed") {
		t.Errorf("user passwd: %d %s %s", code, out, errOut)
	}
	if code, _, _ := run("x\n", "user", "add"); code != 2 {
		t.Errorf("user add without --email: %d", code)
	}
	// A site to limit a member to (the schema is there since user add).
	if sdb, err := store.Open(context.Background(), "sqlite:"+dir+"/u.db", store.Options{}); err != nil {
		t.Fatal(err)
	} else {
		testkit.AddSite(t, sdb, testkit.Site(), time.Now())
		sdb.Close()
	}
	if code, out, errOut := run("member password\n", "user", "add", "--email", "member@clinic.example", "--role", "member", "--sites", "dent"); code != 0 {
		t.Errorf("user add --role member --sites dent: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := run("member password\n", "user", "add", "--email", "nosite@clinic.example", "--sites", "nope"); code != 1 || !strings.Contains(errOut, `no site "nope"`) {
		t.Errorf("user add --sites nope: %d %s", code, errOut)
	}
	if code, out, _ := run("", "user", "list"); code != 0 || !strings.Contains(out, "owner@clinic.example\tadmin\tall sites") ||
		!strings.Contains(out, "member@clinic.example\tmember\tsites: dent") || strings.Contains(out, "second@") || strings.Contains(out, "nosite@") {
		t.Errorf("user list: %d %s", code, out)
	}
	// The password set from the file is the one that logs in.
	db, err := store.Open(context.Background(), "sqlite:"+dir+"/u.db", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a := auth.New(auth.Options{Store: db})
	if _, _, err := a.Login(context.Background(), "owner@clinic.example", "from a file 123", "127.0.0.1"); err != nil {
		t.Errorf("login with the new password: %v", err)
	}
}

// TestServeBootstrapsAdmin: admin.email and admin.password make the first
// user at start, and only when there is none.
func TestServeBootstrapsAdmin(t *testing.T) {
	dsn := storetest.MigratedDSN(t)
	_, stop, errOut := serveConfig(t, testConfig(dsn)+`admin: {email: boss@clinic.example, password: "first-start-pw"}`+"\n")
	if code := stop(); code != 0 {
		t.Fatalf("serve: %d %s", code, errOut.String())
	}
	db, err := store.Open(context.Background(), dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, _, err := auth.New(auth.Options{Store: db}).Login(context.Background(), "boss@clinic.example", "first-start-pw", "::1"); err != nil {
		t.Errorf("bootstrapped admin cannot log in: %v", err)
	}
}
