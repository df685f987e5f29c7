package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

// TestDeliveryCountsStopAtTheCap: a state with more deliveries than
// store.CountCap counts CountCap+1 (the pages show "10000+"), by state and
// by destination, for the site and for every site; one below it counts
// exactly.
func TestDeliveryCountsStopAtTheCap(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		trackerSite(t, db, "a")
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		// CountCap+20 sent Meta rows (one a second back from now), 30 dead
		// Google ones, 5 dry-run Meta ones.
		for _, r := range []struct {
			state, dest, kind string
			n, from           int
		}{{"sent", "meta", "qualified", store.CountCap + 20, 100}, {"dead", "google", "qualified", 30, 0}, {"dry_run", "meta", "lead", 5, 0}} {
			if err := db.TestExec(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
				INSERT INTO delivery_events (id, site_id, event_name, event_id, pixel_id, payload, destination)
				SELECT cleanads_idpack(? || i), 'a', 'Lead', cleanads_idpack(? || i), 'px', '{"i":' || i || '}', ? FROM n`,
				r.n, r.state+"-", r.state+"-", r.dest); err != nil {
				t.Fatal(err)
			}
			if err := db.TestExec(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
				INSERT INTO delivery_state (id, site_id, kind, state, next_at, deadline_at, created_at, updated_at, destination)
				SELECT cleanads_idpack(? || i), 'a', ?, ?, 0, 0, CAST(? AS BIGINT) - (? + i) * 1000, 0, ? FROM n`,
				r.n, r.state+"-", r.kind, r.state, now.UnixMilli(), r.from, r.dest); err != nil {
				t.Fatal(err)
			}
		}
		for _, site := range []model.SiteID{"a", ""} {
			got, err := db.DeliveryStats(ctx, site, "", time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if got[model.DeliverySent] != store.CountCap+1 || got[model.DeliveryDead] != 30 || got[model.DeliveryDryRun] != 5 || len(got) != 3 {
				t.Errorf("site %q: %v", site, got)
			}
		}
		if got, err := db.DeliveryStats(ctx, "a", "lead", time.Time{}); err != nil || len(got) != 1 || got[model.DeliveryDryRun] != 5 {
			t.Errorf("kind lead: %v %v", got, err)
		}
		// Since a time: the sent rows of the last 1,000 seconds.
		if got, err := db.DeliveryStats(ctx, "a", "", now.Add(-1000*time.Second)); err != nil || got[model.DeliverySent] != 900 {
			t.Errorf("since: %v %v", got, err)
		}
		byDest, err := db.DeliveryStatsByDestination(ctx, "a", "qualified", time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if byDest["meta"][model.DeliverySent] != store.CountCap+1 || byDest["google"][model.DeliveryDead] != 30 || len(byDest["meta"]) != 1 || len(byDest) != 2 {
			t.Errorf("by destination: %v", byDest)
		}
	})
}
