package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/secret"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

// The certificate storage keeps bytes under path-like keys: put replaces,
// keys lists what is under a folder (and not its look-alike neighbours),
// delete takes a key and everything under it.
func TestCertItems(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		now := time.UnixMilli(1_700_000_000_000).UTC()
		if _, _, err := db.CertGet(ctx, "certificates/ca/a.example/a.example.crt"); !errors.Is(err, model.ErrNotFound) {
			t.Fatalf("get of nothing: %v, want ErrNotFound", err)
		}
		put := map[string]string{
			"certificates/ca/a.example/a.example.crt":  "cert a",
			"certificates/ca/a.example/a.example.key":  "key a",
			"certificates/ca/a.example_x/x.crt":        "look-alike",
			"certificates/ca/a.examplex/y.crt":         "look-alike too",
			"acme/ca/users/ops@example.com/ops.json":   "account",
			"certificates/ca/b.example/b.example.json": "meta b",
		}
		for k, v := range put {
			if err := db.CertPut(ctx, k, []byte(v), now); err != nil {
				t.Fatal(err)
			}
		}
		// Bytes come back as they went in, NUL and high bytes included.
		raw := []byte{0, 0xff, '\n', 'x'}
		if err := db.CertPut(ctx, "certificates/ca/a.example/a.example.crt", raw, now.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		v, at, err := db.CertGet(ctx, "certificates/ca/a.example/a.example.crt")
		if err != nil || string(v) != string(raw) || !at.Equal(now.Add(time.Second)) {
			t.Fatalf("get after replace: %q %v %v", v, at, err)
		}

		keys, err := db.CertKeys(ctx, "certificates/ca/a.example")
		if want := []string{"certificates/ca/a.example/a.example.crt", "certificates/ca/a.example/a.example.key"}; err != nil || !slices.Equal(keys, want) {
			t.Fatalf("keys under a.example: %q %v, want %q", keys, err, want)
		}
		if all, err := db.CertKeys(ctx, ""); err != nil || len(all) != len(put) {
			t.Fatalf("all keys: %q %v", all, err)
		}

		if err := db.CertDelete(ctx, "certificates/ca/a.example"); err != nil {
			t.Fatal(err)
		}
		if err := db.CertDelete(ctx, "certificates/ca/nothing"); err != nil {
			t.Fatalf("delete of nothing: %v", err)
		}
		keys, err = db.CertKeys(ctx, "certificates")
		want := []string{"certificates/ca/a.example_x/x.crt", "certificates/ca/a.examplex/y.crt", "certificates/ca/b.example/b.example.json"}
		if err != nil || !slices.Equal(keys, want) {
			t.Fatalf("after delete: %q %v, want %q", keys, err, want)
		}
		if err := db.CertDelete(ctx, "acme/ca/users/ops@example.com/ops.json"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.CertGet(ctx, "acme/ca/users/ops@example.com/ops.json"); !errors.Is(err, model.ErrNotFound) {
			t.Fatalf("deleted key: %v", err)
		}
	})
}

// Private keys are sealed with the server's key at rest, and open on the
// way out; certificates (public) stay as they are.
func TestCertKeysSealed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		const pemKey = "-----BEGIN EC PRIVATE KEY-----\nMHc...\n-----END EC PRIVATE KEY-----\n"
		now := time.Now()
		for _, k := range []string{"certificates/ca/t.example.com/t.example.com.key", "certificates/ca/t.example.com/t.example.com.crt"} {
			if err := db.CertPut(ctx, k, []byte(pemKey), now); err != nil {
				t.Fatal(err)
			}
			v, _, err := db.CertGet(ctx, k)
			if err != nil || string(v) != pemKey {
				t.Fatalf("%s: %q %v", k, v, err)
			}
			raw, err := db.TestQueryString(ctx, `SELECT value FROM cert_items WHERE key = ?`, k)
			if err != nil {
				t.Fatal(err)
			}
			if sealed := secret.IsSealed(raw) && !strings.Contains(raw, "PRIVATE KEY"); sealed != strings.HasSuffix(k, ".key") {
				t.Errorf("%s stored as %q", k, raw)
			}
		}
		// Copied under another key, a sealed value does not open.
		db.TestExec(ctx, `UPDATE cert_items SET key = 'acme/ca/users/x/x.key' WHERE key = 'certificates/ca/t.example.com/t.example.com.key'`)
		if _, _, err := db.CertGet(ctx, "acme/ca/users/x/x.key"); err == nil {
			t.Error("a sealed key opened under another name")
		}
	})
}

