package cli_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/config"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

// install is a fresh install made by init and running: the Meta stand-in,
// the server's address, its config and the environment both share.
type install struct {
	graph *graphtest.Server
	base  string
	cfg   string
	env   map[string]string
}

// newInstall runs init (with a pixel and the stand-in's token) and serve
// on its file, on database dsn ("" for the engine under test: init's
// SQLite file, or a fresh migrated PostgreSQL database).
func newInstall(t *testing.T, dsn string) *install {
	t.Helper()
	g := graphtest.New(t)
	dir := t.TempDir()
	extra := []string{"--site", "dent", "--pixel-id", "123456789012345", "--meta-token", graphtest.Token}
	if dsn == "" && storetest.Engine() == store.Postgres {
		dsn = storetest.MigratedDSN(t)
	}
	if dsn != "" {
		extra = append(extra, "--database", dsn)
	}
	cfg, _, _ := runInit(t, dir, extra...)
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CLEANADS_META_GRAPH_URL": g.URL}
	base, _, _, _ := startServe(t, t.TempDir(), string(b), env)
	return &install{graph: g, base: base, cfg: cfg, env: env}
}

// doctor runs cleanads doctor on the install with extra environment and
// flags, and returns the exit code, the output and each check's verdict
// ("ok" or "problem") by its name.
func (in *install) doctor(t *testing.T, env map[string]string, flags ...string) (int, string, map[string]string) {
	t.Helper()
	all := map[string]string{}
	for k, v := range in.env {
		all[k] = v
	}
	for k, v := range env {
		all[k] = v
	}
	var out, errOut syncBuffer
	args := append([]string{"doctor", "--config", in.cfg}, flags...)
	if !strings.Contains(strings.Join(flags, " "), "--url") {
		args = append(args, "--url", in.base)
	}
	code := runWithEnv(&out, &errOut, all, args...)
	return code, out.String() + errOut.String(), verdicts(out.String())
}

// verdicts reads doctor's output: each check's verdict ("ok" or
// "problem") by its name.
func verdicts(out string) map[string]string {
	got := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		status, rest, _ := strings.Cut(line, " ")
		if name, _, found := strings.Cut(strings.TrimSpace(rest), ":"); found && (status == "ok" || status == "problem") {
			got[name] = status
		}
	}
	return got
}

// want checks the verdicts: the named checks are problems, every other
// one is ok.
func want(t *testing.T, out string, got map[string]string, problems ...string) {
	t.Helper()
	bad := map[string]bool{}
	for _, p := range problems {
		bad[p] = true
		if got[p] != "problem" {
			t.Errorf("%s: %q, want a problem\n%s", p, got[p], out)
		}
	}
	for name, v := range got {
		if !bad[name] && v != "ok" {
			t.Errorf("%s: %s, want ok\n%s", name, v, out)
		}
	}
}

func TestDoctorOnAHealthyInstall(t *testing.T) {
	in := newInstall(t, "")
	code, out, got := in.doctor(t, nil)
	if code != 0 {
		t.Fatalf("doctor on a healthy install: exit %d\n%s", code, out)
	}
	for _, name := range []string{"config", "database", "server", "tracker (site dent)", "meta (site dent)", "leads (site dent)"} {
		if got[name] != "ok" {
			t.Errorf("%s: %q\n%s", name, got[name], out)
		}
	}
	if !strings.Contains(out, graphtest.PixelName("123456789012345")) {
		t.Errorf("the Meta check does not name the pixel:\n%s", out)
	}
	if n := len(in.graph.Events()); n != 0 {
		t.Errorf("doctor sent %d events to Meta", n)
	}
}

