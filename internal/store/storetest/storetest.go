// Package storetest hands each test a fresh, migrated database: SQLite in a
// temporary folder, or, when CLEANADS_TEST_POSTGRES holds a server's URL,
// PostgreSQL in a database of its own copied from a template migrated once
// (template.go). New gives "the engine under test" (CLEANADS_TEST_ENGINE),
// Each runs a test on every engine.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/secret"
	"github.com/cleanads/cleanads/internal/store"
)

// EnvPostgres names the variable holding the PostgreSQL server's URL, e.g.
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
const EnvPostgres = "CLEANADS_TEST_POSTGRES"

// EnvEngine names the variable choosing the engine under test: "sqlite"
// (the default) or "postgres".
const EnvEngine = "CLEANADS_TEST_ENGINE"

// Engine returns the engine under test.
func Engine() store.Dialect {
	if os.Getenv(EnvEngine) == string(store.Postgres) {
		return store.Postgres
	}
	return store.SQLite
}

// New returns a fresh migrated database on the engine under test.
func New(t testing.TB) *store.DB {
	t.Helper()
	return Open(t, MigratedDSN(t))
}

// DSN returns the address of a fresh, empty database on the engine under
// test, for tests that open it themselves (a serve command, two nodes). It
// is removed when the test ends.
func DSN(t testing.TB) string {
	t.Helper()
	if Engine() == store.Postgres {
		needPostgres(t)
		return PostgresDSN(t)
	}
	return SQLiteDSN(t)
}

// MigratedDSN returns the address of a fresh database on the engine under
// test, already migrated, for tests that open it themselves but do not
// test the migrations (a serve command, two nodes). It is removed when the
// test ends.
func MigratedDSN(t testing.TB) string {
	t.Helper()
	if Engine() == store.Postgres {
		needPostgres(t)
		return PostgresMigratedDSN(t)
	}
	dsn := SQLiteDSN(t)
	migrate(t, dsn)
	return dsn
}

// needPostgres fails the test when PostgreSQL is the engine under test but
// no server was given: the test must not skip then.
func needPostgres(t testing.TB) {
	t.Helper()
	if os.Getenv(EnvPostgres) == "" {
		t.Fatalf("%s=postgres needs %s to hold a PostgreSQL URL", EnvEngine, EnvPostgres)
	}
}

// SQLiteDSN returns the address of a fresh, empty SQLite database in a
// temporary folder.
func SQLiteDSN(t testing.TB) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "test.db")
}

// SecretKey is the secret_key of every test database: tokens are stored
// encrypted, as in production.
const SecretKey = "storetest-secret-key-0123456789abcdef"

// Box returns the box that seals the test databases' tokens.
func Box(t testing.TB) *secret.Box {
	t.Helper()
	b, err := testBox()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func testBox() (*secret.Box, error) { return secret.NewBox(SecretKey) }

// SQLite returns a fresh migrated SQLite database that is closed when the
// test ends.
func SQLite(t testing.TB) *store.DB {
	t.Helper()
	return Open(t, SQLiteDSN(t))
}

// Postgres returns a fresh migrated PostgreSQL database, a copy of the
// migrated template (PostgresMigratedDSN), dropped when the test ends.
// Without CLEANADS_TEST_POSTGRES the test is skipped.
func Postgres(t testing.TB) *store.DB {
	t.Helper()
	return Open(t, PostgresMigratedDSN(t))
}

// PostgresDSN creates an empty schema with a unique name and returns a URL
// whose search_path is that schema; the schema and everything in it are
// dropped when the test ends. Without CLEANADS_TEST_POSTGRES the test is
// skipped.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	base := postgresBase(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", EnvPostgres, err)
	}
	var b [8]byte
	rand.Read(b[:])
	schema := "cleanads_test_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("%s: %v", EnvPostgres, err)
	}
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, `CREATE SCHEMA `+schema); err != nil {
		admin.Close()
		t.Fatalf("create schema on %s: %v", u.Redacted(), err)
	}
	// Registered before the test opens the database, so it runs after the
	// database is closed.
	t.Cleanup(func() {
		defer admin.Close()
		if _, err := admin.ExecContext(ctx, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// migrate migrates the database at dsn and closes it.
func migrate(t testing.TB, dsn string) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, dsn, store.Options{Secrets: Box(t)})
	if err != nil {
		t.Fatalf("open %s: %v", store.RedactDSN(dsn), err)
	}
	defer db.Close()
	if _, err := db.Migrate(ctx, time.Now); err != nil {
		t.Fatalf("migrate: %v", err)
	}
}

// Open opens and migrates the database at dsn, closed when the test ends.
func Open(t testing.TB, dsn string) *store.DB {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, dsn, store.Options{Secrets: Box(t)})
	if err != nil {
		t.Fatalf("open %s: %v", store.RedactDSN(dsn), err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx, time.Now); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return db
}

// Each runs fn once per engine, as subtests named "sqlite" and "postgres";
// the PostgreSQL one skips without CLEANADS_TEST_POSTGRES.
func Each(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLite(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, Postgres(t)) })
}