// Two holders (two nodes on one PostgreSQL, or two calls in one process)
// want the same lock: one gets it, the other does not until it is given
// back or its expiry passes; the holder can extend it; a stale holder's
// unlock does not free it for the new one.
func TestCertLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		// The holders are told apart by name only, as two nodes are.
		other := db
		now := time.UnixMilli(1_700_000_000_000)
		ttl := time.Minute
		lock := func(q *store.DB, holder string, at time.Time) bool {
			t.Helper()
			got, err := q.CertLock(ctx, "issue_cert_a.example", holder, at, ttl)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		if !lock(db, "node-a", now) {
			t.Fatal("free lock not taken")
		}
		if lock(other, "node-b", now.Add(time.Second)) {
			t.Fatal("second holder got a held lock")
		}
		// Another name is independent.
		if got, err := other.CertLock(ctx, "issue_cert_b.example", "node-b", now, ttl); err != nil || !got {
			t.Fatalf("other name: %v %v", got, err)
		}
		// The holder extends it: past the first expiry it is still a's.
		if !lock(db, "node-a", now.Add(50*time.Second)) {
			t.Fatal("holder could not extend")
		}
		if lock(other, "node-b", now.Add(ttl+time.Second)) {
			t.Fatal("taken before the extended expiry")
		}
		// b giving back what it does not hold changes nothing.
		if err := other.CertUnlock(ctx, "issue_cert_a.example", "node-b"); err != nil {
			t.Fatal(err)
		}
		if lock(other, "node-b", now.Add(ttl+2*time.Second)) {
			t.Fatal("a non-holder's unlock freed the lock")
		}
		// a gives it back: b gets it at once.
		if err := db.CertUnlock(ctx, "issue_cert_a.example", "node-a"); err != nil {
			t.Fatal(err)
		}
		if !lock(other, "node-b", now.Add(ttl+3*time.Second)) {
			t.Fatal("unlocked lock not taken")
		}
		// b dies holding it: a takes it once the expiry passes, not before.
		at := now.Add(ttl + 3*time.Second)
		if lock(db, "node-a", at.Add(ttl-time.Millisecond)) {
			t.Fatal("taken before the dead holder's expiry")
		}
		if !lock(db, "node-a", at.Add(ttl)) {
			t.Fatal("a dead holder's lock was never freed")
		}
		// b, back from the dead, cannot unlock a's lock.
		if err := other.CertUnlock(ctx, "issue_cert_a.example", "node-b"); err != nil {
			t.Fatal(err)
		}
		if lock(other, "node-b", at.Add(ttl+time.Second)) {
			t.Fatal("stale holder's unlock freed the new holder's lock")
		}

		// Many holders race for a free lock at the same moment (on
		// PostgreSQL each on its own pooled connection): exactly one wins.
		const racers = 8
		won := make(chan string, racers)
		errs := make(chan error, racers)
		for i := range racers {
			go func() {
				holder := fmt.Sprintf("racer-%d", i)
				got, err := db.CertLock(ctx, "issue_cert_race.example", holder, now, ttl)
				if got {
					won <- holder
				}
				errs <- err
			}()
		}
		for range racers {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if len(won) != 1 {
			t.Fatalf("%d racers got the lock, want 1", len(won))
		}
	})
}
