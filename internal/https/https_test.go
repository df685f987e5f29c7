package https

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io/fs"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

var quiet = slog.New(slog.DiscardHandler)

// The storage behaves as certmagic's own file storage does: missing keys
// are fs.ErrNotExist, folders exist and list their children, delete takes
// a folder.
func TestStorage(t *testing.T) {
	ctx := context.Background()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := newStorage(db, quiet, time.Now)
		if _, err := s.Load(ctx, "acme/ca/users/a/a.json"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("load of nothing: %v", err)
		}
		if _, err := s.List(ctx, "acme/ca/users", false); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("list of nothing: %v", err)
		}
		for _, k := range []string{"acme/ca/users/a/a.json", "acme/ca/users/a/a.key", "acme/ca/users/b/b.json",
			"certificates/ca/t.example.com/t.example.com.crt"} {
			if err := s.Store(ctx, k, []byte("v:"+k)); err != nil {
				t.Fatal(err)
			}
		}
		if v, err := s.Load(ctx, "/acme/ca/users/a/a.json"); err != nil || string(v) != "v:acme/ca/users/a/a.json" {
			t.Fatalf("load: %q %v", v, err)
		}
		if got, err := s.List(ctx, "acme/ca/users", false); err != nil ||
			!slices.Equal(got, []string{"acme/ca/users/a", "acme/ca/users/b"}) {
			t.Fatalf("list: %q %v", got, err)
		}
		got, err := s.List(ctx, "acme", true)
		want := []string{"acme/ca", "acme/ca/users", "acme/ca/users/a", "acme/ca/users/a/a.json", "acme/ca/users/a/a.key",
			"acme/ca/users/b", "acme/ca/users/b/b.json"}
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("recursive list: %q %v, want %q", got, err, want)
		}
		if ki, err := s.Stat(ctx, "acme/ca/users/a"); err != nil || ki.IsTerminal {
			t.Errorf("stat of a folder: %+v %v", ki, err)
		}
		if ki, err := s.Stat(ctx, "acme/ca/users/a/a.key"); err != nil || !ki.IsTerminal || ki.Size == 0 || ki.Modified.IsZero() {
			t.Errorf("stat of a key: %+v %v", ki, err)
		}
		if !s.Exists(ctx, "acme/ca") || s.Exists(ctx, "acme/c") {
			t.Error("exists")
		}
		if err := s.Delete(ctx, "acme/ca/users/a"); err != nil {
			t.Fatal(err)
		}
		if s.Exists(ctx, "acme/ca/users/a/a.json") || !s.Exists(ctx, "acme/ca/users/b/b.json") {
			t.Error("delete of a folder")
		}
	})
}

// Two nodes (two storages on one database) want the same lock: the second
// gets it only once the first gives it back, or once the first's expiry
// passes (a node that died); a waiter whose context ends gives up.
func TestStorageLock(t *testing.T) {
	ctx := context.Background()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		a, b := newStorage(db, quiet, time.Now), newStorage(db, quiet, time.Now)
		if err := a.Lock(ctx, "issue_cert_t.example.com"); err != nil {
			t.Fatal(err)
		}
		// A waiter that gives up.
		cctx, cancel := context.WithCancel(ctx)
		gaveUp := make(chan error, 1)
		go func() { gaveUp <- b.Lock(cctx, "issue_cert_t.example.com") }()
		cancel()
		if err := <-gaveUp; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled waiter: %v", err)
		}

		var mu sync.Mutex
		var events []string
		event := func(e string) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		}
		locked := make(chan error, 1)
		go func() {
			err := b.Lock(ctx, "issue_cert_t.example.com")
			event("b locked")
			locked <- err
		}()
		event("a unlocking")
		if err := a.Unlock(ctx, "issue_cert_t.example.com"); err != nil {
			t.Fatal(err)
		}
		if err := <-locked; err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(events, []string{"a unlocking", "b locked"}) {
			t.Fatalf("b got the lock while a held it: %v", events)
		}
		if got, _ := db.CertLock(ctx, "issue_cert_t.example.com", "probe", time.Now(), time.Minute); got {
			t.Fatal("b's lock is not held in the database")
		}
		if err := b.Unlock(ctx, "issue_cert_t.example.com"); err != nil {
			t.Fatal(err)
		}
		if err := b.Unlock(ctx, "issue_cert_t.example.com"); err == nil {
			t.Error("unlock of a lock not held")
		}

		// a dies holding a lock: c, whose clock is past a's expiry, takes it.
		if err := a.Lock(ctx, "issue_cert_u.example.com"); err != nil {
			t.Fatal(err)
		}
		c := newStorage(db, quiet, func() time.Time { return time.Now().Add(lockTTL + time.Second) })
		if err := c.Lock(ctx, "issue_cert_u.example.com"); err != nil {
			t.Fatal(err)
		}
		c.Unlock(ctx, "issue_cert_u.example.com")
		a.Unlock(ctx, "issue_cert_u.example.com")
	})
}

