package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// coverageWant is the coverage counters a test expects: site, day, name
// and dim to n.
type coverageWant map[counterKey]int64

// randomUserData is a payload's user_data of random keys (the counted
// ones and one that is not), some holding nothing, and the names of those
// that hold something.
func randomUserData(rng *rand.Rand) (map[string]any, []string) {
	ud := map[string]any{}
	var have []string
	for _, k := range append([]string{"ct"}, model.CoverageKeys...) {
		if rng.IntN(2) == 0 {
			continue
		}
		if rng.IntN(4) == 0 {
			ud[k] = []any{"", []string{}, []string{""}, nil}[rng.IntN(4)]
			continue
		}
		if rng.IntN(2) == 0 {
			ud[k] = []string{"h" + k}
		} else {
			ud[k] = "v" + k
		}
		have = append(have, k)
	}
	return ud, have
}

// add counts an event carrying the keys have, sent or built on day.
func (w coverageWant) add(site model.SiteID, day int64, have []string) {
	w[counterKey{site, day, model.CounterCoverageEvents, ""}]++
	matchable := false
	for _, k := range have {
		if k == "ct" {
			continue
		}
		w[counterKey{site, day, model.CounterCoverageKeys, k}]++
		matchable = matchable || k == "lead_id" || k == "em" || k == "ph"
	}
	if matchable {
		w[counterKey{site, day, model.CounterCoverageMatchable, ""}]++
	}
}

// checkCoverage compares the coverage counters of sites over the days
// from first to last with want.
func checkCoverage(t *testing.T, db *store.DB, want coverageWant, first, last int64, sites ...model.SiteID) {
	t.Helper()
	got := coverageWant{}
	for _, site := range sites {
		cs, err := db.Counters(context.Background(), site, first, last)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			switch c.Name {
			case model.CounterCoverageEvents, model.CounterCoverageKeys, model.CounterCoverageMatchable:
				if c.N != 0 {
					got[counterKey{site, c.Day, c.Name, c.Dim}] = c.N
				}
			}
		}
	}
	n := 0
	for k, v := range want {
		if v != 0 {
			n++
			if got[k] != v {
				t.Errorf("%+v: %d, want %d", k, got[k], v)
			}
		}
	}
	if len(got) != n {
		t.Errorf("%d coverage counters, want %d: %v", len(got), n, got)
	}
	if n == 0 {
		t.Error("no coverage counted")
	}
}

