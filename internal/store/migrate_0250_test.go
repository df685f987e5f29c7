package store_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

// Migration 0250 keeps the users already there as they were: admins of
// every site, who may manage people.
func TestMigration0250KeepsUsersAdmins(t *testing.T) {
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
			if err := db.TestMigrateBelow(ctx, 250); err != nil {
				t.Fatal(err)
			}
			if err := db.TestExec(ctx, `INSERT INTO users (id, email, password_hash, lang, created_at, updated_at)
				VALUES ('u_old', 'old@x.example', 'h', '', 1, 1)`); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Migrate(ctx, time.Now); err != nil {
				t.Fatal(err)
			}
			u, err := db.UserByID(ctx, "u_old")
			if err != nil {
				t.Fatal(err)
			}
			if !u.IsAdmin() || !u.AllSites || !u.MaySee("any") || !u.LastLogin.IsZero() {
				t.Errorf("the user after 0250: %+v", u)
			}
		})
	}
}
