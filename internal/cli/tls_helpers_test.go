package cli_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// testCA is a certificate authority made for one test: it signs the
// certificate Pebble's own HTTPS listener presents, and the files the
// cert_file test serves.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cleanads test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// leaf issues a certificate for names (host names or IP addresses) with
// the given serial, as PEM certificate and key.
func (ca *testCA) leaf(t *testing.T, serial int64, names ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: names[0]},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func (ca *testCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

func writeTestFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// freePorts returns n TCP ports free on 127.0.0.1 now, none of them
// handed out before in this test process. Pebble must be told our ports
// before we listen on them, so ":0" cannot do. The ports come from below
// the kernel's ephemeral range: a port ":0" gave and we closed can be
// taken again by any outgoing connection or listener before the server
// binds it, which made these tests fail at random.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	lo, hi := 20000, ephemeralLow()
	portsMu.Lock()
	defer portsMu.Unlock()
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries > 10000 {
			t.Fatalf("no free port in [%d, %d) after %d tries", lo, hi, tries)
		}
		p := lo + mrand.IntN(hi-lo)
		if portsGiven[p] {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		ln.Close()
		portsGiven[p] = true
		ports = append(ports, p)
	}
	return ports
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// ephemeralLow is the first port of Linux's ephemeral range, or the
// IANA one's where that cannot be read; freePorts stays below it.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 49152
	}
	var low, high int
	if _, err := fmt.Sscan(string(b), &low, &high); err != nil || low <= 21000 {
		return 49152
	}
	return low
}

// unavailable skips the test, or fails it under CI=true, where the tool
// must work.
func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format+" (skipped; under CI=true this fails)", args...)
}

// pebbleBinaries builds the Go tools pebble and pebble-challtestsrv (the
// tool lines of go.mod, so `go tool pebble` runs the same program) into
// the test's folder; Go's build cache makes every build after the first
// a link.
func pebbleBinaries(t *testing.T) (pebble, challtestsrv string) {
	t.Helper()
	dir := t.TempDir()
	for _, pkg := range []string{"github.com/letsencrypt/pebble/v2/cmd/pebble", "github.com/letsencrypt/pebble/v2/cmd/pebble-challtestsrv"} {
		if out, err := exec.Command("go", "build", "-o", dir, pkg).CombinedOutput(); err != nil {
			unavailable(t, "Pebble cannot be built: go build %s: %v\n%s", pkg, err, out)
		}
	}
	return filepath.Join(dir, "pebble"), filepath.Join(dir, "pebble-challtestsrv")
}

// pebble is a running Pebble (Let's Encrypt's test CA) with its challenge
// test server as DNS, answering every name with 127.0.0.1.
type pebble struct {
	dir    string // the ACME directory URL
	caFile string // the root of Pebble's own HTTPS listener
	mgmt   string // the management interface's base URL
	log    *syncBuffer
	client *http.Client // trusts caFile
}

// startPebble starts Pebble validating HTTP-01 on httpPort and TLS-ALPN-01
// on tlsPort of 127.0.0.1, issuing certificates valid for validity.
func startPebble(t *testing.T, httpPort, tlsPort int, validity time.Duration) *pebble {
	t.Helper()
	pebbleBin, challBin := pebbleBinaries(t)
	dir := t.TempDir()
	ca := newTestCA(t)
	cert, key := ca.leaf(t, 2, "localhost", "127.0.0.1")
	p := &pebble{caFile: filepath.Join(dir, "ca.pem"), log: &syncBuffer{}}
	writeTestFile(t, p.caFile, ca.pem)
	writeTestFile(t, filepath.Join(dir, "cert.pem"), cert)
	writeTestFile(t, filepath.Join(dir, "key.pem"), key)
	ports := freePorts(t, 4)
	acmeAddr, mgmtAddr := fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("127.0.0.1:%d", ports[1])
	dnsAddr, chalMgmt := fmt.Sprintf("127.0.0.1:%d", ports[2]), fmt.Sprintf("127.0.0.1:%d", ports[3])
	cfg, _ := json.Marshal(map[string]any{"pebble": map[string]any{
		"listenAddress": acmeAddr, "managementListenAddress": mgmtAddr,
		"certificate": filepath.Join(dir, "cert.pem"), "privateKey": filepath.Join(dir, "key.pem"),
		"httpPort": httpPort, "tlsPort": tlsPort, "ocspResponderURL": "", "keyAlgorithm": "ecdsa",
		"profiles": map[string]any{"default": map[string]any{"description": "test", "validityPeriod": int(validity / time.Second)}},
	}})
	writeTestFile(t, filepath.Join(dir, "pebble.json"), cfg)

	start := func(name string, env []string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdout, cmd.Stderr = p.log, p.log
		if err := cmd.Start(); err != nil {
			unavailable(t, "%s cannot run: %v", filepath.Base(name), err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
	}
	// DNS only: the other challenge servers would take ports of their own.
	start(challBin, nil, "-dnsserver", dnsAddr, "-management", chalMgmt, "-defaultIPv4", "127.0.0.1", "-defaultIPv6", "",
		"-http01", "", "-https01", "", "-tlsalpn01", "", "-doh", "")
	// No random sleep before validating, and no nonce refused at random:
	// the test is about our server, not about retrying Pebble.
	start(pebbleBin, []string{"PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0"},
		"-config", filepath.Join(dir, "pebble.json"), "-dnsserver", dnsAddr)

	p.dir = "https://" + acmeAddr + "/dir"
	p.mgmt = "https://" + mgmtAddr
	p.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.pool()}}}
	eventually(t, "Pebble's directory", func() bool {
		resp, err := p.client.Get(p.dir)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, func() string { return p.log.String() })
	return p
}

// root returns the root Pebble signs with (made anew at each start).
func (p *pebble) root(t *testing.T) *x509.CertPool {
	t.Helper()
	resp, err := p.client.Get(p.mgmt + "/roots/0")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatalf("Pebble's root: %d %s", resp.StatusCode, b)
	}
	return pool
}

var pebbleOrder = regexp.MustCompile(`(?m)Added order "`)

// orders counts the orders Pebble has been sent.
func (p *pebble) orders() int {
	return len(pebbleOrder.FindAllString(p.log.String(), -1))
}

// issued returns the serials Pebble has issued, in order.
func (p *pebble) issued() []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(p.log.String()))
	for sc.Scan() {
		if _, rest, ok := strings.Cut(sc.Text(), "Issued certificate serial "); ok {
			out = append(out, strings.Fields(rest)[0])
		}
	}
	return out
}

// eventually polls ok until it holds; the deadline is a guard against a
// hang, not a measure of speed.
func eventually(t *testing.T, what string, ok func() bool, logs func() string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s; logs:\n%s", what, logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// httpsClient reaches any host name at 127.0.0.1 (as if DNS said so),
// trusting roots, and never follows redirects.
func httpsClient(roots *x509.CertPool) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: roots},
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				_, port, _ := net.SplitHostPort(addr)
				return dialer.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
			},
			DisableKeepAlives: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// servedSerial connects to addr as name and returns the serial of the
// certificate served, in Pebble's hex, or "" with the error when the
// handshake or verification against roots fails.
func servedSerial(addr, name string, roots *x509.CertPool) (string, error) {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr,
		&tls.Config{ServerName: name, RootCAs: roots})
	if err != nil {
		return "", err
	}
	defer conn.Close()
	return hex.EncodeToString(conn.ConnectionState().PeerCertificates[0].SerialNumber.Bytes()), nil
}
