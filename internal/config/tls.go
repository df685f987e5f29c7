package config

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// Let's Encrypt's ACME directories; tls.acme.directory "staging" means the
// second.
const (
	LetsEncrypt        = "https://acme-v02.api.letsencrypt.org/directory"
	LetsEncryptStaging = "https://acme-staging-v02.api.letsencrypt.org/directory"
)

// TLS is HTTPS served by CleanAds itself: a certificate from an ACME CA
// (acme.domains) or from two files (cert_file, key_file), one of the two.
type TLS struct {
	ACME ACME `yaml:"acme"`
	// CertFile and KeyFile are a PEM certificate chain and its key, read
	// again when either file changes.
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	// ListenHTTPS is where HTTPS is served (default :443).
	ListenHTTPS string `yaml:"listen_https"`
	// ListenHTTP answers ACME's HTTP-01 challenge, /healthz and /readyz,
	// and redirects the rest to https (default :80); "" serves no plain
	// HTTP (ACME then proves the name with TLS-ALPN-01 alone).
	ListenHTTP string `yaml:"listen_http"`
}

// ACME gets and renews certificates from an ACME CA.
type ACME struct {
	// Domains are the names the certificate is for, e.g. t.example.com.
	Domains []string `yaml:"domains"`
	// Email is the contact the CA may write to about the account.
	Email string `yaml:"email"`
	// Directory is the CA's directory URL (default Let's Encrypt); the
	// word staging means Let's Encrypt's staging CA.
	Directory string `yaml:"directory"`
	// DirectoryCAFile is a PEM root to trust for the directory's own HTTPS,
	// for a private CA (Pebble, step-ca).
	DirectoryCAFile string `yaml:"directory_ca_file"`
	// RenewCheck is how often certificates are looked at for renewal
	// (default 10m); one is renewed once a third of its life is left, or
	// when the CA's renewal info (ARI) says so.
	RenewCheck model.Duration `yaml:"renew_check"`
}

// Enabled tells whether the server serves HTTPS itself.
func (t *TLS) Enabled() bool {
	return len(t.ACME.Domains) > 0 || t.CertFile != "" || t.KeyFile != ""
}

// domainPattern is one DNS name as a CA issues for it: letters, digits and
// hyphens in dot-separated labels, at least two labels, no wildcard
// (which needs the DNS-01 challenge).
var domainPattern = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// validateTLS checks the tls block; with none set, only that nothing of
// it is half set.
func (c *Config) validateTLS(errs *Problems) {
	t, a := &c.TLS, &c.TLS.ACME
	if a.Directory == "staging" {
		a.Directory = LetsEncryptStaging
	}
	if !t.Enabled() {
		if a.Email != "" || a.DirectoryCAFile != "" {
			errs.add("tls.acme.domains", "set the domains the certificate is for, or remove the rest of tls.acme")
		}
		return
	}
	if len(a.Domains) > 0 && (t.CertFile != "" || t.KeyFile != "") {
		errs.add("tls", "set either tls.acme or tls.cert_file and tls.key_file, not both")
	}
	if t.ListenHTTPS == "" {
		errs.add("tls.listen_https", "want host:port, e.g. :443")
	} else if _, _, err := net.SplitHostPort(t.ListenHTTPS); err != nil {
		errs.add("tls.listen_https", "want host:port, e.g. :443 (%v)", err)
	}
	if t.ListenHTTP != "" {
		if _, _, err := net.SplitHostPort(t.ListenHTTP); err != nil {
			errs.add("tls.listen_http", "want host:port, e.g. :80, or \"\" for no plain HTTP (%v)", err)
		} else if t.ListenHTTP == t.ListenHTTPS && !strings.HasSuffix(t.ListenHTTP, ":0") {
			errs.add("tls.listen_http", "must differ from tls.listen_https")
		}
	}
	if c.PublicURL != "" && !strings.HasPrefix(c.PublicURL, "https://") {
		errs.add("public_url", "the server serves HTTPS itself (tls): want https://..., got %q", c.PublicURL)
	}
	if len(a.Domains) > 0 {
		a.validate(errs)
		return
	}
	switch {
	case t.CertFile == "":
		errs.add("tls.cert_file", "set it with tls.key_file")
	case t.KeyFile == "":
		errs.add("tls.key_file", "set it with tls.cert_file")
	default:
		if _, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile); err != nil {
			errs.add("tls.cert_file", "cannot use it with tls.key_file: %v", err)
		}
	}
}

func (a *ACME) validate(errs *Problems) {
	seen := map[string]bool{}
	for i, d := range a.Domains {
		key := fmt.Sprintf("tls.acme.domains[%d]", i)
		switch {
		case strings.Contains(d, "*"):
			errs.add(key, "%q: a wildcard needs the DNS-01 challenge, which CleanAds does not do; name each host", d)
		case !domainPattern.MatchString(d) || len(d) > 253:
			errs.add(key, "want a host name in lower case like t.example.com, got %q", d)
		case seen[d]:
			errs.add(key, "%q is listed twice", d)
		}
		seen[d] = true
	}
	if a.Email != "" && !strings.Contains(a.Email, "@") {
		errs.add("tls.acme.email", "not an e-mail address: %q", a.Email)
	}
	if u, err := url.Parse(a.Directory); err != nil || u.Scheme != "https" || u.Host == "" {
		errs.add("tls.acme.directory", "want the CA's https:// directory URL or the word staging, got %q", a.Directory)
	}
	if a.DirectoryCAFile != "" {
		if _, err := a.Roots(); err != nil {
			errs.add("tls.acme.directory_ca_file", "%v", err)
		}
	}
	if time.Duration(a.RenewCheck) <= 0 {
		errs.add("tls.acme.renew_check", "want a duration such as 10m, got %s", a.RenewCheck)
	}
}

// Roots returns the system's roots plus directory_ca_file's certificates;
// nil when no file is set (the system's roots alone).
func (a *ACME) Roots() (*x509.CertPool, error) {
	if a.DirectoryCAFile == "" {
		return nil, nil
	}
	b, err := os.ReadFile(a.DirectoryCAFile)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s holds no PEM certificate", a.DirectoryCAFile)
	}
	return pool, nil
}
