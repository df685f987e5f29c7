package cli_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/store/storetest"
)

// acmeName is the test name the certificate is for; the challenge test
// server answers it (and every name) with 127.0.0.1.
const acmeName = "t.cleanads.test"

// tlsServeConfig is a server with one site and the given tls block.
func tlsServeConfig(dsn, tlsBlock string) string {
	return fmt.Sprintf(`
database: %q
limits: {api_per_key: off, public_per_ip: off}
sites:
  - id: dent
    api_key: "dent-key-0123456789abcdef"
    origins: ["https://www.istanbuldis.example"]
    country: TR
tls:
%s`, dsn, tlsBlock)
}

// acmeBlock is a tls block getting the certificate from p; httpPort 0
// serves no plain HTTP, so the name is proved by TLS-ALPN-01 alone.
func acmeBlock(p *pebble, httpsPort, httpPort int, renewCheck string) string {
	plain := `""`
	if httpPort != 0 {
		plain = fmt.Sprintf(`"127.0.0.1:%d"`, httpPort)
	}
	return fmt.Sprintf(`  acme:
    domains: [%s]
    email: ops@cleanads.test
    directory: %s
    directory_ca_file: %s
    renew_check: %s
  listen_https: "127.0.0.1:%d"
  listen_http: %s
`, acmeName, p.dir, p.caFile, renewCheck, httpsPort, plain)
}

// waitServed waits until addr serves name a certificate that roots
// verify, and returns its serial.
func waitServed(t *testing.T, addr string, roots *x509.CertPool, logs func() string) string {
	t.Helper()
	var serial string
	eventually(t, "a certificate on "+addr, func() bool {
		s, err := servedSerial(addr, acmeName, roots)
		serial = s
		return err == nil
	}, logs)
	return serial
}

