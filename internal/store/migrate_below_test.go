package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

// eachBelow runs fn on each engine with a fresh database migrated to just
// below version, as an older binary left it: for tests of what a migration
// does to the rows already there. fn then calls db.Migrate itself.
func eachBelow(t *testing.T, version int, fn func(t *testing.T, ctx context.Context, db *store.DB)) {
	t.Helper()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dsn := "sqlite:" + filepath.Join(t.TempDir(), "up.db")
			if engine == "postgres" {
				dsn = storetest.PostgresDSN(t)
			}
			db, err := store.Open(ctx, dsn, store.Options{Secrets: storetest.Box(t)})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.TestMigrateBelow(ctx, version); err != nil {
				t.Fatal(err)
			}
			fn(t, ctx, db)
		})
	}
}

// idTextOfText lets a test read an id column as text with cleanads_idtext
// before migration 0630 as after it: on PostgreSQL the function is the
// migration's, for bytea, and this adds one for the text columns before.
// SQLite's binary has it for both.
func idTextOfText(t *testing.T, ctx context.Context, db *store.DB) {
	t.Helper()
	if db.Dialect() != store.Postgres {
		return
	}
	if err := db.TestExec(ctx, `CREATE OR REPLACE FUNCTION cleanads_idtext(s text) RETURNS text LANGUAGE sql IMMUTABLE AS 'SELECT s'`); err != nil {
		t.Fatal(err)
	}
}
