package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestMigration0395VisitsByTime: on a database of the shape before
// migration 0395, with visits over forty days, the visits recount of a
// day and retention's delete of the visits before a day find the same
// rows after the migration (visits_at a BRIN index on PostgreSQL) as
// before, and a new visit is found by both.
func TestMigration0395VisitsByTime(t *testing.T) {
	eachBelow(t, 395, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a")
		start := now.Add(-40 * 24 * time.Hour)
		for i := range 10 {
			if err := db.VisitorUpsert(ctx, &model.Visitor{SiteID: "a", ID: fmt.Sprintf("v_%02d", i), FirstSeen: start, LastSeen: now}); err != nil {
				t.Fatal(err)
			}
		}
		visit := func(i int, at time.Time) {
			t.Helper()
			v := &model.Visit{SiteID: "a", VisitorID: fmt.Sprintf("v_%02d", i%10), At: at, EventID: fmt.Sprintf("ev-%04d", i)}
			if err := db.VisitInsert(ctx, v); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 800 {
			visit(i, start.Add(time.Duration(i)*72*time.Minute))
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		if db.Dialect() == store.Postgres {
			kind, err := db.TestQueryString(ctx, `SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname = 'visits_at' AND c.relnamespace = current_schema()::regnamespace`)
			if err != nil || kind != "brin" {
				t.Errorf("visits_at is %q (%v), want brin", kind, err)
			}
		}
		visit(800, now)
		day := model.Day(now)
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.CountersRebuild(ctx, "a", day-45, day) }); err != nil {
			t.Fatal(err)
		}
		cs, err := db.Counters(ctx, "a", day-45, day)
		if err != nil {
			t.Fatal(err)
		}
		var total int64
		for _, c := range cs {
			if c.Name == "visits" {
				total += c.N
			}
		}
		if total != 801 {
			t.Errorf("visits recounted: %d, want 801", total)
		}
		// 72 minutes apart from start: those before start+20 days are the
		// first 400.
		n, err := db.VisitsDeleteBefore(ctx, start.Add(20*24*time.Hour))
		if err != nil || n != 400 {
			t.Errorf("retention deleted %d visits (%v), want 400", n, err)
		}
		if _, err := db.VisitByEventID(ctx, "a", "ev-0800"); err != nil {
			t.Errorf("the new visit: %v", err)
		}
	})
}
