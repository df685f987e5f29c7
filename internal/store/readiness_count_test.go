package store_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// randomReadiness stores leads of two sites over days from start, with
// their Meta events (the lead's, some qualified ones and CRM stages with
// theirs, some of another destination, some built in dry run at once) and
// records every claimed event with a random outcome (sent at a random
// later time, dry run, retry, dead, some by a node that lost its lease),
// through the store's own calls.
func randomReadiness(t *testing.T, db *store.DB, rng *rand.Rand, start time.Time, sites []model.SiteID, n int) []model.LeadID {
	t.Helper()
	ctx := context.Background()
	var ids []model.LeadID
	for i := range n {
		site := sites[rng.IntN(len(sites))]
		at := start.Add(time.Duration(rng.Int64N(int64(12 * 24 * time.Hour))))
		id := model.LeadID(fmt.Sprintf("ld_r%04d", i))
		l := testkit.Lead(site, id, at, func(l *model.Lead) {
			l.Phone = fmt.Sprintf("+9053241%05d", i)
			l.Decision = model.Decision{Verdict: randomVerdict(rng), DecidedBy: model.DecidedByRules}
		})
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.LeadInsert(ctx, l); err != nil {
				return err
			}
			event := func(kind, name string, when time.Time, state model.DeliveryState, dest string) error {
				d := &model.Delivery{ID: fmt.Sprintf("dl_%s_%s_%s", id, name, dest), SiteID: site, LeadID: id, Kind: kind, EventName: name,
					EventID: string(id) + name + dest, PixelID: "111", Payload: []byte(`{}`), State: state, NextAt: when, Destination: dest,
					DeadlineAt: when.Add(365 * 24 * time.Hour), CreatedAt: when, UpdatedAt: when}
				_, err := tx.DeliveryInsert(ctx, d)
				return err
			}
			if l.Verdict == model.VerdictJunk {
				return nil
			}
			state := model.DeliveryPending
			if rng.IntN(8) == 0 {
				state = model.DeliveryDryRun
			}
			if err := event(model.KindLead, "Lead", at, state, model.DestinationMeta); err != nil {
				return err
			}
			if rng.IntN(2) == 0 {
				q := at.Add(time.Duration(rng.Int64N(int64(3 * 24 * time.Hour))))
				if err := event(model.KindQualified, "QualifiedLead", q, model.DeliveryPending, model.DestinationMeta); err != nil {
					return err
				}
				if rng.IntN(3) == 0 {
					if err := event(model.KindQualified, "google_qualified", q, model.DeliveryPending, model.DestinationGoogle); err != nil {
						return err
					}
				}
			}
			for _, st := range []string{"meeting", model.StageWon} {
				if rng.IntN(3) != 0 {
					continue
				}
				sat := at.Add(time.Duration(rng.Int64N(int64(20 * 24 * time.Hour))))
				if _, err := tx.LeadStageInsert(ctx, &model.LeadStage{SiteID: site, LeadID: id, Stage: st, At: sat, EventName: "Stage" + st,
					EventID: "st-" + string(id) + st, CreatedAt: sat}); err != nil {
					return err
				}
				if err := event(model.KindStage+":"+st, "Stage"+st, sat, model.DeliveryPending, model.DestinationMeta); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// The drain: claim everything due, record a random outcome.
	now := start.Add(60 * 24 * time.Hour)
	for round := 0; ; round++ {
		owner := fmt.Sprintf("node-%d", round)
		ds, err := db.DeliveryClaim(ctx, owner, now, now.Add(time.Minute), 200, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) == 0 || round > 20 {
			break
		}
		by := owner
		if rng.IntN(5) == 0 {
			by = "node-that-lost-its-lease"
		}
		for _, d := range ds {
			randomOutcome(rng, d, now)
		}
		if _, err := db.DeliveryRecord(ctx, by, ds, now); err != nil {
			t.Fatal(err)
		}
		if by != owner {
			if _, err := db.DeliveryRecord(ctx, owner, ds, now); err != nil {
				t.Fatal(err)
			}
		}
	}
	return ids
}

// checkReadinessScan compares the readiness figures read from the
// counters with a scan of the leads and their events, over the whole
// period and a part of it.
func checkReadinessScan(t *testing.T, db *store.DB, sites []model.SiteID, start time.Time) {
	t.Helper()
	ctx := context.Background()
	for _, site := range sites {
		for _, p := range [][2]int{{0, 40}, {3, 9}} {
			from, to := start.AddDate(0, 0, p[0]), start.AddDate(0, 0, p[1])
			got, err := db.ReadinessFigures(ctx, site, from, to)
			if err != nil {
				t.Fatal(err)
			}
			want, err := db.TestReadinessScan(ctx, site, from, to)
			if err != nil {
				t.Fatal(err)
			}
			stages := func(f *model.ReadinessFigures) map[string]model.StageFigure {
				m := map[string]model.StageFigure{}
				for _, s := range f.Stages {
					m[s.Kind+" "+s.EventName] = s
				}
				return m
			}
			g, w := stages(got), stages(want)
			same := len(g) == len(w)
			for k, s := range w {
				same = same && g[k] == s
			}
			if got.Uploaded != want.Uploaded || got.UploadDays != want.UploadDays || !same || want.Uploaded == 0 || len(w) < 3 {
				t.Errorf("%s %v: counters uploaded %d, days %d, stages %+v;\nscan uploaded %d, days %d, stages %+v", site, p,
					got.Uploaded, got.UploadDays, got.Stages, want.Uploaded, want.UploadDays, want.Stages)
			}
		}
	}
}

// TestReadinessCountersEqualScan: after random intake, stages, the drain's
// random outcomes (some recorded by a node that lost its lease), events
// built in dry run and erasure, on both engines, the readiness figures
// from the counters equal a scan of the leads and their events; no
// readiness counter names a person; a rebuild leaves them so and puts back
// what went wrong.
func TestReadinessCountersEqualScan(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		sites := []model.SiteID{"dent", "hair"}
		testkit.AddSites(t, db, start.AddDate(0, 0, -1), sites...)
		ids := randomReadiness(t, db, rand.New(rand.NewPCG(5, 70)), start, sites, 240)
		checkReadinessScan(t, db, sites, start)

		// Erasure keeps the lead's row, times and events (redacted):
		// the counts stay, and name no one.
		for _, id := range ids[:len(ids)/3] {
			if _, err := db.LeadRedact(ctx, id, nil, nil, start.AddDate(0, 2, 0)); err != nil {
				t.Fatal(err)
			}
			ds, err := db.DeliveriesByLead(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range ds {
				if _, err := db.DeliveryRedact(ctx, d.ID, []byte(`{}`), "erased", start.AddDate(0, 2, 0)); err != nil {
					t.Fatal(err)
				}
			}
		}
		checkReadinessScan(t, db, sites, start)
		first, last := model.Day(start), model.Day(start)+40
		for _, site := range sites {
			cs, err := db.Counters(ctx, site, first, last)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				if c.Name == model.CounterReadyWaits || c.Name == model.CounterReadyUploaded || c.Name == model.CounterReadyUploads {
					if _, _, _, ok := model.ParseReadyWaitDim(c.Dim); c.Dim != "" && !ok {
						t.Errorf("a readiness counter's dim is not a kind, name and bucket: %+v", c)
					}
					if c.Dim != "" && (len(c.Dim) > 40 || containsAny(c.Dim, "@+", "ld_")) {
						t.Errorf("a readiness counter names something of a person: %+v", c)
					}
				}
			}
		}

		// A rebuild changes nothing that was right, and puts right what
		// went wrong.
		for _, s := range sites {
			if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.CountersRebuild(ctx, s, first, last) }); err != nil {
				t.Fatal(err)
			}
		}
		checkReadinessScan(t, db, sites, start)
		if err := db.CountersAdd(ctx, "dent", first+4, "x", model.Count{Name: model.CounterReadyUploaded, N: 7},
			model.Count{Name: model.CounterReadyUploads, N: -3}, model.Count{Name: model.CounterReadyWaits, Dim: model.ReadyWaitDim(model.KindLead, "Lead", 0), N: 5},
			model.Count{Name: model.CounterReadyWaits, Dim: model.ReadyWaitDim("stage:won", "Stagewon", 42), N: 2}); err != nil {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.CountersRebuild(ctx, "dent", first, last) }); err != nil {
			t.Fatal(err)
		}
		checkReadinessScan(t, db, sites, start)
	})
}

