package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestCountersTwoNodesOnePostgres: two store handles on one PostgreSQL
// schema (two nodes) record the outcomes of the Meta events each claimed,
// many transactions at once, each touching the same readiness counter rows
// of a few sites and days in a random order, while both take in leads that
// count in the same sites' and days' lead, verdict and readiness counters.
// No call fails (a deadlock would abort one, and an outcome not recorded
// is an event sent twice), none loses a row, and every counter equals a
// recount. Meanwhile a third handle folds the days' counter shards again
// and again, as the hourly retention job does with past days: no write
// waits on it long enough to fail, and it neither loses nor doubles a
// count.
func TestCountersTwoNodesOnePostgres(t *testing.T) {
	dsn := storetest.PostgresMigratedDSN(t)
	nodes := map[string]*store.DB{"node-a": storetest.Open(t, dsn), "node-b": storetest.Open(t, dsn)}
	ctx := context.Background()
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	sites := []model.SiteID{"dent", "hair"}
	db := nodes["node-a"]
	testkit.AddSites(t, db, start.AddDate(0, 0, -1), sites...)

	// A lead of a random site and one of three days, with its Meta Lead
	// event: pending, or (intake only) built in dry run, which counts at
	// once.
	insert := func(db *store.DB, rng *rand.Rand, i int, dry bool) error {
		site := sites[rng.IntN(len(sites))]
		at := start.Add(time.Duration(rng.Int64N(int64(3 * 24 * time.Hour))))
		id := model.LeadID(fmt.Sprintf("ld_c%05d", i))
		l := testkit.Lead(site, id, at, func(l *model.Lead) {
			l.Phone = fmt.Sprintf("+9053242%05d", i)
			l.Decision = model.Decision{Verdict: model.VerdictClean, DecidedBy: model.DecidedByRules}
		})
		state := model.DeliveryPending
		if dry && rng.IntN(2) == 0 {
			state = model.DeliveryDryRun
		}
		return db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.LeadInsert(ctx, l); err != nil {
				return err
			}
			_, err := tx.DeliveryInsert(ctx, &model.Delivery{ID: "dl_" + string(id), SiteID: site, LeadID: id, Kind: model.KindLead,
				EventName: "Lead", EventID: string(id), PixelID: "111", Payload: []byte(`{}`), State: state, NextAt: at,
				Destination: model.DestinationMeta, DeadlineAt: at.Add(365 * 24 * time.Hour), CreatedAt: at, UpdatedAt: at})
			return err
		})
	}
	const seeded = 1200
	rng := rand.New(rand.NewPCG(33, 370))
	for i := range seeded {
		if err := insert(db, rng, i, false); err != nil {
			t.Fatal(err)
		}
	}
	now := start.Add(10 * 24 * time.Hour)
	claimed := map[string][]*model.Delivery{}
	for name, db := range nodes {
		ds, err := db.DeliveryClaim(ctx, name, now, now.Add(time.Hour), seeded/2, nil)
		if err != nil || len(ds) != seeded/2 {
			t.Fatalf("%s claimed %d events: %v", name, len(ds), err)
		}
		claimed[name] = ds
	}

	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		errs   []error
		lost   int
		intake = seeded
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for name, db := range nodes {
		// Each event sent at a time of its own: a slice each, so one
		// record's transaction adds to the counters of every site and
		// day its events fall on, in the order they come.
		ds := claimed[name]
		r := rand.New(rand.NewPCG(uint64(len(name)), uint64(name[len(name)-1])))
		r.Shuffle(len(ds), func(i, j int) { ds[i], ds[j] = ds[j], ds[i] })
		for _, d := range ds {
			sent := d.CreatedAt.Add(time.Duration(r.Int64N(int64(2 * 24 * time.Hour))))
			d.State, d.SentAt = model.DeliverySent, &sent
		}
		batches := make(chan []*model.Delivery, len(ds))
		for b := range slices.Chunk(ds, 24) {
			batches <- b
		}
		close(batches)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for b := range batches {
					n, err := db.DeliveryRecord(ctx, name, b, now)
					if err != nil {
						fail(fmt.Errorf("%s: record: %w", name, err))
					}
					mu.Lock()
					lost += n
					mu.Unlock()
				}
			}()
		}
		for w := range 2 {
			wg.Add(1)
			first := intake
			intake += 150
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(first), uint64(w)))
				for i := first; i < first+150; i++ {
					if err := insert(db, r, i, true); err != nil {
						fail(fmt.Errorf("%s: intake: %w", name, err))
					}
				}
			}()
		}
	}
	folder := storetest.Open(t, dsn)
	foldDone, folded := make(chan struct{}), make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-foldDone:
				folded <- n
				return
			default:
			}
			k, err := folder.CountersFold(ctx, model.Day(start)+6)
			if err != nil {
				fail(fmt.Errorf("fold: %w", err))
			}
			n += k
		}
	}()
	wg.Wait()
	close(foldDone)
	if n := <-folded; n == 0 {
		t.Error("the fold never folded a row while the nodes wrote: the test proves nothing of it")
	}
	for i, err := range errs {
		if i == 5 {
			t.Errorf("... and %d more", len(errs)-5)
			break
		}
		t.Error(err)
	}
	if lost != 0 {
		t.Errorf("%d outcomes found no lease", lost)
	}

	// Every counter equals a recount of what was stored, folded again or
	// not.
	first, last := model.Day(start), model.Day(start)+5
	for _, site := range sites {
		got, err := db.Counters(ctx, site, first, last)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := folder.CountersFold(ctx, last+1); err != nil {
			t.Fatal(err)
		}
		if left, err := folder.TestQueryString(ctx, `SELECT CAST(COUNT(*) AS TEXT) FROM site_counters WHERE shard <> 0`); err != nil || left != "0" {
			t.Errorf("shard rows left after a fold with no writer: %s %v", left, err)
		}
		if again, err := db.Counters(ctx, site, first, last); err != nil || fmt.Sprint(again) != fmt.Sprint(got) {
			t.Errorf("%s: the fold changed the counters: %v %v", site, err, again)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.CountersRebuild(ctx, site, first, last) }); err != nil {
			t.Fatal(err)
		}
		want, err := db.Counters(ctx, site, first, last)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: counters\n%v\nrecount\n%v", site, got, want)
		}
		uploaded := 0
		for _, c := range want {
			if c.Name == model.CounterReadyUploaded {
				uploaded += int(c.N)
			}
		}
		if uploaded < seeded/4 {
			t.Errorf("%s: %d leads uploaded: the test sent too little to mean anything", site, uploaded)
		}
	}
}

