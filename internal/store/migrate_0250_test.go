package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/store"
)

// Migration 0250 keeps the users already there as they were: admins of
// every site, who may manage people.
func TestMigration0250KeepsUsersAdmins(t *testing.T) {
	eachBelow(t, 250, func(t *testing.T, ctx context.Context, db *store.DB) {
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
