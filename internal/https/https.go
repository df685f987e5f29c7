// Package https owns HTTPS served by CleanAds itself, with no proxy in
// front: certificates from an ACME CA (obtained and renewed by certmagic,
// kept in the database so every node of a cluster serves the same one and
// only one orders it) or from two files (read again when they change); the
// TLS settings; the plain-HTTP side (ACME's HTTP-01 challenge, the health
// checks, the redirect to https); and HSTS.
package https

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/mholt/acmez/v3"
)

// Options configure a Manager: Domains for ACME, or CertFile and KeyFile.
type Options struct {
	// Domains are the names to get a certificate for from the ACME CA.
	Domains []string
	// Email is the ACME account's contact; may be empty.
	Email string
	// Directory is the CA's directory URL.
	Directory string
	// Roots are trusted for the directory's HTTPS; nil means the system's.
	Roots *x509.CertPool
	// RenewCheck is how often certificates are looked at for renewal.
	RenewCheck time.Duration
	// HTTPPort is where the plain-HTTP listener (and so HTTP-01) is; 0
	// means none, and only TLS-ALPN-01 is used. HTTPSPort is the HTTPS
	// listener's, where TLS-ALPN-01 is answered. ListenHost is the host
	// both listen on ("" for all).
	HTTPPort, HTTPSPort int
	ListenHost          string
	// Store keeps the ACME account and certificates.
	Store Store

	// CertFile and KeyFile are a PEM chain and its key, used when Domains
	// is empty.
	CertFile, KeyFile string
	// FileCheck is how often at most the files are looked at for a change
	// (default a second): on a handshake, so an idle server reads nothing.
	FileCheck time.Duration

	Logger *slog.Logger
	Now    func() time.Time
}

// Manager holds the certificates the HTTPS listener serves.
type Manager struct {
	o     Options
	cache *certmagic.Cache
	cfg   *certmagic.Config
	acme  *certmagic.ACMEIssuer
	files *fileCert
	// stop cancels the context certmagic's background work runs under.
	stop context.CancelFunc
}

// New builds a Manager. With cert files it reads them now, so a bad pair
// stops the start; with ACME nothing is ordered until Start.
func New(o Options) (*Manager, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	m := &Manager{o: o}
	if len(o.Domains) == 0 {
		if o.FileCheck <= 0 {
			o.FileCheck = time.Second
		}
		f, err := newFileCert(o.CertFile, o.KeyFile, o.FileCheck, o.Now, o.Logger)
		if err != nil {
			return nil, err
		}
		m.files = f
		return m, nil
	}
	if o.Store == nil {
		return nil, errors.New("https: ACME needs a store for the certificates")
	}
	zl := zapLogger(o.Logger)
	m.cache = certmagic.NewCache(certmagic.CacheOptions{
		GetConfigForCert:   func(certmagic.Certificate) (*certmagic.Config, error) { return m.cfg, nil },
		RenewCheckInterval: o.RenewCheck,
		Logger:             zl,
	})
	m.cfg = certmagic.New(m.cache, certmagic.Config{
		Storage: newStorage(o.Store, o.Logger, o.Now),
		Logger:  zl,
		// A client that sends no name (an address typed in) still gets
		// the first domain's certificate.
		DefaultServerName: o.Domains[0],
		OnEvent:           m.event,
	})
	m.acme = certmagic.NewACMEIssuer(m.cfg, certmagic.ACMEIssuer{
		CA:           o.Directory,
		Email:        o.Email,
		Agreed:       true,
		TrustedRoots: o.Roots,
		// certmagic answers both challenges through our own listeners:
		// it finds these ports taken (by us) and leaves them to us.
		DisableHTTPChallenge: o.HTTPPort == 0,
		AltHTTPPort:          o.HTTPPort,
		AltTLSALPNPort:       o.HTTPSPort,
		ListenHost:           o.ListenHost,
		Logger:               zl,
	})
	m.cfg.Issuers = []certmagic.Issuer{m.acme}
	return m, nil
}

