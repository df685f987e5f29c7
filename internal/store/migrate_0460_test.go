package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestMigration0460CountersFolded: on a database of the shape before
// migration 0460, with random counts of random days, names, dims and
// shards, every site's counters and campaign report counters read the same
// after it; on PostgreSQL every counter is one row (shard 0), a count
// added after it goes to its shard again, and the index the retention
// job's fold reads is there.
func TestMigration0460CountersFolded(t *testing.T) {
	eachBelow(t, 460, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Now().UTC()
		testkit.AddSites(t, db, now, "a", "b")
		rng := rand.New(rand.NewPCG(4, 60))
		names := []string{model.CounterVerdicts, "visits", "leads", "report_verdicts", "coverage_keys"}
		today := model.Day(now)
		for i := range 600 {
			site := []model.SiteID{"a", "b"}[rng.IntN(2)]
			c := model.Count{Name: names[rng.IntN(len(names))], Dim: fmt.Sprint("d", rng.IntN(3)), N: int64(rng.IntN(5) - 1)}
			if err := db.CountersAdd(ctx, site, today-int64(rng.IntN(10)), fmt.Sprintf("ld_%03d", i), c); err != nil {
				t.Fatal(err)
			}
		}
		read := func() map[model.SiteID][2]model.Counters { return sitesCounters(t, ctx, db, today) }
		rows := func(where string, args ...any) string {
			t.Helper()
			n, err := db.TestQueryString(ctx, `SELECT CAST(COUNT(*) AS TEXT) FROM site_counters WHERE `+where, args...)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		before := read()
		if db.Dialect() == store.Postgres && rows("day < ? AND shard <> 0", today-1) == "0" {
			t.Fatal("no shard rows of past days before the migration: the test proves nothing")
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		if after := read(); !reflect.DeepEqual(after, before) {
			t.Errorf("counters after the migration\n%v\nwant\n%v", after, before)
		}
		if db.Dialect() == store.SQLite {
			return
		}
		if n := rows("shard <> 0"); n != "0" {
			t.Errorf("%s shard rows after the migration", n)
		}
		for i := range 40 {
			if err := db.CountersAdd(ctx, "a", today, fmt.Sprintf("ld_new%02d", i), model.Count{Name: "visits", N: 1}); err != nil {
				t.Fatal(err)
			}
		}
		if rows("day = ? AND shard <> 0", today) == "0" {
			t.Error("today's counts after the migration all went to one row: concurrent intakes would wait on it")
		}
		if got := read()["a"][0].Sum("visits", "*", today, today); got != before["a"][0].Sum("visits", "*", today, today)+40 {
			t.Errorf("today's visits after 40 more: %d", got)
		}
		if n, err := db.TestQueryString(ctx, `SELECT CAST(COUNT(*) AS TEXT) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'site_counters_unfolded'`); err != nil || n != "1" {
			t.Errorf("site_counters_unfolded: %s %v", n, err)
		}
	})
}
