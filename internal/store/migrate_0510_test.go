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

// TestMigration0510SearchOrderOfLeadsThere: on a database of the shape
// before migration 0510, with leads stored out of their time order (an
// import of older ones after newer, a lead from the future first), a
// search pages through its matches by (received_at, id) after it, each
// once, and so it does with leads stored after it. On SQLite each block's
// bound is at least the newest time at or below it, built from the leads
// there and kept by the trigger.
func TestMigration0510SearchOrderOfLeadsThere(t *testing.T) {
	eachBelow(t, 510, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a")
		// i's time: the first in a year, then the newest first for 300,
		// then 300 older ones, five to a minute.
		at := func(i int) time.Time {
			switch {
			case i == 0:
				return now.Add(365 * 24 * time.Hour)
			case i <= 300:
				return now.Add(time.Duration(i/5) * time.Minute)
			}
			return now.Add(-time.Duration(i/5) * time.Minute)
		}
		insert := func(i int) {
			t.Helper()
			if err := db.TestExec(ctx, `INSERT INTO leads (id, site_id, event_id, name, email, phone, phone_key, message,
				submitted_at, received_at, verdict) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				fmt.Sprintf("ld_%03d", i), "a", fmt.Sprintf("ev%d", i), "Deniz Kaya", fmt.Sprintf("m%03d@x.example", i),
				"", "", "word", at(i).UnixMilli(), at(i).UnixMilli(), "clean"); err != nil {
				t.Fatal(err)
			}
		}
		const n = 600
		for i := range n {
			insert(i)
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		// want: every lead from n-1 down, in the order of their times.
		want := func(n int) string {
			var ids []string
			ids = append(ids, "ld_000")
			for i := 300; i >= 1; i-- {
				ids = append(ids, fmt.Sprintf("ld_%03d", i))
			}
			for i := 301; i < n; i++ {
				ids = append(ids, fmt.Sprintf("ld_%03d", i))
			}
			// Same-minute leads come by id, newest (greatest) first.
			for s := 1; s < len(ids); s++ {
				for j := s; j > 1 && at(idNum(ids[j])).Equal(at(idNum(ids[j-1]))) && ids[j] > ids[j-1]; j-- {
					ids[j], ids[j-1] = ids[j-1], ids[j]
				}
			}
			return strings.Join(ids, ",")
		}
		paged := func() string {
			t.Helper()
			return strings.Join(pagedIDs(t, ctx, db, store.LeadFilter{Search: "deniz kaya", Limit: 37}), ",")
		}
		if got := paged(); got != want(n) {
			t.Errorf("after the migration:\n%s\nwant\n%s", got, want(n))
		}
		if db.Dialect() == store.SQLite {
			bad, err := db.TestQueryString(ctx, `SELECT COUNT(*) FROM leads l WHERE received_at >
				(SELECT upto FROM lead_search_order WHERE block <= l.rowid >> 6 ORDER BY block DESC LIMIT 1)`)
			if err != nil || bad != "0" {
				t.Errorf("leads newer than their block's bound: %s (%v)", bad, err)
			}
		}
		for i := n; i < n+200; i++ {
			insert(i)
		}
		if got := paged(); got != want(n+200) {
			t.Errorf("with leads stored after it:\n%s\nwant\n%s", got, want(n+200))
		}
	})
}

func idNum(id string) int {
	var i int
	fmt.Sscanf(id, "ld_%d", &i)
	return i
}
