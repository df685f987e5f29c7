package store

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cleanads/cleanads/internal/secret"
)

// CertGet returns what is stored under key and when it was, or
// model.ErrNotFound. The certificate storage holds the ACME account, the
// certificates, their keys and metadata under path-like keys such as
// certificates/<ca>/t.example.com/t.example.com.crt.
func (q Q) CertGet(ctx context.Context, key string) (value []byte, modified time.Time, err error) {
	var at int64
	if err := q.queryRow(ctx, `/* Store.CertGet */ SELECT value, modified_at FROM cert_items WHERE key = ?`, key).Scan(&value, &at); err != nil {
		return nil, time.Time{}, notFound(err, "certificate item "+key)
	}
	if secret.IsSealed(string(value)) {
		if q.box == nil {
			return nil, time.Time{}, fmt.Errorf("store: certificate item %s is encrypted and no secret_key is set", key)
		}
		plain, err := q.box.Open(certContext(key), string(value))
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("store: certificate item %s: %w", key, err)
		}
		value = []byte(plain)
	}
	return value, time.UnixMilli(at).UTC(), nil
}

// certContext binds a sealed private key to its key: a value copied under
// another key does not open.
func certContext(key string) string { return "certificate item:" + key }

// CertPut stores value under key, replacing what was there. Private keys
// (the account's and the certificates', keys ending .key) are encrypted
// with the server's secret key when there is one, as Meta tokens are: a
// copy of the database alone does not let anyone serve the domain.
func (q Q) CertPut(ctx context.Context, key string, value []byte, now time.Time) error {
	if q.box != nil && strings.HasSuffix(key, ".key") && len(value) > 0 {
		value = []byte(q.box.Seal(certContext(key), string(value)))
	}
	return q.certPut(ctx, key, value, now)
}

func (q Q) certPut(ctx context.Context, key string, value []byte, now time.Time) error {
	if value == nil {
		value = []byte{}
	}
	_, err := q.exec(ctx, `/* Store.CertPut */ INSERT INTO cert_items (key, value, modified_at) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, modified_at = excluded.modified_at`, key, value, now.UnixMilli())
	if err != nil {
		return fmt.Errorf("store: certificate item %s: %w", key, err)
	}
	return nil
}

// CertDelete removes key and every key under it (key/...); removing what
// is not there is no error.
func (q Q) CertDelete(ctx context.Context, key string) error {
	dir := key + "/"
	_, err := q.exec(ctx, `/* Store.CertDelete */ DELETE FROM cert_items WHERE key = ? OR substr(key, 1, ?) = ?`,
		key, utf8.RuneCountInString(dir), dir)
	if err != nil {
		return fmt.Errorf("store: delete certificate item %s: %w", key, err)
	}
	return nil
}

// CertKeys returns every key under prefix (prefix/...), in order; "" is
// every key.
func (q Q) CertKeys(ctx context.Context, prefix string) ([]string, error) {
	dir := prefix + "/"
	if prefix == "" {
		dir = ""
	}
	// substr rather than LIKE: keys hold _ and the comparison must not
	// depend on the database's collation.
	rows, err := q.query(ctx, `/* Store.CertKeys */ SELECT key FROM cert_items WHERE substr(key, 1, ?) = ? ORDER BY key`,
		utf8.RuneCountInString(dir), dir)
	return scanAll(rows, err, "certificate keys", func(s scanner) (string, error) {
		var k string
		return k, s.Scan(&k)
	})
}

// CertLock takes the lock name for holder until now+ttl and reports
// whether it did: it is free, its last holder let its expiry pass (a node
// that died), or holder already has it, in which case the expiry moves on.
// The one statement decides, so two nodes can never both get it.
func (q Q) CertLock(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (bool, error) {
	res, err := q.exec(ctx, `/* Store.CertLock */ INSERT INTO cert_locks (name, holder, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
		WHERE cert_locks.holder = excluded.holder OR cert_locks.expires_at <= ?`,
		name, holder, now.Add(ttl).UnixMilli(), now.UnixMilli())
	if err != nil {
		return false, fmt.Errorf("store: certificate lock %s: %w", name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: certificate lock %s: %w", name, err)
	}
	return n == 1, nil
}

// CertUnlock gives back the lock name if holder has it; a lock that
// expired and went to another holder stays theirs.
func (q Q) CertUnlock(ctx context.Context, name, holder string) error {
	if _, err := q.exec(ctx, `/* Store.CertUnlock */ DELETE FROM cert_locks WHERE name = ? AND holder = ?`, name, holder); err != nil {
		return fmt.Errorf("store: certificate unlock %s: %w", name, err)
	}
	return nil
}
