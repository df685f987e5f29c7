package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	stdlog "log"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cleanads/cleanads/internal/config"
	"github.com/cleanads/cleanads/internal/https"
	"github.com/cleanads/cleanads/internal/store"
)

// front is what clients connect to: plain HTTP on listen (behind a proxy
// that terminates TLS), or, with a tls block, HTTPS on tls.listen_https
// and its plain-HTTP side on tls.listen_http.
type front struct {
	servers []*http.Server
	done    []chan error // one per server: what its Serve returned
	errs    chan error   // the first server that failed
	certs   *https.Manager
	// url is the address to print: https://domain for ACME.
	url   string
	plain string // the plain-HTTP side's address with tls, else ""
}

// startFront listens and serves handler; with ACME the certificates are
// sought once both listeners are up, since the CA's challenge comes to
// them.
func startFront(ctx context.Context, c *config.Config, db *store.DB, handler http.Handler, log *slog.Logger) (*front, error) {
	f := &front{errs: make(chan error, 3)}
	if !c.TLS.Enabled() {
		ln, err := net.Listen("tcp", c.Listen)
		if err != nil {
			return nil, listenError("listen", err)
		}
		f.serve(newHTTPServer(c, handler, log), ln)
		f.url = "http://" + ln.Addr().String()
		return f, nil
	}

	t := c.TLS
	ln, err := net.Listen("tcp", t.ListenHTTPS)
	if err != nil {
		return nil, listenError("tls.listen_https", err)
	}
	var pln net.Listener
	if t.ListenHTTP != "" {
		if pln, err = net.Listen("tcp", t.ListenHTTP); err != nil {
			ln.Close()
			return nil, listenError("tls.listen_http", err)
		}
	}
	httpsPort := ln.Addr().(*net.TCPAddr).Port
	o := https.Options{Domains: t.ACME.Domains, Email: t.ACME.Email, Directory: t.ACME.Directory,
		RenewCheck: time.Duration(t.ACME.RenewCheck), HTTPSPort: httpsPort, Store: db,
		CertFile: t.CertFile, KeyFile: t.KeyFile, Logger: log, Now: time.Now}
	o.ListenHost, _, _ = net.SplitHostPort(t.ListenHTTPS)
	if pln != nil {
		o.HTTPPort = pln.Addr().(*net.TCPAddr).Port
	}
	if o.Roots, err = t.ACME.Roots(); err != nil {
		return nil, closeAll(fmt.Errorf("tls.acme.directory_ca_file: %w", err), ln, pln)
	}
	f.certs, err = https.New(o)
	if err != nil {
		return nil, closeAll(err, ln, pln)
	}

	srv := newHTTPServer(c, https.HSTS(handler), log)
	srv.TLSConfig = f.certs.TLSConfig()
	srv.ErrorLog = stdlog.New(handshakeLog{log}, "", 0)
	f.serve(srv, tls.NewListener(ln, srv.TLSConfig))
	if pln != nil {
		f.serve(newHTTPServer(c, f.certs.PlainHandler(handler, httpsPort), log), pln)
		f.plain = pln.Addr().String()
	}
	f.url = "https://" + ln.Addr().String()
	if len(t.ACME.Domains) > 0 {
		f.url = "https://" + t.ACME.Domains[0]
		if httpsPort != 443 {
			f.url += ":" + strconv.Itoa(httpsPort)
		}
	}
	if err := f.certs.Start(ctx); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// serve runs srv on ln in the background.
func (f *front) serve(srv *http.Server, ln net.Listener) {
	done := make(chan error, 1)
	f.servers, f.done = append(f.servers, srv), append(f.done, done)
	go func() {
		err := srv.Serve(ln)
		if !errors.Is(err, http.ErrServerClosed) {
			f.errs <- err
		}
		done <- err
	}()
}

// Close stops serving at once (a failed start).
func (f *front) Close() {
	for _, s := range f.servers {
		s.Close()
	}
	if f.certs != nil {
		f.certs.Stop(context.Background())
	}
}

// Shutdown lets in-flight requests finish on every listener, then stops
// renewing certificates.
func (f *front) Shutdown(ctx context.Context, log *slog.Logger) {
	for _, s := range f.servers {
		if err := s.Shutdown(ctx); err != nil {
			log.Warn("http shutdown", "err", err)
		}
	}
	for _, d := range f.done {
		if err := <-d; err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("http", "err", err)
		}
	}
	if f.certs != nil {
		f.certs.Stop(ctx)
	}
}

// handshakeLog is the HTTPS server's error log: failed handshakes
// (scanners, clients naming another host, a certificate not there yet,
// which the certificate's own log lines explain) are at debug; the rest
// warn as on plain HTTP.
type handshakeLog struct{ log *slog.Logger }

func (h handshakeLog) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	level := slog.LevelWarn
	if strings.HasPrefix(msg, "http: TLS handshake error") {
		level = slog.LevelDebug
	}
	h.log.Log(context.Background(), level, msg)
	return len(p), nil
}

// listenError names the key whose address could not be listened on and,
// for a port below 1024 refused to an ordinary user, what lets it bind.
func listenError(key string, err error) error {
	if errors.Is(err, syscall.EACCES) {
		return fmt.Errorf("%s: %w; ports below 1024 need root or the capability CAP_NET_BIND_SERVICE "+
			"(the systemd unit gives it: AmbientCapabilities=CAP_NET_BIND_SERVICE; or setcap cap_net_bind_service=+ep on the binary)", key, err)
	}
	return fmt.Errorf("%s: %w", key, err)
}

func closeAll(err error, lns ...net.Listener) error {
	for _, ln := range lns {
		if ln != nil {
			ln.Close()
		}
	}
	return err
}