// TestCoverageCountersEqualRecount: after random events of two sites put
// in the outbox (some built in dry run or sent at once, some for Google,
// some not JSON) and the drain's random outcomes (sent at a random later time, dry
// run, retry, dead, some recorded by a node that lost its lease), on both
// engines, the match-key coverage counters equal a recount of the events
// by their keys that hold something, on their upload day; retention's
// shrinking (the keys' names kept) changes none, a rebuild leaves them
// so and puts back what went wrong, and the readiness figures read them.
func TestCoverageCountersEqualRecount(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		sites := []model.SiteID{"dent", "hair"}
		testkit.AddSites(t, db, start.AddDate(0, 0, -1), sites...)
		rng := rand.New(rand.NewPCG(4, 30))
		want := coverageWant{}
		keys := map[string][]string{}
		for i := range 300 {
			site := sites[rng.IntN(len(sites))]
			at := start.Add(time.Duration(rng.Int64N(int64(10 * 24 * time.Hour))))
			ud, have := randomUserData(rng)
			payload, _ := json.Marshal(map[string]any{"event_name": "Lead", "user_data": ud})
			dest, state := model.DestinationMeta, model.DeliveryPending
			var sentAt *time.Time
			switch r := rng.IntN(10); {
			case r == 0:
				dest = model.DestinationGoogle
			case r == 1:
				state = model.DeliveryDryRun
			case r == 2:
				payload = []byte(`not json`)
			case r == 3:
				// Inserted already sent (as cmd/cleanads-scale's fill
				// does): the row keeps no sent time, so it counts on the
				// day it was made.
				sent := at.Add(time.Duration(1+rng.IntN(2)) * 24 * time.Hour)
				state, sentAt = model.DeliverySent, &sent
			}
			id := fmt.Sprintf("dl_c%04d", i)
			d := &model.Delivery{ID: id, SiteID: site, Kind: model.KindLead, EventName: "Lead", EventID: id, PixelID: "111",
				Payload: payload, State: state, NextAt: at, Destination: dest, DeadlineAt: at.Add(365 * 24 * time.Hour),
				CreatedAt: at, UpdatedAt: at, SentAt: sentAt}
			if _, err := db.DeliveryInsert(ctx, d); err != nil {
				t.Fatal(err)
			}
			if json.Valid(payload) {
				keys[id] = have
			}
			if state != model.DeliveryPending && json.Valid(payload) {
				want.add(site, model.Day(at), have)
			}
		}
		now := start.Add(30 * 24 * time.Hour)
		for round := 0; round < 20; round++ {
			owner := fmt.Sprintf("node-%d", round)
			ds, err := db.DeliveryClaim(ctx, owner, now, now.Add(time.Minute), 70, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(ds) == 0 {
				break
			}
			lost := rng.IntN(4) == 0
			for _, d := range ds {
				randomOutcome(rng, d, now)
				if !lost && d.Destination == model.DestinationMeta && json.Valid(d.Payload) &&
					(d.State == model.DeliverySent || d.State == model.DeliveryDryRun) {
					when := d.CreatedAt
					if d.SentAt != nil {
						when = *d.SentAt
					}
					want.add(d.SiteID, model.Day(when), keys[d.ID])
				}
			}
			// A node that lost its lease records nothing, and counts
			// nothing.
			if lost {
				if _, err := db.DeliveryRecord(ctx, "node-that-lost-its-lease", ds, now); err != nil {
					t.Fatal(err)
				}
				for _, d := range ds {
					d.State, d.NextAt, d.SentAt = model.DeliveryRetry, now, nil
				}
			}
			if _, err := db.DeliveryRecord(ctx, owner, ds, now); err != nil {
				t.Fatal(err)
			}
		}
		first, last := model.Day(start), model.Day(start)+20
		checkCoverage(t, db, want, first, last, sites...)

		// Retention shrinks the finished events to their keys' names (a
		// payload that is not JSON stays as it is).
		for i := range 300 {
			id := fmt.Sprintf("dl_c%04d", i)
			if i%2 == 0 || keys[id] == nil {
				continue
			}
			shrunk, _ := json.Marshal(map[string]any{"event_name": "Lead", "match_keys": keys[id]})
			if _, err := db.DeliveryShrink(ctx, id, shrunk, now); err != nil {
				t.Fatal(err)
			}
		}
		checkCoverage(t, db, want, first, last, sites...)
		for _, s := range sites {
			if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.CountersRebuild(ctx, s, first, last) }); err != nil {
				t.Fatal(err)
			}
		}
		checkCoverage(t, db, want, first, last, sites...)
		if err := db.CountersAdd(ctx, "dent", first+2, "x", model.Count{Name: model.CounterCoverageEvents, N: 5},
			model.Count{Name: model.CounterCoverageKeys, Dim: "em", N: -2}, model.Count{Name: model.CounterCoverageMatchable, N: 3}); err != nil {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.CountersRebuild(ctx, "dent", first, last) }); err != nil {
			t.Fatal(err)
		}
		checkCoverage(t, db, want, first, last, sites...)

		// The readiness page's figures of a period are the sums of its days.
		from, to := start.AddDate(0, 0, 2), start.AddDate(0, 0, 6)
		f, err := db.ReadinessFigures(ctx, "dent", from, to)
		if err != nil {
			t.Fatal(err)
		}
		var events, matchable, em int64
		for k, n := range want {
			if k.site != "dent" || k.day < model.Day(from) || k.day >= model.Day(to) {
				continue
			}
			switch {
			case k.name == model.CounterCoverageEvents:
				events += n
			case k.name == model.CounterCoverageMatchable:
				matchable += n
			case k.dim == "em":
				em += n
			}
		}
		if int64(f.Sampled) != events || int64(f.Matchable) != matchable || int64(f.Coverage["em"]) != em || events == 0 {
			t.Errorf("readiness: %d events, %d matchable, %d with em; want %d, %d, %d", f.Sampled, f.Matchable, f.Coverage["em"], events, matchable, em)
		}
	})
}
