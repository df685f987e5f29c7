package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// Migration 0280 moves Meta's pause from the site's row to
// destination_pauses, with its words and time: a site paused before keeps
// waiting for its owner, one that was not stays free.
func TestMigration0280MovesMetaPause(t *testing.T) {
	eachBelow(t, 280, func(t *testing.T, ctx context.Context, db *store.DB) {
		for _, q := range []string{
			`INSERT INTO sites (id, name, api_key_hash, pinned, settings, access_token, paused_reason, paused_at, created_at, updated_at)
				VALUES ('a', 'A', '', 0, '{}', '', 'Meta refused the token', 5000, 1, 2)`,
			`INSERT INTO sites (id, name, api_key_hash, pinned, settings, access_token, paused_reason, paused_at, created_at, updated_at)
				VALUES ('b', 'B', '', 0, '{}', '', '', NULL, 1, 2)`,
		} {
			if err := db.TestExec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		p, err := db.DestinationPauseOf(ctx, model.Share{Site: "a", Destination: model.DestinationMeta})
		if err != nil || p.Reason != "Meta refused the token" || p.At.UnixMilli() != 5000 {
			t.Fatalf("a's pause: %+v %v", p, err)
		}
		if s, err := db.SiteByID(ctx, "a"); err != nil || s.PausedReason != "Meta refused the token" {
			t.Fatalf("site a: %+v %v", s, err)
		}
		if s, err := db.SiteByID(ctx, "b"); err != nil || s.PausedReason != "" {
			t.Fatalf("site b: %+v %v", s, err)
		}
	})
}