func TestDoctorFindsTheBrokenPart(t *testing.T) {
	in := newInstall(t, "")
	t.Run("an origin the server does not allow", func(t *testing.T) {
		// The file was edited and the server not restarted.
		code, out, got := in.doctor(t, map[string]string{"CLEANADS_SITES_DENT_ORIGINS": "https://www.istanbuldis.example,https://shop.istanbuldis.example"})
		want(t, out, got, "tracker (site dent)")
		if code == 0 || !strings.Contains(out, "https://shop.istanbuldis.example") || !strings.Contains(out, "restart cleanads") {
			t.Errorf("exit %d\n%s", code, out)
		}
	})
	t.Run("a proxy that strips CORS", func(t *testing.T) {
		target, _ := url.Parse(in.base)
		rp := httputil.NewSingleHostReverseProxy(target)
		rp.ModifyResponse = func(r *http.Response) error {
			r.Header.Del("Access-Control-Allow-Origin")
			return nil
		}
		proxy := httptest.NewServer(rp)
		defer proxy.Close()
		code, out, got := in.doctor(t, nil, "--url", proxy.URL)
		want(t, out, got, "tracker (site dent)")
		if code == 0 || !strings.Contains(out, "/t.js answers") {
			t.Errorf("exit %d\n%s", code, out)
		}
	})
	t.Run("a token Meta refuses", func(t *testing.T) {
		in.graph.SetTokens("another-token")
		defer in.graph.SetTokens(graphtest.Token)
		code, out, got := in.doctor(t, nil)
		want(t, out, got, "meta (site dent)")
		if code == 0 || !strings.Contains(out, "Meta refuses the token") || strings.Contains(out, graphtest.Token) {
			t.Errorf("exit %d\n%s", code, out)
		}
	})
	t.Run("no database where the config says", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "nowhere", "cleanads.db")
		code, out, got := in.doctor(t, map[string]string{"CLEANADS_DATABASE": "sqlite:" + missing})
		want(t, out, got, "database")
		if code == 0 || !strings.Contains(out, "no database at "+missing) {
			t.Errorf("exit %d\n%s", code, out)
		}
		if _, err := os.Stat(filepath.Dir(missing)); err == nil {
			t.Errorf("doctor made the missing database's folder")
		}
	})
	t.Run("a config that does not load", func(t *testing.T) {
		code, out, got := in.doctor(t, map[string]string{"CLEANADS_SITES_DENT_COUNTRY": "ZZ"})
		if code == 0 || got["config"] != "problem" || len(got) != 1 || !strings.Contains(out, "unknown region") {
			t.Errorf("exit %d %v\n%s", code, got, out)
		}
	})
	t.Run("the server is down", func(t *testing.T) {
		code, out, got := in.doctor(t, nil, "--url", "http://127.0.0.1:1")
		want(t, out, got, "server")
		if code == 0 || !strings.Contains(out, "does not answer") {
			t.Errorf("exit %d\n%s", code, out)
		}
	})
}

// The server's PostgreSQL goes away: doctor's own connection and the
// server's /readyz both say so.
func TestDoctorDatabaseUnreachable(t *testing.T) {
	// A subtest named postgres: the test chooses its engine itself, so
	// CI's PostgreSQL pass skips it, which the SQLite pass ran already.
	t.Run("postgres", testDoctorDatabaseUnreachable)
}

func testDoctorDatabaseUnreachable(t *testing.T) {
	dsn, cut := storetest.Proxy(t, storetest.PostgresMigratedDSN(t))
	in := newInstall(t, dsn)
	if code, out, _ := in.doctor(t, nil); code != 0 {
		t.Fatalf("before the cut: exit %d\n%s", code, out)
	}
	cut()
	code, out, got := in.doctor(t, nil)
	if code == 0 || got["database"] != "problem" || got["server"] != "problem" || got["config"] != "ok" || got["meta (site dent)"] != "ok" {
		t.Errorf("with the database cut off: exit %d %v\n%s", code, got, out)
	}
	if !strings.Contains(out, "does not answer") || !strings.Contains(out, "cannot reach its database") {
		t.Errorf("doctor does not say the database is unreachable:\n%s", out)
	}
}

// certificate makes a self-signed certificate for localhost valid from
// notBefore to notAfter, and writes it as PEM to a file.
func certificate(t *testing.T, notBefore, notAfter time.Time) (tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "doctor test CA"},
		DNSNames: []string{"localhost"}, NotBefore: notBefore, NotAfter: notAfter, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ca.pem")
	writeFile(t, path, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), 0o644)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, path
}

