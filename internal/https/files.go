package https

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// fileCert serves a certificate from two PEM files and reads them again
// when either changes (a renewal by certbot or another tool), without a
// restart. A changed pair that does not load (the certificate written, the
// key not yet) leaves the old one in use until it does.
type fileCert struct {
	certFile, keyFile string
	every             time.Duration
	now               func() time.Time
	log               *slog.Logger

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   string    // the files' sizes and times when cert was read
	bad     string    // the stamp last found unloadable, logged once
	checked time.Time // when the files were last looked at
}

func newFileCert(certFile, keyFile string, every time.Duration, now func() time.Time, log *slog.Logger) (*fileCert, error) {
	f := &fileCert{certFile: certFile, keyFile: keyFile, every: every, now: now, log: log}
	stamp, err := f.stampNow()
	if err != nil {
		return nil, fmt.Errorf("https: %w", err)
	}
	c, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("https: tls.cert_file and tls.key_file: %w", err)
	}
	f.cert, f.stamp, f.checked = &c, stamp, now()
	return f, nil
}

// stampNow is what changes when either file is replaced or rewritten.
func (f *fileCert) stampNow() (string, error) {
	a, err := os.Stat(f.certFile)
	if err != nil {
		return "", err
	}
	b, err := os.Stat(f.keyFile)
	if err != nil {
		return "", err
	}
	return fmt.Sprint(a.Size(), a.ModTime().UnixNano(), b.Size(), b.ModTime().UnixNano()), nil
}

// get is tls.Config.GetCertificate.
func (f *fileCert) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if now := f.now(); now.Sub(f.checked) >= f.every {
		f.checked = now
		f.reload()
	}
	return f.cert, nil
}

func (f *fileCert) reload() {
	stamp, err := f.stampNow()
	if err != nil || stamp == f.stamp {
		if err != nil && f.bad != err.Error() {
			f.bad = err.Error()
			f.log.Warn("certificate files unreadable; serving the one read before", "err", err)
		}
		return
	}
	c, err := tls.LoadX509KeyPair(f.certFile, f.keyFile)
	if err != nil {
		if f.bad != stamp {
			f.bad = stamp
			f.log.Warn("changed certificate files do not load; serving the one read before", "err", err)
		}
		return
	}
	f.cert, f.stamp, f.bad = &c, stamp, ""
	f.log.Info("read the changed certificate files", "cert_file", f.certFile)
}