// A real ACME flow against Pebble: serve gets a certificate for the test
// name by answering Pebble's challenge on its own ports, serves the
// tracker, the API and the admin UI over HTTPS with it, redirects plain
// HTTP, and renews it once it is near expiry (Pebble issues certificates
// living 30 seconds here, and its renewal info says when to renew).
func TestServeACME(t *testing.T) {
	ports := freePorts(t, 2)
	httpsPort, httpPort := ports[0], ports[1]
	p := startPebble(t, httpPort, httpsPort, 30*time.Second)
	dir := t.TempDir()
	base, stdout, stderr, stop := startServe(t, dir, tlsServeConfig(storetest.MigratedDSN(t), acmeBlock(p, httpsPort, httpPort, "1s")), nil)
	logs := func() string { return stdout.String() + stderr.String() + "\n--- pebble\n" + p.log.String() }
	if want := fmt.Sprintf("https://%s:%d", acmeName, httpsPort); base != want {
		t.Fatalf("serve says it listens on %s, want %s", base, want)
	}
	roots := p.root(t)
	addr := fmt.Sprintf("127.0.0.1:%d", httpsPort)
	first := waitServed(t, addr, roots, logs)
	if !slices.Contains(p.issued(), first) {
		t.Fatalf("served serial %s is not one Pebble issued (%v)", first, p.issued())
	}

	c := httpsClient(roots)
	do := func(method, url, body string, hdr map[string]string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", method, url, err, logs())
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	// The tracker, over HTTPS verified against Pebble's root, with HSTS.
	resp, body := do("GET", base+"/t.js", "", nil)
	if resp.StatusCode != 200 || !strings.Contains(body, "function") || resp.TLS == nil || len(resp.TLS.VerifiedChains) == 0 {
		t.Fatalf("t.js over https: %d %.80q", resp.StatusCode, body)
	}
	if hsts := resp.Header.Get("Strict-Transport-Security"); !strings.HasPrefix(hsts, "max-age=") {
		t.Errorf("no HSTS over https: %q", hsts)
	}
	// The visit's cookies are Secure: the server sees TLS itself, with no
	// proxy to say so.
	resp, body = do("POST", base+"/v1/collect?site=dent", `{"url":"https://www.istanbuldis.example/","consent":true}`,
		map[string]string{"Content-Type": "text/plain", "Origin": "https://www.istanbuldis.example"})
	if resp.StatusCode != 200 || len(resp.Cookies()) == 0 {
		t.Fatalf("collect over https: %d %s", resp.StatusCode, body)
	}
	for _, ck := range resp.Cookies() {
		if !ck.Secure {
			t.Errorf("cookie %s not Secure over https", ck.Name)
		}
	}
	// The API.
	resp, body = do("POST", base+"/v1/leads", `{"site":"dent","email":"ayse@example.com","phone":"+905321112233","fill_ms":9000}`,
		map[string]string{"Content-Type": "application/json", "Authorization": "Bearer dent-key-0123456789abcdef"})
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("API lead over https: %d %s", resp.StatusCode, body)
	}
	// The admin UI.
	resp, body = do("GET", base+"/admin/login", "", nil)
	if resp.StatusCode != 200 || !strings.Contains(body, "<form") {
		t.Fatalf("admin over https: %d %.200s", resp.StatusCode, body)
	}

	// Plain HTTP: the rest goes to https, health checks stay.
	plain := fmt.Sprintf("http://%s:%d", acmeName, httpPort)
	for _, tc := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/t.js?v=1", http.StatusMovedPermanently},
		{"HEAD", "/admin/", http.StatusMovedPermanently},
		{"POST", "/v1/leads", http.StatusPermanentRedirect},
	} {
		resp, _ := do(tc.method, plain+tc.path, "{}", nil)
		if want := base + tc.path; resp.StatusCode != tc.code || resp.Header.Get("Location") != want {
			t.Errorf("plain %s %s: %d %q, want %d %q", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Location"), tc.code, want)
		}
		if resp.Header.Get("Strict-Transport-Security") != "" {
			t.Errorf("HSTS on plain HTTP %s", tc.path)
		}
	}
	if resp, body := do("GET", plain+"/healthz", "", nil); resp.StatusCode != 200 {
		t.Errorf("plain /healthz: %d %s", resp.StatusCode, body)
	}

	// Renewal: a new certificate, ordered from Pebble, served without a
	// restart.
	var renewed string
	eventually(t, "a renewed certificate", func() bool {
		s, err := servedSerial(addr, acmeName, roots)
		renewed = s
		return err == nil && s != first
	}, logs)
	if !slices.Contains(p.issued(), renewed) || p.orders() < 2 {
		t.Fatalf("renewed serial %s, Pebble issued %v in %d orders", renewed, p.issued(), p.orders())
	}
	eventually(t, "the renewal in the log", func() bool {
		return strings.Contains(logs(), `msg="certificate obtained"`) && strings.Contains(logs(), `msg="certificate renewed"`)
	}, logs)
	if code := stop(); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, logs())
	}
}

// Two nodes on one PostgreSQL: the first orders the certificate (with no
// plain HTTP, so through TLS-ALPN-01 on its HTTPS port), the second finds
// it in the database and serves the same one without an order of its own.
func TestServeACMETwoNodes(t *testing.T) {
	// A subtest named postgres: the test chooses its engine itself, so
	// CI's PostgreSQL pass skips it, which the SQLite pass ran already.
	t.Run("postgres", testServeACMETwoNodes)
}

