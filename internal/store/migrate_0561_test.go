package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestMigration0561CountersShardsApart: on a database of the shape before
// migration 0561, with random counts of random days, names, dims and
// shards (folded and not), every site's counters and campaign report
// counters read the same after it; on PostgreSQL the key is (site_id, day,
// shard, name, dim), still the one ON CONFLICT finds (a count added twice
// to a row adds up), and the fold still leaves one row a counter and past
// day.
func TestMigration0561CountersShardsApart(t *testing.T) {
	eachBelow(t, 561, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Now().UTC()
		today := model.Day(now)
		testkit.AddSites(t, db, now, "a", "b")
		rng := rand.New(rand.NewPCG(5, 61))
		names := []string{model.CounterVerdicts, "visits", "leads", "report_verdicts", "coverage_keys"}
		add := func(n int, prefix string) {
			t.Helper()
			for i := range n {
				site := []model.SiteID{"a", "b"}[rng.IntN(2)]
				c := model.Count{Name: names[rng.IntN(len(names))], Dim: fmt.Sprint("d", rng.IntN(3)), N: int64(rng.IntN(5) - 1)}
				if err := db.CountersAdd(ctx, site, today-int64(rng.IntN(10)), fmt.Sprintf("%s%03d", prefix, i), c); err != nil {
					t.Fatal(err)
				}
			}
		}
		add(300, "ld_a")
		if _, err := db.CountersFold(ctx, today-5); err != nil {
			t.Fatal(err)
		}
		add(300, "ld_b")
		rows := func(where string, args ...any) string {
			t.Helper()
			n, err := db.TestQueryString(ctx, `SELECT CAST(COUNT(*) AS TEXT) FROM site_counters WHERE `+where, args...)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		if db.Dialect() == store.Postgres && rows("day < ? AND shard <> 0", today-5) == "0" {
			t.Fatal("no shard rows of past days before the migration: the test proves nothing")
		}
		before := sitesCounters(t, ctx, db, today)
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		if after := sitesCounters(t, ctx, db, today); !reflect.DeepEqual(after, before) {
			t.Errorf("counters after the migration\n%v\nwant\n%v", after, before)
		}
		if db.Dialect() == store.SQLite {
			return
		}
		key, err := db.TestQueryString(ctx, `SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i
			JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace s ON s.oid = c.relnamespace
			WHERE s.nspname = current_schema() AND c.relname = 'site_counters_pkey' AND i.indisprimary`)
		if err != nil {
			t.Fatal(err)
		}
		if want := "(site_id, day, shard, name, dim)"; !strings.Contains(key, want) {
			t.Errorf("site_counters' key after the migration: %s, want %s", key, want)
		}
		for i := range 2 {
			if err := db.CountersAdd(ctx, "a", today, "ld_same", model.Count{Name: "visits", N: 1}); err != nil {
				t.Fatalf("count %d to one row after the migration: %v", i, err)
			}
		}
		if got, want := sitesCounters(t, ctx, db, today)["a"][0].Sum("visits", "*", today, today), before["a"][0].Sum("visits", "*", today, today)+2; got != want {
			t.Errorf("today's visits after 2 more: %d, want %d", got, want)
		}
		if _, err := db.CountersFold(ctx, today); err != nil {
			t.Fatal(err)
		}
		if n := rows("day < ? AND shard <> 0", today); n != "0" {
			t.Errorf("%s shard rows of past days after a fold", n)
		}
		split, err := db.TestQueryString(ctx, `SELECT CAST(COUNT(*) AS TEXT) FROM (SELECT 1 FROM site_counters
			WHERE day < ? GROUP BY site_id, day, name, dim HAVING COUNT(*) > 1) x`, today)
		if err != nil || split != "0" {
			t.Errorf("past days' counters in more than one row after a fold: %s %v", split, err)
		}
	})
}
