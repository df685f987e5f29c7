package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// selfSigned writes a certificate and its key as PEM files.
func selfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "t.example.com"},
		DNSNames: []string{"t.example.com"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, "cert.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))),
		writeFile(t, "key.pem", string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})))
}

func problemKeys(t *testing.T, err error) map[string]string {
	t.Helper()
	var p Problems
	if !errors.As(err, &p) {
		t.Fatalf("want Problems, got %v", err)
	}
	got := map[string]string{}
	for _, e := range p {
		got[e.Key] = e.Message
	}
	return got
}

// No tls block is today's plain HTTP on listen; the block's defaults are
// Let's Encrypt on :443 and :80.
func TestTLSDefaults(t *testing.T) {
	c, err := Load("", envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.TLS.Enabled() {
		t.Error("TLS on without a tls block")
	}
	if c.TLS.ListenHTTPS != ":443" || c.TLS.ListenHTTP != ":80" || c.TLS.ACME.Directory != LetsEncrypt ||
		time.Duration(c.TLS.ACME.RenewCheck) != 10*time.Minute {
		t.Errorf("defaults: %+v", c.TLS)
	}
}

func TestTLSACME(t *testing.T) {
	ca, _ := selfSigned(t)
	path := writeFile(t, "c.yaml", `
public_url: https://t.example.com
tls:
  acme:
    domains: [t.example.com]
    email: ops@example.com
    directory: staging
    directory_ca_file: `+ca+`
`)
	c, err := Load(path, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	a := c.TLS.ACME
	if !c.TLS.Enabled() || a.Directory != LetsEncryptStaging || a.Email != "ops@example.com" || a.Domains[0] != "t.example.com" {
		t.Errorf("acme: %+v", a)
	}
	if roots, err := a.Roots(); err != nil || roots == nil {
		t.Errorf("roots: %v %v", roots, err)
	}
	if d := c.Dump(); !strings.Contains(d, "acme-staging-v02") || !strings.Contains(d, "listen_https") {
		t.Errorf("config show:\n%s", d)
	}

	// The environment sets it as every other key.
	c, err = Load("", envOf(map[string]string{"CLEANADS_TLS_ACME_DOMAINS": "t.example.com, u.example.com",
		"CLEANADS_TLS_LISTEN_HTTPS": "127.0.0.1:8443", "CLEANADS_TLS_LISTEN_HTTP": "127.0.0.1:8081",
		"CLEANADS_TLS_ACME_RENEW_CHECK": "1s"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.TLS.ACME.Domains) != 2 || c.TLS.ListenHTTPS != "127.0.0.1:8443" || c.TLS.ListenHTTP != "127.0.0.1:8081" ||
		time.Duration(c.TLS.ACME.RenewCheck) != time.Second {
		t.Errorf("from env: %+v", c.TLS)
	}
}

func TestTLSFiles(t *testing.T) {
	cert, key := selfSigned(t)
	c, err := Load("", envOf(map[string]string{"CLEANADS_TLS_CERT_FILE": cert, "CLEANADS_TLS_KEY_FILE": key}))
	if err != nil || !c.TLS.Enabled() {
		t.Fatalf("cert files: %v", err)
	}
	// A key that is not the certificate's is caught before serving.
	_, other := selfSigned(t)
	_, err = Load("", envOf(map[string]string{"CLEANADS_TLS_CERT_FILE": cert, "CLEANADS_TLS_KEY_FILE": other}))
	if got := problemKeys(t, err); !strings.Contains(got["tls.cert_file"], "private key does not match") {
		t.Errorf("mismatched pair: %v", err)
	}
}

// Every mistake in the block is reported in one go.
func TestTLSProblems(t *testing.T) {
	cert, _ := selfSigned(t)
	for name, tc := range map[string]struct {
		yaml string
		want []string
	}{
		"acme": {`
public_url: http://t.example.com
tls:
  acme:
    domains: ["*.example.com", "T.Example.com", localhost, t.example.com, t.example.com]
    email: nobody
    directory: http://ca.example/directory
    directory_ca_file: /nonexistent/ca.pem
    renew_check: 0s
  listen_https: "443"
  listen_http: ":nope:"
`, []string{"public_url", "tls.acme.domains[0]", "tls.acme.domains[1]", "tls.acme.domains[2]", "tls.acme.domains[4]",
			"tls.acme.email", "tls.acme.directory", "tls.acme.directory_ca_file", "tls.acme.renew_check",
			"tls.listen_https", "tls.listen_http"}},
		"both": {`
tls:
  acme: {domains: [t.example.com]}
  cert_file: ` + cert + `
  listen_https: ":443"
  listen_http: ":443"
`, []string{"tls", "tls.listen_http"}},
		"half files": {`
tls: {cert_file: ` + cert + `}
`, []string{"tls.key_file"}},
		"half acme": {`
tls: {acme: {email: ops@example.com}}
`, []string{"tls.acme.domains"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Load(writeFile(t, "c.yaml", tc.yaml), envOf(nil))
			got := problemKeys(t, err)
			for _, k := range tc.want {
				if _, ok := got[k]; !ok {
					t.Errorf("no problem for %s in:\n%v", k, err)
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("%d problems, want %d:\n%v", len(got), len(tc.want), err)
			}
		})
	}
}
