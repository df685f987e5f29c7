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

// TestMigration0400LeanSearchOfLeadsThere: on a database of the shape
// before migration 0400, with leads already searchable, every lead is
// found after it by its name, e-mail, phone (as written and its digits)
// and message as before, a term whose trigrams a lead has apart finds
// nothing, and the triggers keep the new index: a lead added is found, an
// erased one by nothing. On SQLite the index keeps no positions; on PostgreSQL its
// pending list is 1 MB at most.
func TestMigration0400LeanSearchOfLeadsThere(t *testing.T) {
	eachBelow(t, 400, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a")
		const n = 300
		insert := func(i int) {
			t.Helper()
			at := now.Add(-time.Duration(i) * time.Minute)
			if err := db.TestExec(ctx, `INSERT INTO leads (id, site_id, event_id, name, email, phone, phone_key, message,
				submitted_at, received_at, verdict) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				fmt.Sprintf("ld_%03d", i), "a", fmt.Sprintf("ev%d", i), fmt.Sprintf("ŞAHİN%03dx Öz", i),
				fmt.Sprintf("mail%03dx@old.example", i), fmt.Sprintf("0532 111 %04d", i), fmt.Sprintf("90532111%04d", i),
				fmt.Sprintf("word%03dx in a message, Deniz Kaya", i), at.UnixMilli(), at.UnixMilli(), "clean"); err != nil {
				t.Fatal(err)
			}
		}
		for i := range n {
			insert(i)
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		if db.Dialect() == store.SQLite {
			ddl, err := db.TestQueryString(ctx, `SELECT sql FROM sqlite_master WHERE name = 'lead_search'`)
			if err != nil || !strings.Contains(ddl, "detail = none") {
				t.Errorf("lead_search: %q (%v), want detail = none", ddl, err)
			}
		} else {
			// The index is leads_search_days since 0530, which keeps the limit.
			opts, err := db.TestQueryString(ctx, `SELECT coalesce(reloptions::text, '') FROM pg_class
				WHERE relname = 'leads_search_days' AND relnamespace = current_schema()::regnamespace`)
			if err != nil || !strings.Contains(opts, "gin_pending_list_limit=1024") {
				t.Errorf("leads_search_days options: %q (%v), want gin_pending_list_limit=1024", opts, err)
			}
		}
		search := func(q string) string {
			t.Helper()
			list, err := db.LeadList(ctx, store.LeadFilter{Search: q, Limit: 500})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, l := range list {
				ids = append(ids, string(l.ID))
			}
			return strings.Join(ids, ",")
		}
		for i := range n {
			id := fmt.Sprintf("ld_%03d", i)
			for _, q := range []string{fmt.Sprintf("şAHİN%03dx", i), fmt.Sprintf("MAIL%03dx@", i), fmt.Sprintf("111 %04d", i),
				fmt.Sprintf("532111%04d", i), fmt.Sprintf("word%03dx", i)} {
				if got := search(q); got != id {
					t.Errorf("search %q after the migration: %q, want %s", q, got, id)
				}
			}
		}
		if got := search("kaya deniz"); got != "" {
			t.Errorf("a term whose trigrams every lead has apart: %q", got)
		}
		if got := search("deniz kaya"); strings.Count(got, ",") != n-1 {
			t.Errorf("a term every lead has: %d leads", strings.Count(got, ",")+1)
		}
		insert(n)
		if got := search(fmt.Sprintf("word%03dx", n)); got != fmt.Sprintf("ld_%03d", n) {
			t.Errorf("a lead added after the migration: %q", got)
		}
		if _, err := db.LeadRedact(ctx, "ld_007", nil, nil, now); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"şAHİN007x", "mail007x@", "111 0007", "5321110007", "word007x"} {
			if got := search(q); got != "" {
				t.Errorf("erased lead found by %q: %q", q, got)
			}
		}
	})
}
