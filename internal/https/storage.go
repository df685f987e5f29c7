package https

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"

	"github.com/cleanads/cleanads/internal/model"
)

// Store is the database the certificates live in (internal/store on SQLite
// or PostgreSQL): items under path-like keys, and named locks with an
// expiry.
type Store interface {
	CertGet(ctx context.Context, key string) (value []byte, modified time.Time, err error)
	CertPut(ctx context.Context, key string, value []byte, now time.Time) error
	CertDelete(ctx context.Context, key string) error
	CertKeys(ctx context.Context, prefix string) ([]string, error)
	CertLock(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (bool, error)
	CertUnlock(ctx context.Context, name, holder string) error
}

// Lock timing: a held lock is extended every lockTTL/3, so it lapses only
// lockTTL after its node died; a waiting node asks again every lockPoll.
const (
	lockTTL  = 2 * time.Minute
	lockPoll = time.Second
)

// storage is certmagic's Storage over the database: every node of a
// PostgreSQL cluster sees the same account, certificates and challenge
// tokens, and its Lock is what lets only one of them order a certificate.
type storage struct {
	db  Store
	log *slog.Logger
	now func() time.Time

	mu   sync.Mutex
	held map[string]*heldLock
}

type heldLock struct {
	holder string
	stop   chan struct{}
	done   chan struct{}
}

var _ certmagic.Storage = (*storage)(nil)

func newStorage(db Store, log *slog.Logger, now func() time.Time) *storage {
	return &storage{db: db, log: log, now: now, held: map[string]*heldLock{}}
}

// Store puts value at key.
func (s *storage) Store(ctx context.Context, key string, value []byte) error {
	return s.db.CertPut(ctx, clean(key), value, s.now())
}

// Load returns key's value, or fs.ErrNotExist as certmagic expects.
func (s *storage) Load(ctx context.Context, key string) ([]byte, error) {
	v, _, err := s.db.CertGet(ctx, clean(key))
	if errors.Is(err, model.ErrNotFound) {
		return nil, fmt.Errorf("%s: %w", key, fs.ErrNotExist)
	}
	return v, err
}

// Delete removes key and everything under it.
func (s *storage) Delete(ctx context.Context, key string) error {
	return s.db.CertDelete(ctx, clean(key))
}

// Exists tells whether key is an item or a folder of items.
func (s *storage) Exists(ctx context.Context, key string) bool {
	_, err := s.Stat(ctx, key)
	return err == nil
}

// List returns the keys under prefix: its direct children (items and
// folders) or, recursive, every key and folder below it.
func (s *storage) List(ctx context.Context, prefix string, recursive bool) ([]string, error) {
	prefix = clean(prefix)
	keys, err := s.db.CertKeys(ctx, prefix)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s: %w", prefix, fs.ErrNotExist)
	}
	seen := map[string]bool{}
	var out []string
	add := func(k string) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	for _, k := range keys {
		rest := strings.TrimPrefix(k, prefix+"/")
		if prefix == "" {
			rest = k
		}
		parts := strings.Split(rest, "/")
		if !recursive {
			add(path.Join(prefix, parts[0]))
			continue
		}
		for i := range parts {
			add(path.Join(prefix, strings.Join(parts[:i+1], "/")))
		}
	}
	return out, nil
}

// Stat describes key: an item, or a folder when keys lie under it.
func (s *storage) Stat(ctx context.Context, key string) (certmagic.KeyInfo, error) {
	key = clean(key)
	v, at, err := s.db.CertGet(ctx, key)
	if err == nil {
		return certmagic.KeyInfo{Key: key, Modified: at, Size: int64(len(v)), IsTerminal: true}, nil
	}
	if !errors.Is(err, model.ErrNotFound) {
		return certmagic.KeyInfo{}, err
	}
	keys, err := s.db.CertKeys(ctx, key)
	if err != nil {
		return certmagic.KeyInfo{}, err
	}
	if len(keys) == 0 {
		return certmagic.KeyInfo{}, fmt.Errorf("%s: %w", key, fs.ErrNotExist)
	}
	return certmagic.KeyInfo{Key: key, IsTerminal: false}, nil
}

// Lock blocks until this process holds the lock name, then keeps it
// extended until Unlock. Each call holds under its own token, so two
// goroutines of one node exclude each other as two nodes do.
func (s *storage) Lock(ctx context.Context, name string) error {
	var b [8]byte
	_, _ = rand.Read(b[:])
	holder := hex.EncodeToString(b[:])
	for {
		got, err := s.db.CertLock(ctx, name, holder, s.now(), lockTTL)
		if err != nil {
			return err
		}
		if got {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(lockPoll):
		}
	}
	h := &heldLock{holder: holder, stop: make(chan struct{}), done: make(chan struct{})}
	go s.keep(name, h)
	s.mu.Lock()
	s.held[name] = h
	s.mu.Unlock()
	return nil
}

// keep extends a held lock until it is given back.
func (s *storage) keep(name string, h *heldLock) {
	defer close(h.done)
	t := time.NewTicker(lockTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), lockTTL/3)
			got, err := s.db.CertLock(ctx, name, h.holder, s.now(), lockTTL)
			cancel()
			if err != nil || !got {
				// The next tick tries again; the lock lapses only if
				// the database stays away for the whole ttl.
				s.log.Warn("could not extend a certificate lock", "lock", name, "held", got, "err", err)
			}
		}
	}
}

// Unlock gives back the lock name taken by Lock.
func (s *storage) Unlock(ctx context.Context, name string) error {
	s.mu.Lock()
	h := s.held[name]
	delete(s.held, name)
	s.mu.Unlock()
	if h == nil {
		return fmt.Errorf("https: unlock %s: not held", name)
	}
	close(h.stop)
	<-h.done
	return s.db.CertUnlock(ctx, name, h.holder)
}

// clean keeps keys in one spelling: no leading, trailing or doubled slash.
func clean(key string) string {
	key = strings.Trim(path.Clean("/"+key), "/")
	if key == "." {
		return ""
	}
	return key
}
