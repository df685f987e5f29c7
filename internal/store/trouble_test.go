package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// DeliveryFailures groups the events that wait after a failure, and the
// refused ones that can still be replayed, by site, destination, state and
// error, with their count, the oldest's time and the earliest deadline; a
// pending row never tried, a sent one and a refused one past its deadline
// are left out.
func TestDeliveryFailures(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a", "b")
		add := func(id string, site model.SiteID, dest string, state model.DeliveryState, attempts int, lastErr string, age, deadline time.Duration) {
			t.Helper()
			d := &model.Delivery{ID: id, SiteID: site, Destination: dest, Kind: model.KindLead, EventName: "Lead", EventID: id,
				Payload: []byte(`{}`), State: state, Attempts: attempts, NextAt: now, DeadlineAt: now.Add(deadline),
				LastError: lastErr, Response: []byte(`{"error":{"class":"transient"}}`), CreatedAt: now.Add(-age), UpdatedAt: now}
			if _, err := db.DeliveryInsert(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
		add("r1", "a", model.DestinationMeta, model.DeliveryRetry, 2, "no such host", time.Hour, 5*24*time.Hour)
		add("r2", "a", model.DestinationMeta, model.DeliveryRetry, 1, "no such host", 3*time.Hour, 4*24*time.Hour)
		add("r3", "a", model.DestinationMeta, model.DeliveryRetry, 1, "HTTP 500", time.Hour, 6*24*time.Hour)
		add("g1", "a", model.DestinationGoogle, model.DeliveryPaused, 0, "terms not accepted", time.Hour, 80*24*time.Hour)
		add("d1", "b", model.DestinationMeta, model.DeliveryDead, 1, "invalid parameter", time.Hour, 24*time.Hour)
		add("d2", "b", model.DestinationMeta, model.DeliveryDead, 1, "invalid parameter", 8*24*time.Hour, -time.Hour) // too old to replay
		add("p1", "a", model.DestinationMeta, model.DeliveryPending, 0, "", time.Hour, 24*time.Hour)
		add("s1", "a", model.DestinationMeta, model.DeliverySent, 1, "", time.Hour, 24*time.Hour)
		add("r4", "a", model.DestinationMeta, model.DeliveryRetry, 0, "", time.Hour, 24*time.Hour) // due, never tried

		got, err := db.DeliveryFailures(ctx, "", now)
		if err != nil {
			t.Fatal(err)
		}
		var rows []string
		for _, f := range got {
			rows = append(rows, fmt.Sprintf("%s/%s/%s/%s n=%d oldest=-%v deadline=+%v", f.Site, f.Destination, f.State, f.LastError,
				f.N, now.Sub(f.Oldest), f.Deadline.Sub(now)))
		}
		want := []string{
			"a/google/paused/terms not accepted n=1 oldest=-1h0m0s deadline=+1920h0m0s",
			"a/meta/retry/HTTP 500 n=1 oldest=-1h0m0s deadline=+144h0m0s",
			"a/meta/retry/no such host n=2 oldest=-3h0m0s deadline=+96h0m0s",
			"b/meta/dead/invalid parameter n=1 oldest=-1h0m0s deadline=+24h0m0s",
		}
		if fmt.Sprint(rows) != fmt.Sprint(want) {
			t.Errorf("failures:\n got %q\nwant %q", rows, want)
		}
		if only, err := db.DeliveryFailures(ctx, "b", now); err != nil || len(only) != 1 || only[0].Site != "b" {
			t.Errorf("site b alone: %+v %v", only, err)
		}
	})
}
