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

// TestMigration0410ListsReadPerSite: on a database of the shape before
// migration 0410, with events of three sites in several states, the
// indexes of every site's rows in time order are gone after it, and what
// read them still finds every row: the deliveries list of all sites (and
// of some, and of one site in every state) newest first page after page,
// the counts of all sites, the failures of all sites and retention's walk
// of the rows not redacted yet.
func TestMigration0410ListsReadPerSite(t *testing.T) {
	eachBelow(t, 410, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a", "b", "c")
		states := []string{"sent", "sent", "dead", "pending", "expired", "sent", "retry"}
		var want []string // every row, newest first
		for i := range 60 {
			id := fmt.Sprintf("d_%03d", i)
			site := []string{"a", "b", "c"}[i%3]
			// Two rows in each millisecond: ties are put in id order.
			created := now.Add(-time.Duration(60-i/2) * time.Hour).UnixMilli()
			if err := db.TestExec(ctx, `INSERT INTO delivery_events (id, site_id, event_name, event_id, pixel_id, payload, destination)
				VALUES (?, ?, 'Lead', ?, 'px', '{"event_name":"Lead"}', 'meta')`, id, site, id); err != nil {
				t.Fatal(err)
			}
			if err := db.TestExec(ctx, `INSERT INTO delivery_state (id, site_id, kind, state, attempts, next_at, deadline_at,
				created_at, updated_at, destination) VALUES (?, ?, 'lead', ?, 1, 0, ?, ?, 0, 'meta')`,
				id, site, states[i%len(states)], now.Add(time.Hour).UnixMilli(), created); err != nil {
				t.Fatal(err)
			}
			want = append(want, id)
		}
		slices.Reverse(want)
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		indexes := `SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name IN ('delivery_state_state_created', 'delivery_state_created')`
		if db.Dialect() == store.Postgres {
			indexes = `SELECT COUNT(*) FROM pg_indexes WHERE indexname IN ('delivery_state_state_created', 'delivery_state_created')
				AND schemaname = current_schema()`
		}
		if n, err := db.TestQueryString(ctx, `SELECT CAST((`+indexes+`) AS TEXT)`); err != nil || n != "0" {
			t.Errorf("indexes of every site's rows in time order after the migration: %s %v, want none", n, err)
		}
		ids := func(ds []*model.Delivery) []string {
			var out []string
			for _, d := range ds {
				out = append(out, d.ID)
			}
			return out
		}
		pages := func(f store.DeliveryFilter) []string {
			t.Helper()
			var got []string
			for range 20 {
				ds, err := db.DeliveryList(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, ids(ds)...)
				if len(ds) < f.Limit {
					return got
				}
				f.Before, f.BeforeID = ds[len(ds)-1].CreatedAt, ds[len(ds)-1].ID
			}
			t.Fatalf("more than 20 pages of %+v", f)
			return nil
		}
		if got := pages(store.DeliveryFilter{Limit: 7}); !slices.Equal(got, want) {
			t.Errorf("every site's list:\n%v\nwant\n%v", got, want)
		}
		var some, sent, ofA []string
		for _, id := range want {
			var i int
			fmt.Sscanf(id, "d_%d", &i)
			if i%3 != 2 {
				some = append(some, id)
			}
			if i%3 == 0 {
				ofA = append(ofA, id)
			}
			if states[i%len(states)] == "sent" && i%3 == 1 {
				sent = append(sent, id)
			}
		}
		if got := pages(store.DeliveryFilter{Only: []model.SiteID{"a", "b"}, Limit: 5}); !slices.Equal(got, some) {
			t.Errorf("sites a and b:\n%v\nwant\n%v", got, some)
		}
		if got := pages(store.DeliveryFilter{Site: "a", Limit: 4}); !slices.Equal(got, ofA) {
			t.Errorf("site a:\n%v\nwant\n%v", got, ofA)
		}
		if got := pages(store.DeliveryFilter{Site: "b", State: model.DeliverySent, Limit: 3}); !slices.Equal(got, sent) {
			t.Errorf("site b, sent:\n%v\nwant\n%v", got, sent)
		}
		if got, err := db.DeliveryList(ctx, store.DeliveryFilter{Site: "c", Only: []model.SiteID{"a"}}); err != nil || len(got) != 0 {
			t.Errorf("a site outside the user's: %v %v", ids(got), err)
		}
		counts, err := db.DeliveryStats(ctx, "", "", time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		wantCounts := map[model.DeliveryState]int{}
		for i := range 60 {
			wantCounts[model.DeliveryState(states[i%len(states)])]++
		}
		if fmt.Sprint(counts) != fmt.Sprint(wantCounts) {
			t.Errorf("counts of every site: %v, want %v", counts, wantCounts)
		}
		fails, err := db.DeliveryFailures(ctx, "", now)
		if err != nil {
			t.Fatal(err)
		}
		failed := map[string]int{}
		for _, f := range fails {
			failed[string(f.Site)+" "+string(f.State)] += f.N
		}
		wantFailed := map[string]int{}
		for i := range 60 {
			if st := states[i%len(states)]; st == "dead" || st == "retry" {
				wantFailed[[]string{"a", "b", "c"}[i%3]+" "+st]++
			}
		}
		if fmt.Sprint(failed) != fmt.Sprint(wantFailed) {
			t.Errorf("failures of every site: %v, want %v", failed, wantFailed)
		}
		ds, err := db.DeliveriesToRedact(ctx, now, now, 100)
		if err != nil {
			t.Fatal(err)
		}
		var finished []string
		for _, id := range want {
			var i int
			fmt.Sscanf(id, "d_%d", &i)
			if st := states[i%len(states)]; st != "pending" && st != "retry" {
				finished = append(finished, id)
			}
		}
		slices.Reverse(finished)
		if got := ids(ds); !slices.Equal(got, finished) {
			t.Errorf("to redact:\n%v\nwant\n%v", got, finished)
		}
	})
}