// event logs at info what an operator wants to know of certmagic's work: a
// certificate obtained or renewed, and one put in service (from the CA or
// from the database); the rest of its talk is at debug, its failures at
// warn and error.
func (m *Manager) event(_ context.Context, name string, data map[string]any) error {
	switch name {
	case "cert_obtained":
		msg := "certificate obtained"
		if renewal, _ := data["renewal"].(bool); renewal {
			msg = "certificate renewed"
		}
		m.o.Logger.Info(msg, "domain", fmt.Sprint(data["identifier"]), "issuer", fmt.Sprint(data["issuer"]))
	case "cached_managed_cert":
		m.o.Logger.Info("certificate in service", "domains", fmt.Sprint(data["sans"]))
	}
	return nil
}

// Start begins getting the certificates (from storage when another node
// or an earlier run has them, else from the CA) and renewing them, in the
// background: the listeners must already be up to answer the challenges.
// A failure is logged and retried with backoff.
func (m *Manager) Start(ctx context.Context) error {
	if m.cfg == nil {
		return nil
	}
	ctx, m.stop = context.WithCancel(context.WithoutCancel(ctx))
	if err := m.cfg.ManageAsync(ctx, m.o.Domains); err != nil {
		return fmt.Errorf("https: %w", err)
	}
	return nil
}

// Stop ends the renewals; safe twice, and without Start.
func (m *Manager) Stop(context.Context) error {
	if m.stop != nil {
		m.stop()
	}
	if m.cache != nil {
		m.cache.Stop()
		m.cache = nil
	}
	return nil
}

// TLSConfig is the HTTPS listener's: TLS 1.2 at least, Go's default
// cipher suites (forward-secret key exchange only), HTTP/2, and ACME's
// TLS-ALPN-01 protocol when certificates come from ACME.
func (m *Manager) TLSConfig() *tls.Config {
	c := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}
	if m.files != nil {
		c.GetCertificate = m.files.get
		return c
	}
	c.GetCertificate = m.cfg.GetCertificate
	c.NextProtos = append(c.NextProtos, acmez.ACMETLS1Protocol)
	return c
}

// PlainHandler is the plain-HTTP listener's handler: it answers ACME's
// HTTP-01 challenge (for this node's order or another's: the tokens are in
// the shared storage), serves /healthz and /readyz from app so health
// checks need no certificate, and sends everything else to the same URL on
// https: 301 for GET and HEAD, 308 (method and body kept) for the rest.
func (m *Manager) PlainHandler(app http.Handler, httpsPort int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m.acme != nil && m.acme.HandleHTTPChallenge(w, r) {
			return
		}
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
			app.ServeHTTP(w, r)
			return
		}
		host := r.Host
		if h, _, err := net.SplitHostPort(r.Host); err == nil {
			host = h
		}
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		ip := net.ParseIP(host)
		// The redirect goes to the host asked for, so it must be a host.
		if ip == nil && !hostPattern.MatchString(host) {
			http.Error(w, "https only", http.StatusBadRequest)
			return
		}
		if httpsPort != 443 {
			host = net.JoinHostPort(host, strconv.Itoa(httpsPort))
		} else if ip != nil && ip.To4() == nil {
			host = "[" + host + "]"
		}
		code := http.StatusPermanentRedirect
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			code = http.StatusMovedPermanently
		}
		http.Redirect(w, r, "https://"+host+r.URL.RequestURI(), code)
	})
}

// hostPattern is a host name as a Host header may carry one.
var hostPattern = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$`)

// HSTS tells browsers to use https for this host from now on (a year);
// only the HTTPS listener sets it, never a plain or proxied one. No
// includeSubDomains: the advertiser's other hosts are not ours to decide.
func HSTS(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", "max-age=31536000")
		h.ServeHTTP(w, r)
	})
}