// Serve's answers through a TLS listener with a given certificate: doctor
// judges it and nothing else.
func TestDoctorCertificate(t *testing.T) {
	in := newInstall(t, "")
	target, _ := url.Parse(in.base)
	now := time.Now()
	for _, tc := range []struct {
		name                string
		notBefore, notAfter time.Time
		trust               bool
		problem, says       string
	}{
		{"valid for 90 days", now.Add(-time.Hour), now.Add(90 * 24 * time.Hour), true, "", "valid for localhost until"},
		{"expires in 3 days", now.Add(-80 * 24 * time.Hour), now.Add(3*24*time.Hour + time.Hour), true, "certificate", "expires in 3 days"},
		{"short-lived, 5 of 6 days left", now.Add(-24 * time.Hour), now.Add(5 * 24 * time.Hour), true, "", "(4 days left)"},
		{"short-lived, 10 of 144 hours left", now.Add(-134 * time.Hour), now.Add(10 * time.Hour), true, "certificate", "expires in 9 hours"},
		{"expired", now.Add(-90 * 24 * time.Hour), now.Add(-time.Hour), true, "certificate", "expired on"},
		{"self-signed, not trusted", now.Add(-time.Hour), now.Add(90 * 24 * time.Hour), false, "certificate", "not signed by an authority"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cert, caFile := certificate(t, tc.notBefore, tc.notAfter)
			ts := httptest.NewUnstartedServer(httputil.NewSingleHostReverseProxy(target))
			ts.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
			ts.StartTLS()
			defer ts.Close()
			flags := []string{"--url", "https://localhost:" + strings.TrimPrefix(ts.URL[strings.LastIndex(ts.URL, ":"):], ":")}
			if tc.trust {
				flags = append(flags, "--ca-file", caFile)
			}
			code, out, got := in.doctor(t, nil, flags...)
			if tc.problem == "" {
				want(t, out, got)
				if code != 0 {
					t.Errorf("exit %d", code)
				}
			} else {
				want(t, out, got, tc.problem)
				if code == 0 {
					t.Errorf("exit 0 with a bad certificate\n%s", out)
				}
			}
			if got["certificate"] == "" || !strings.Contains(out, tc.says) {
				t.Errorf("doctor does not say %q:\n%s", tc.says, out)
			}
		})
	}
}