// containsAny reports whether s holds any of subs.
func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		for i := 0; i+len(x) <= len(s); i++ {
			if s[i:i+len(x)] == x {
				return true
			}
		}
	}
	return false
}

// TestMigration0370ReadinessCountersOfEventsThere: on a database holding
// leads, stages and Meta events in every state but no readiness counts (as
// before migration 0370), the readiness figures read from the counters the
// migration's statements fill equal the scan. The events are made by
// today's code, so the database has today's shape and the migration's
// statements run by themselves (they only read columns that 0370 had).
func TestMigration0370ReadinessCountersOfEventsThere(t *testing.T) {
	file, err := os.ReadFile("migrations/0370_readiness_counters.sql")
	if err != nil {
		t.Fatal(err)
	}
	eachBelow(t, math.MaxInt32, func(t *testing.T, ctx context.Context, db *store.DB) {
		start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		sites := []model.SiteID{"dent", "hair"}
		testkit.AddSites(t, db, start.AddDate(0, 0, -1), sites...)
		randomReadiness(t, db, rand.New(rand.NewPCG(8, 370)), start, sites, 150)
		// Below 0370 nothing counted the events: the counters the code
		// above added go, as if it never ran.
		if err := db.TestExec(ctx, `DELETE FROM site_counters WHERE name LIKE 'ready\_%' ESCAPE '\'`); err != nil {
			t.Fatal(err)
		}
		if f, err := db.ReadinessFigures(ctx, "dent", start, start.AddDate(0, 0, 40)); err != nil || f.Uploaded != 0 {
			t.Fatalf("before the migration: %+v, %v", f, err)
		}
		for _, stmt := range strings.Split(string(file), ";\n") {
			if strings.TrimSpace(stmt) == "" {
				continue
			}
			if err := db.TestExec(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		checkReadinessScan(t, db, sites, start)
	})
}

// randomOutcome gives a claimed event a random outcome as the drain
// records it: most sent (within three days of being made), some built in
// dry run, due again or dead.
func randomOutcome(rng *rand.Rand, d *model.Delivery, now time.Time) {
	switch r := rng.IntN(10); {
	case r < 6:
		sent := d.CreatedAt.Add(time.Duration(rng.Int64N(int64(3 * 24 * time.Hour))))
		d.State, d.SentAt = model.DeliverySent, &sent
	case r < 7:
		d.State = model.DeliveryDryRun
	case r < 8:
		d.State, d.NextAt = model.DeliveryRetry, now
	default:
		d.State = model.DeliveryDead
	}
}
