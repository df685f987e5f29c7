package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// appendedIndexes are the B-trees migration 0560 fills to the brim on
// PostgreSQL: those whose entries arrive in key order.
var appendedIndexes = []string{
	"deliveries_pkey", "delivery_events_archived", "delivery_events_lead", "leads_click_kept", "leads_pkey",
	"leads_received", "leads_site_changed", "leads_site_received", "visitors_last_seen",
}

// TestMigration0560AppendedIndexesFull: on a database of the shape before
// migration 0560 with leads in it, the migration keeps every lead, each
// found by its id, and on PostgreSQL every appended index it names is
// there with fillfactor 100 (an index renamed or dropped by a later change
// fails here, where IF EXISTS let it pass). The
// leads are still read in time order after the index is rebuilt full.
func TestMigration0560AppendedIndexesFull(t *testing.T) {
	eachBelow(t, 560, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a", "b")
		const n = 400
		for i := range n {
			id := model.LeadID(fmt.Sprintf("ld_%04d", i))
			l := testkit.Lead([]model.SiteID{"a", "b"}[i%2], id, now.Add(time.Duration(i)*time.Minute))
			l.Verdict = model.VerdictClean
			if err := db.LeadInsert(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			id := model.LeadID(fmt.Sprintf("ld_%04d", i))
			if _, err := db.LeadByID(ctx, id); err != nil {
				t.Fatalf("lead %s after the migration: %v", id, err)
			}
		}
		if db.Dialect() != store.Postgres {
			return
		}
		full, err := db.TestQueryAll(ctx, `SELECT c.relname FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
			WHERE s.nspname = current_schema() AND c.relkind = 'i' AND 'fillfactor=100' = ANY (c.reloptions) ORDER BY c.relname`)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range appendedIndexes {
			if !slices.Contains(full, name) {
				t.Errorf("%s is not there with fillfactor 100 (those that are: %v)", name, full)
			}
		}
		if err := db.TestExec(ctx, `REINDEX INDEX leads_site_received`); err != nil {
			t.Fatal(err)
		}
		times, err := db.TestQueryAll(ctx, `SELECT id FROM leads WHERE site_id = 'a' AND received_at >= ? ORDER BY received_at LIMIT 3`,
			now.Add(100*time.Minute).UnixMilli())
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"ld_0100", "ld_0102", "ld_0104"}; !slices.Equal(times, want) {
			t.Errorf("site a's leads from minute 100 after the rebuild: %v, want %v", times, want)
		}
	})
}