func testServeACMETwoNodes(t *testing.T) {
	dsn := storetest.PostgresMigratedDSN(t)
	ports := freePorts(t, 4)
	p := startPebble(t, ports[1], ports[0], 0) // 0: Pebble's default, 90 days
	roots := p.root(t)

	// At debug, the log names the challenge used.
	_, out1, err1, _ := startServe(t, t.TempDir(), tlsServeConfig(dsn, acmeBlock(p, ports[0], 0, "10m"))+"log: {level: debug}\n", nil)
	logs := func() string { return out1.String() + err1.String() + "\n--- pebble\n" + p.log.String() }
	first := waitServed(t, fmt.Sprintf("127.0.0.1:%d", ports[0]), roots, logs)
	if n := p.orders(); n != 1 || !strings.Contains(out1.String()+err1.String(), "challenge_type=tls-alpn-01") {
		t.Fatalf("%d orders for one certificate, want 1 proved by TLS-ALPN-01:\n%s", n, logs())
	}

	_, out2, err2, stop2 := startServe(t, t.TempDir(), tlsServeConfig(dsn, acmeBlock(p, ports[2], ports[3], "10m")), nil)
	logs2 := func() string { return out2.String() + err2.String() + "\n--- pebble\n" + p.log.String() }
	second := waitServed(t, fmt.Sprintf("127.0.0.1:%d", ports[2]), roots, logs2)
	if second != first {
		t.Errorf("second node serves %s, the first %s", second, first)
	}
	if n := p.orders(); n != 1 {
		t.Errorf("the second node ordered: %d orders\n%s", n, logs2())
	}
	if !strings.Contains(out2.String()+err2.String(), "certificate in service") ||
		strings.Contains(out2.String()+err2.String(), "certificate obtained") {
		t.Errorf("the second node's log should say it serves a certificate it did not obtain:\n%s", logs2())
	}
	if code := stop2(); code != 0 {
		t.Fatalf("second node exited %d:\n%s", code, logs2())
	}
}

// Two nodes on one PostgreSQL, the second a process of its own as in
// production, want the certificate at the same moment (the test holds the
// lock until both are up and waiting for it): one orders, the other waits
// and then serves the certificate the first stored. Pebble validates at
// the second node's ports only, so when the first node wins the order
// (usually: it has asked for the lock longest), the second answers the
// CA's challenge for it from the shared storage.
func TestServeACMETwoNodesAtOnce(t *testing.T) {
	// A subtest named postgres: the test chooses its engine itself, so
	// CI's PostgreSQL pass skips it, which the SQLite pass ran already.
	t.Run("postgres", testServeACMETwoNodesAtOnce)
}

func testServeACMETwoNodesAtOnce(t *testing.T) {
	dsn := storetest.PostgresMigratedDSN(t)
	ctx := context.Background()
	db := storetest.Open(t, dsn)
	const lock = "issue_cert_" + acmeName
	if got, err := db.CertLock(ctx, lock, "the test", time.Now(), time.Hour); err != nil || !got {
		t.Fatalf("test lock: %v %v", got, err)
	}
	ports := freePorts(t, 4)
	p := startPebble(t, ports[3], ports[2], 0)
	roots := p.root(t)
	config := func(i int) string {
		return tlsServeConfig(dsn, acmeBlock(p, ports[2*i], ports[2*i+1], "10m")) + "log: {level: debug}\n"
	}
	bin := buildBinary(t)
	_, out1, err1, _ := startServe(t, t.TempDir(), config(0), nil)
	cfg2 := filepath.Join(t.TempDir(), "cleanads.yaml")
	writeTestFile(t, cfg2, []byte(config(1)))
	node2 := startBinary(t, bin, cfg2).stderr
	log1 := func() string { return out1.String() + err1.String() }
	logs := func() string {
		return log1() + "\n--- second node\n" + node2.String() + "\n--- pebble\n" + p.log.String()
	}
	// Both wait on the lock (certmagic says so, at debug here).
	eventually(t, "both nodes waiting for the lock", func() bool {
		return strings.Contains(log1(), `msg="acquiring lock"`) && strings.Contains(node2.String(), `msg="acquiring lock"`)
	}, logs)
	if p.orders() != 0 {
		t.Fatalf("ordered under a held lock:\n%s", logs())
	}
	if err := db.CertUnlock(ctx, lock, "the test"); err != nil {
		t.Fatal(err)
	}
	first := waitServed(t, fmt.Sprintf("127.0.0.1:%d", ports[0]), roots, logs)
	second := waitServed(t, fmt.Sprintf("127.0.0.1:%d", ports[2]), roots, logs)
	if first != second || p.orders() != 1 {
		t.Fatalf("serials %s and %s from %d orders, want one:\n%s", first, second, p.orders(), logs())
	}
	if strings.Contains(log1(), `msg="certificate obtained"`) {
		// The first node ordered; the second answered the challenge with
		// what the first stored.
		if !strings.Contains(node2.String(), "distributed=true") {
			t.Errorf("the second node did not answer the first's challenge from the storage:\n%s", logs())
		}
	} else {
		t.Log("the second node ordered the certificate: the challenge was its own")
	}
}