// TestOutcomeRecordRetriesDeadlock: a transaction of the drain's record
// that PostgreSQL aborts for a deadlock or a serialization failure runs
// again, a few times, and counts once; any other failure, or one that
// goes on, is the caller's.
func TestOutcomeRecordRetriesDeadlock(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		testkit.AddSites(t, db, time.Now(), "dent")
		day := model.Day(time.Now())
		for _, c := range []struct {
			name    string
			fail    error
			fails   int
			calls   int
			counted int64
		}{
			{"deadlock twice", &pgconn.PgError{Code: "40P01"}, 2, 3, 1},
			{"serialization once", &pgconn.PgError{Code: "40001"}, 1, 2, 1},
			{"deadlock every time", &pgconn.PgError{Code: "40P01"}, 99, 5, 0},
			{"another error", &pgconn.PgError{Code: "23505"}, 1, 1, 0},
		} {
			t.Run(c.name, func(t *testing.T) {
				dim := c.name
				calls := 0
				err := db.TestInTxRetry(ctx, func(tx *store.Tx) error {
					calls++
					if err := tx.CountersAdd(ctx, "dent", day, "k", model.Count{Name: model.CounterVerdicts, Dim: dim, N: 1}); err != nil {
						return err
					}
					if calls <= c.fails {
						return fmt.Errorf("store: record deliveries: %w", c.fail)
					}
					return nil
				})
				if (err != nil) != (c.counted == 0) || calls != c.calls {
					t.Errorf("%d calls, %v", calls, err)
				}
				cs, err := db.Counters(ctx, "dent", day, day)
				if err != nil {
					t.Fatal(err)
				}
				if n := cs.Sum(model.CounterVerdicts, dim, day, day); n != c.counted {
					t.Errorf("counted %d times, want %d", n, c.counted)
				}
			})
		}
	})
}