// With tls: and no public_url, doctor checks the server where it serves
// HTTPS, under the name its certificate is for (listen is not used then),
// and a certificate no public authority signed is named with what to do
// for the tls setup the config has.
func TestDoctorOnTLS(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	certFile, keyFile, caFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), filepath.Join(dir, "ca.pem")
	cert, key := ca.leaf(t, 7, "localhost")
	writeTestFile(t, certFile, cert)
	writeTestFile(t, keyFile, key)
	writeTestFile(t, caFile, ca.pem)
	port := freePorts(t, 1)[0]
	dsn := storetest.MigratedDSN(t)
	block := fmt.Sprintf("  cert_file: %s\n  key_file: %s\n  listen_https: \"127.0.0.1:%d\"\n  listen_http: \"\"\n", certFile, keyFile, port)
	startServe(t, dir, tlsServeConfig(dsn, block), nil)
	cfg := filepath.Join(dir, "cleanads.yaml")
	doctor := func(cfg string, flags ...string) (int, string, map[string]string) {
		var out, errOut syncBuffer
		code := runWithEnv(&out, &errOut, nil, append([]string{"doctor", "--config", cfg}, flags...)...)
		return code, out.String() + errOut.String(), verdicts(out.String())
	}

	// No --url: https://localhost:PORT, the certificate's name.
	code, out, got := doctor(cfg, "--ca-file", caFile)
	want(t, out, got)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("server: https://localhost:%d/readyz answers 200", port)) ||
		!strings.Contains(out, "valid for localhost") {
		t.Errorf("doctor on tls.cert_file: exit %d\n%s", code, out)
	}
	// Without the CA: the fix speaks of cert_file.
	code, out, got = doctor(cfg)
	want(t, out, got, "certificate")
	if code == 0 || !strings.Contains(out, "Put a certificate from a public authority in tls.cert_file") {
		t.Errorf("doctor on an untrusted tls.cert_file: exit %d\n%s", code, out)
	}

	// ACME from Let's Encrypt's staging directory, or from another CA: the
	// fix names the directory line. (The same server stands in for one
	// that got such a certificate.)
	for _, tc := range []struct{ directory, says string }{
		{"staging", "tls.acme.directory is staging"},
		{"https://acme.internal.example/directory", "tls.acme.directory is https://acme.internal.example/directory, not a public authority"},
	} {
		acme := filepath.Join(t.TempDir(), "acme.yaml")
		writeFile(t, acme, tlsServeConfig(dsn, fmt.Sprintf("  acme:\n    domains: [localhost.example]\n    directory: %q\n", tc.directory)), 0o600)
		code, out, got = doctor(acme, "--url", fmt.Sprintf("https://localhost:%d", port))
		want(t, out, got, "certificate")
		if code == 0 || !strings.Contains(out, tc.says) {
			t.Errorf("doctor on tls.acme.directory %s: exit %d\n%s", tc.directory, code, out)
		}
	}
	// No --url with tls.acme: the first domain, on listen_https's port.
	acme := filepath.Join(t.TempDir(), "acme.yaml")
	writeFile(t, acme, tlsServeConfig(dsn, "  acme:\n    domains: [t.doctor.invalid, www.doctor.invalid]\n  listen_https: \":8443\"\n"), 0o600)
	if _, out, _ := doctor(acme); !strings.Contains(out, "server: https://t.doctor.invalid:8443 does not answer") {
		t.Errorf("doctor on tls.acme without --url does not check https://t.doctor.invalid:8443:\n%s", out)
	}
}

// TestDoctorLostLeads: a site whose pages with a lead form are visited but
// which gets no lead, or whose leads never carry t.js's fill time, is a
// problem with its likely cause, read from the site's counters.
func TestDoctorLostLeads(t *testing.T) {
	in := newInstall(t, "")
	ctx := context.Background()
	c, err := config.Load(in.cfg, func(k string) string { return in.env[k] })
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, c.Database, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	today := model.Day(time.Now())
	add := func(day int64, counts ...model.Count) {
		t.Helper()
		if err := db.CountersAdd(ctx, "dent", day, "test", counts...); err != nil {
			t.Fatal(err)
		}
	}
	add(today-1, model.Count{Name: model.CounterVisits, N: 90}, model.Count{Name: model.CounterFormVisits, N: 60})
	code, out, got := in.doctor(t, nil)
	want(t, out, got, "leads (site dent)")
	if code == 0 || !strings.Contains(out, "60 visits to pages with a lead form in the last 3 days, and no lead: the form may not be captured") {
		t.Errorf("exit %d; the notice does not say what happens:\n%s", code, out)
	}
	// Leads arrive, but none through t.js.
	add(today, model.Count{Name: model.CounterLeads, Dim: model.SourceWeb, N: 4}, model.Count{Name: model.CounterLeadsUntracked, Dim: model.SourceWeb, N: 4})
	_, out, got = in.doctor(t, nil)
	want(t, out, got, "leads (site dent)")
	if strings.Contains(out, "the form may not be captured") || !strings.Contains(out, "none of the 4 web leads of the last 7 days carries t.js's fill time") {
		t.Errorf("the notice after untracked leads:\n%s", out)
	}
	// One lead through t.js: nothing to say.
	add(today, model.Count{Name: model.CounterLeads, Dim: model.SourceWeb, N: 1})
	code, out, got = in.doctor(t, nil)
	want(t, out, got)
	if code != 0 || !strings.Contains(out, "90 visits (60 to pages with a lead form), 5 web leads (4 without t.js's timing)") {
		t.Errorf("exit %d, the figures:\n%s", code, out)
	}
}