// A restart serves the certificate kept in the database and orders none.
func TestServeACMERestart(t *testing.T) {
	ports := freePorts(t, 2)
	p := startPebble(t, ports[1], ports[0], 0)
	roots := p.root(t)
	dir, dsn := t.TempDir(), storetest.MigratedDSN(t)
	cfg := tlsServeConfig(dsn, acmeBlock(p, ports[0], ports[1], "10m"))
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])

	_, out, errOut, stop := startServe(t, dir, cfg, nil)
	logs := func() string { return out.String() + errOut.String() + "\n--- pebble\n" + p.log.String() }
	first := waitServed(t, addr, roots, logs)
	if code := stop(); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, logs())
	}
	_, out, errOut, _ = startServe(t, dir, cfg, nil)
	if again := waitServed(t, addr, roots, logs); again != first {
		t.Errorf("after a restart: serial %s, before %s", again, first)
	}
	if n := p.orders(); n != 1 {
		t.Errorf("%d orders across a restart, want 1:\n%s", n, logs())
	}
}

// cert_file and key_file: the certificate is served, and a new pair
// written over the files is served without a restart; a half-written pair
// (the key not yet matching) keeps the old one in service meanwhile.
func TestServeTLSFiles(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	cert, key := ca.leaf(t, 0x64, acmeName)
	writeTestFile(t, certFile, cert)
	writeTestFile(t, keyFile, key)
	ports := freePorts(t, 2)
	block := fmt.Sprintf("  cert_file: %s\n  key_file: %s\n  listen_https: \"127.0.0.1:%d\"\n  listen_http: \"127.0.0.1:%d\"\n",
		certFile, keyFile, ports[0], ports[1])
	base, stdout, stderr, stop := startServe(t, dir, tlsServeConfig(storetest.MigratedDSN(t), block), nil)
	logs := func() string { return stdout.String() + stderr.String() }
	if want := fmt.Sprintf("https://127.0.0.1:%d", ports[0]); base != want {
		t.Fatalf("serve says %s, want %s", base, want)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	if s, err := servedSerial(addr, acmeName, ca.pool()); err != nil || s != "64" {
		t.Fatalf("served %q %v, want serial 64", s, err)
	}

	// A renewal written the way tools do, one file after the other: first
	// a key the old certificate does not match...
	cert2, key2 := ca.leaf(t, 0x65, acmeName)
	writeTestFile(t, keyFile, key2)
	// (a second later than the first read at the earliest, so the server
	// looks at the files again)
	eventually(t, "the half-written pair to be seen", func() bool {
		servedSerial(addr, acmeName, ca.pool()) // the files are looked at on a handshake
		return strings.Contains(logs(), "do not load")
	}, logs)
	if s, err := servedSerial(addr, acmeName, ca.pool()); err != nil || s != "64" {
		t.Fatalf("half-written pair: served %q %v, want the old serial 64", s, err)
	}
	// ...then the certificate: the new pair is served.
	writeTestFile(t, certFile, cert2)
	eventually(t, "the new certificate", func() bool {
		s, err := servedSerial(addr, acmeName, ca.pool())
		return err == nil && s == "65"
	}, logs)

	resp, err := httpsClient(ca.pool()).Get(fmt.Sprintf("http://%s:%d/admin/", acmeName, ports[1]))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != fmt.Sprintf("https://%s:%d/admin/", acmeName, ports[0]) {
		t.Errorf("plain redirect: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if code := stop(); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, logs())
	}
}
