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
