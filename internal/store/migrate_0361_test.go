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

// TestMigration0361CountersKept: on a database of the shape before
// migration 0361, with random counts of random days, names, dims and rows
// (shards), every site's counters and campaign report counters read the
// same after the migration, a new count still adds to its row, and on
// SQLite the table has no index of its own (it is its key's B-tree).
func TestMigration0361CountersKept(t *testing.T) {
	eachBelow(t, 361, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a", "b")
		rng := rand.New(rand.NewPCG(3, 61))
		names := []string{model.CounterVerdicts, "visits", "leads", "report_verdicts"}
		today := model.Day(now)
		for i := range 400 {
			site := []model.SiteID{"a", "b"}[rng.IntN(2)]
			c := model.Count{Name: names[rng.IntN(len(names))], Dim: fmt.Sprint("d", rng.IntN(3)), N: int64(1 + rng.IntN(3))}
			if err := db.CountersAdd(ctx, site, today-int64(rng.IntN(20)), fmt.Sprintf("ld_%03d", i), c); err != nil {
				t.Fatal(err)
			}
		}
		read := func() map[model.SiteID][2]model.Counters { return sitesCounters(t, ctx, db, today) }
		before := read()
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		if after := read(); !reflect.DeepEqual(after, before) {
			t.Errorf("counters after the migration\n%v\nwant\n%v", after, before)
		}
		if err := db.CountersAdd(ctx, "a", today, "ld_new", model.Count{Name: "visits", Dim: "d0", N: 5}); err != nil {
			t.Fatal(err)
		}
		after := read()
		sum := func(cs model.Counters) (n int64) {
			for _, c := range cs {
				if c.Day == today && c.Name == "visits" && c.Dim == "d0" {
					n += c.N
				}
			}
			return n
		}
		if got, want := sum(after["a"][0]), sum(before["a"][0])+5; got != want {
			t.Errorf("today's visits d0 after a count of 5: %d, want %d", got, want)
		}
		if db.Dialect() == store.SQLite {
			n, err := db.TestQueryString(ctx, `SELECT CAST(COUNT(*) AS TEXT) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'site_counters'`)
			if err != nil || n != "0" {
				t.Errorf("site_counters has %s indexes (%v), want none", n, err)
			}
		}
	})
}

// sitesCounters reads sites "a" and "b"'s counters and report counters of
// the 30 days up to today, failing when either is empty (a test that
// compares them would compare nothing).
func sitesCounters(t *testing.T, ctx context.Context, db *store.DB, today int64) map[model.SiteID][2]model.Counters {
	t.Helper()
	m := map[model.SiteID][2]model.Counters{}
	for _, site := range []model.SiteID{"a", "b"} {
		c, err := db.Counters(ctx, site, today-30, today)
		if err != nil {
			t.Fatal(err)
		}
		r, err := db.ReportCounters(ctx, site, today-30, today)
		if err != nil {
			t.Fatal(err)
		}
		if len(c) == 0 || len(r) == 0 {
			t.Fatalf("%s: %d counters, %d report counters: the test counts nothing", site, len(c), len(r))
		}
		m[site] = [2]model.Counters{c, r}
	}
	return m
}