func TestPlainHandler(t *testing.T) {
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	m := &Manager{}
	for _, tc := range []struct {
		method, target, host string
		port                 int
		code                 int
		location             string
	}{
		{"GET", "/t.js?v=1", "t.example.com", 443, 301, "https://t.example.com/t.js?v=1"},
		{"HEAD", "/admin/", "t.example.com:80", 443, 301, "https://t.example.com/admin/"},
		{"POST", "/v1/leads", "t.example.com", 443, 308, "https://t.example.com/v1/leads"},
		{"GET", "/", "t.example.com:8080", 8443, 301, "https://t.example.com:8443/"},
		{"GET", "/", "[::1]:80", 443, 301, "https://[::1]/"},
		{"GET", "/healthz", "t.example.com", 443, 200, ""},
		{"GET", "/readyz", "t.example.com", 443, 200, ""},
		{"GET", "/", "[::1]", 8443, 301, "https://[::1]:8443/"},
		{"GET", "/", "", 443, 400, ""},
		{"GET", "/", "evil.example/x?", 443, 400, ""},
		{"GET", "/", "a@evil.example", 443, 400, ""},
	} {
		r := httptest.NewRequest(tc.method, tc.target, nil)
		r.Host = tc.host
		w := httptest.NewRecorder()
		m.PlainHandler(app, tc.port).ServeHTTP(w, r)
		if w.Code != tc.code || w.Header().Get("Location") != tc.location {
			t.Errorf("%s %s on %q: %d %q, want %d %q", tc.method, tc.target, tc.host, w.Code, w.Header().Get("Location"), tc.code, tc.location)
		}
		if w.Header().Get("Strict-Transport-Security") != "" {
			t.Errorf("HSTS on plain HTTP")
		}
	}
	w := httptest.NewRecorder()
	HSTS(app).ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if w.Header().Get("Strict-Transport-Security") != "max-age=31536000" {
		t.Errorf("HSTS: %q", w.Header().Get("Strict-Transport-Security"))
	}
}

// writePair writes a self-signed certificate with the given serial and its
// key to the two files; keyOnly writes the key alone.
func writePair(t *testing.T, certFile, keyFile string, serial int64, keyOnly bool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), DNSNames: []string{"t.example.com"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	if !keyOnly {
		if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// The files are looked at no more often than FileCheck, read again when
// they changed, and a pair that does not load keeps the old certificate.
func TestFileCert(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	writePair(t, certFile, keyFile, 1, false)
	now := time.Unix(1_700_000_000, 0)
	m, err := New(Options{CertFile: certFile, KeyFile: keyFile, FileCheck: time.Minute, Logger: quiet,
		Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	cfg := m.TLSConfig()
	if cfg.MinVersion != tls.VersionTLS12 {
		t.Errorf("min version %x", cfg.MinVersion)
	}
	serial := func() int64 {
		t.Helper()
		c, err := cfg.GetCertificate(&tls.ClientHelloInfo{ServerName: "t.example.com"})
		if err != nil {
			t.Fatal(err)
		}
		leaf, _ := x509.ParseCertificate(c.Certificate[0])
		return leaf.SerialNumber.Int64()
	}
	writePair(t, certFile, keyFile, 2, false)
	if s := serial(); s != 1 {
		t.Errorf("read again before FileCheck passed: serial %d", s)
	}
	now = now.Add(time.Minute)
	if s := serial(); s != 2 {
		t.Errorf("after the change: serial %d, want 2", s)
	}
	writePair(t, certFile, keyFile, 3, true) // a key the certificate does not match
	now = now.Add(time.Minute)
	if s := serial(); s != 2 {
		t.Errorf("half-written pair: serial %d, want the old 2", s)
	}
	if err := os.Remove(certFile); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	if s := serial(); s != 2 {
		t.Errorf("missing file: serial %d, want the old 2", s)
	}
	writePair(t, certFile, keyFile, 4, false)
	now = now.Add(time.Minute)
	if s := serial(); s != 4 {
		t.Errorf("after the fix: serial %d, want 4", s)
	}

	if _, err := New(Options{CertFile: filepath.Join(dir, "none.pem"), KeyFile: keyFile}); err == nil {
		t.Error("New with a missing file")
	}
}
