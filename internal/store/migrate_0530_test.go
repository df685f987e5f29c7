package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestMigration0530SearchByDayOfLeadsThere: on a database of the shape
// before migration 0530, with leads over 300 days, a search pages through
// its matches newest first after it, each once, and so it does with leads
// stored after it; on PostgreSQL the index is leads_search_days (keyed by
// day and text, its pending list 1 MB) and leads_search is gone.
func TestMigration0530SearchByDayOfLeadsThere(t *testing.T) {
	eachBelow(t, 530, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a")
		// i's time: one lead every 7 hours back from now; every third
		// lead has the name, every tenth "veneer".
		at := func(i int) time.Time { return now.Add(-time.Duration(i) * 7 * time.Hour) }
		insert := func(i int) {
			t.Helper()
			name, msg := "Ece Demir", "price"
			if i%3 == 0 {
				name = "Deniz Kaya"
			}
			if i%10 == 0 {
				msg = "veneer price"
			}
			if err := db.TestExec(ctx, `INSERT INTO leads (id, site_id, event_id, name, email, phone, phone_key, message,
				submitted_at, received_at, verdict) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				fmt.Sprintf("ld_%04d", i), "a", fmt.Sprintf("ev%d", i), name, fmt.Sprintf("m%04d@x.example", i),
				"", "", msg, at(i).UnixMilli(), at(i).UnixMilli(), "clean"); err != nil {
				t.Fatal(err)
			}
		}
		const n = 1000
		for i := range n {
			insert(i)
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		if db.Dialect() == store.Postgres {
			def, err := db.TestQueryString(ctx, `SELECT string_agg(indexname || ': ' || indexdef, '; ') FROM pg_indexes
				WHERE schemaname = current_schema() AND tablename = 'leads' AND indexname LIKE 'leads_search%'`)
			if err != nil || !strings.HasPrefix(def, "leads_search_days: ") || strings.Contains(def, ";") ||
				!strings.Contains(def, "ARRAY[(received_at / 86400000)]") || !strings.Contains(def, "gin_trgm_ops") ||
				!strings.Contains(def, "gin_pending_list_limit='1024'") {
				t.Errorf("search indexes: %q (%v), want leads_search_days alone, by day and trigrams, its pending list 1 MB", def, err)
			}
		}
		// want: the leads from newest to n-1 having term, newest (the
		// lowest i) first; leads stored after the migration are newer,
		// from -1 down.
		want := func(term string, newest int) string {
			var ids []string
			for i := newest; i < n; i++ {
				if term == "veneer" && i%10 == 0 || term == "deniz kaya" && i%3 == 0 {
					ids = append(ids, fmt.Sprintf("ld_%04d", i))
				}
			}
			return strings.Join(ids, ",")
		}
		paged := func(term string) string {
			return strings.Join(pagedIDs(t, ctx, db, store.LeadFilter{Search: term, Limit: 7}), ",")
		}
		for _, term := range []string{"deniz kaya", "veneer"} {
			if got := paged(term); got != want(term, 0) {
				t.Errorf("%q after the migration:\n%s\nwant\n%s", term, got, want(term, 0))
			}
		}
		for i := -1; i >= -100; i-- {
			insert(i)
		}
		for _, term := range []string{"deniz kaya", "veneer"} {
			if got := paged(term); got != want(term, -100) {
				t.Errorf("%q with leads stored after it:\n%s\nwant\n%s", term, got, want(term, -100))
			}
		}
	})
}
