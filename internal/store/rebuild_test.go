package store_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

// TestRebuildPlans checks on SQLite that each statement recounting a slice
// of days reads that slice's rows on an index by their day: none reads a
// whole table, nor all of a site's rows (an index searched on the site
// alone), nor builds an automatic index, so that a rebuild of many slices
// reads each row once. (Joined to the deliveries view, the readiness
// recount read every event of every site for each lead.)
func TestRebuildPlans(t *testing.T) {
	db := storetest.SQLite(t)
	plans, err := db.TestRebuildPlans(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) == 0 {
		t.Fatal("no statements")
	}
	for i, p := range plans {
		t.Logf("plan %d:\n%s", i, p)
		for _, line := range strings.Split(p, "\n") {
			line = strings.TrimSpace(line)
			// A CTE, a subquery's rows or json_each's are read whole, a
			// table never.
			scan := strings.HasPrefix(line, "SCAN ") && !strings.Contains(line, "VIRTUAL TABLE") &&
				!strings.HasPrefix(line, "SCAN v") && !strings.HasPrefix(line, "SCAN r")
			if scan || strings.Contains(line, "AUTOMATIC") || strings.HasSuffix(line, "(site_id=?)") {
				t.Errorf("statement %d does not read a slice's rows on an index: %q", i, line)
			}
		}
	}
}

// TestCountersRebuildBesideIntake: DB.CountersRebuild recounts a site's
// counters of 40 days a week at a time, each week its own transaction,
// while visits and leads of both sites and of all those days are stored
// (some in transactions that fail) and then verdicts change: afterwards
// the counters equal a recount of the rows, the ones that were wrong
// before the rebuild put right, none of the intake's lost or counted
// twice.
func TestCountersRebuildBesideIntake(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		sites := []model.SiteID{"dent", "hair"}
		days := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
		const span = 40
		for _, s := range sites {
			trackerSite(t, db, s)
			counterVisitors(t, db, s, days)
		}
		first, last := model.Day(days), model.Day(days)+span-1
		var (
			mu    sync.Mutex
			want  = recount{}
			kept  []*model.Lead
			rules = map[model.LeadID]model.Verdict{}
		)
		errFail := errors.New("the call fails after its rows")
		// intake stores n random visits and leads over the span's days, and
		// more while more is true.
		intake := func(g, n int, more func() bool) {
			rng := rand.New(rand.NewPCG(uint64(g), 11))
			for i := 0; i < n || more() && i < 1000; i++ {
				id := g*1000 + i
				site := sites[rng.IntN(len(sites))]
				// randomVisit and randomLead spread over 5 days from a
				// day of the span.
				from := days.Add(time.Duration(rng.IntN(span-5)) * 24 * time.Hour)
				var (
					v *model.Visit
					l *model.Lead
				)
				if rng.IntN(3) == 0 {
					l = randomLead(rng, id, site, from)
				} else {
					v = randomVisit(rng, id, site, from)
				}
				fail := rng.IntN(6) == 0
				err := db.InTx(ctx, func(tx *store.Tx) error {
					if v != nil {
						if err := tx.VisitInsert(ctx, v); err != nil {
							return err
						}
					} else if err := tx.LeadInsert(ctx, l); err != nil {
						return err
					}
					if fail {
						return errFail
					}
					return nil
				})
				switch {
				case fail && !errors.Is(err, errFail):
					t.Errorf("failing call: %v", err)
				case !fail && err != nil:
					t.Errorf("call: %v", err)
				case !fail:
					mu.Lock()
					if v != nil {
						want.visit(v)
					} else {
						want.lead(l)
						kept = append(kept, l)
						rules[l.ID] = l.Verdict
					}
					mu.Unlock()
				}
			}
		}
		intake(0, 150, func() bool { return false })
		// Counters gone wrong, on days of several slices.
		for _, d := range []int64{first, first + 9, first + 23, last} {
			if err := db.CountersAdd(ctx, "dent", d, "x", model.Count{Name: model.CounterVisits, N: 1000},
				model.Count{Name: model.CounterLeads, Dim: model.SourceWeb, N: -3}, model.Count{Name: model.CounterVerdicts, Dim: "junk", N: 2},
				model.Count{Name: model.CounterReasons, Dim: "PRICE_ONLY", N: 9}); err != nil {
				t.Fatal(err)
			}
		}
		// Two rebuilds of dent, the intake going on until both are done:
		// the second does not find it all stored and put right what the
		// first got wrong.
		var (
			wg         sync.WaitGroup
			rebuilding atomic.Bool
		)
		rebuilding.Store(true)
		for g := 1; g <= 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				intake(g, 30, rebuilding.Load)
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer rebuilding.Store(false)
			for range 2 {
				if err := db.CountersRebuild(ctx, "dent", first, last); err != nil {
					t.Error(err)
				}
			}
		}()
		wg.Wait()
		// Verdicts of leads already recounted change after the rebuild.
		randomVerdictChanges(t, db, rand.New(rand.NewPCG(5, 5)), kept, want)
		checkCounters(t, db, withAgreement(want, kept, rules), first, last, sites...)
		if len(kept) < 50 {
			t.Errorf("only %d leads stored", len(kept))
		}
	})
}
