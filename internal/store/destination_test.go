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

// A claim goes share by share (site and destination): a share left out
// leaves the site's other destinations claimed; only the destinations asked
// for are claimed; a destination's pause parks its rows until it is lifted,
// whatever Meta's pause of the site says, and Meta's pause holds only
// Meta's rows.
func TestDeliveryClaimPerDestination(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		testkit.AddSite(t, db, &model.Site{ID: "a", Name: "A"}, now)
		add := func(id, dest string, state model.DeliveryState, deadline time.Duration) {
			t.Helper()
			d := &model.Delivery{ID: id, SiteID: "a", Destination: dest, Kind: model.KindLead, EventName: "Lead", EventID: id,
				Payload: []byte(`{}`), State: state, NextAt: now, DeadlineAt: now.Add(deadline), CreatedAt: now, UpdatedAt: now}
			if _, err := db.DeliveryInsert(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
		add("m1", "", model.DeliveryPending, 2*time.Hour)
		add("g1", model.DestinationMetaLeadgen, model.DeliveryPending, time.Hour)
		add("g2", model.DestinationMetaLeadgen, model.DeliveryPending, 3*time.Hour)
		ids := func(ds []*model.Delivery) string {
			var out []string
			for _, d := range ds {
				out = append(out, d.ID+"/"+d.Destination)
			}
			return fmt.Sprint(out)
		}
		claim := func(dests []string, skip ...model.Share) []*model.Delivery {
			t.Helper()
			got, err := db.DeliveryClaimFor(ctx, model.ClaimParams{Owner: "n1", Now: now, LeaseUntil: now.Add(time.Minute),
				Limit: 10, Destinations: dests, Skip: skip})
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		release := func(ds []*model.Delivery) {
			t.Helper()
			if _, err := db.DeliveryRecord(ctx, "n1", ds, now); err != nil {
				t.Fatal(err)
			}
		}
		if got := claim([]string{model.DestinationMeta}); ids(got) != "[m1/meta]" {
			t.Errorf("Meta's claim took %s", ids(got))
		} else {
			release(got)
		}
		got := claim(model.Destinations(), model.Share{Site: "a", Destination: model.DestinationMeta})
		if ids(got) != "[g1/meta_leadgen g2/meta_leadgen]" {
			t.Errorf("with Meta's share left out: %s", ids(got))
		}
		// The fetch destination pauses: its rows park; Meta's pause of
		// the site, and its lifting, leave them parked.
		if err := db.DestinationPauseSet(ctx, model.Share{Site: "a", Destination: model.DestinationMetaLeadgen}, "token refused", now); err != nil {
			t.Fatal(err)
		}
		for _, d := range got {
			d.State = model.DeliveryPaused
		}
		release(got)
		if err := db.SitePause(ctx, "a", "Meta refused", now); err != nil {
			t.Fatal(err)
		}
		if _, resumed, err := db.DeliverySweep(ctx, now); err != nil || resumed != 0 {
			t.Fatalf("sweep resumed %d %v", resumed, err)
		}
		if err := db.SitePause(ctx, "a", "", now); err != nil {
			t.Fatal(err)
		}
		if _, resumed, err := db.DeliverySweep(ctx, now); err != nil || resumed != 0 {
			t.Fatalf("sweep after Meta's pause lifted resumed %d %v", resumed, err)
		}
		if p, err := db.DestinationPauses(ctx, "a"); err != nil || len(p) != 1 || p[0].Reason != "token refused" {
			t.Fatalf("pauses %+v %v", p, err)
		}
		if err := db.DestinationResume(ctx, model.Share{Site: "a", Destination: model.DestinationMetaLeadgen}); err != nil {
			t.Fatal(err)
		}
		if _, resumed, err := db.DeliverySweep(ctx, now); err != nil || resumed != 2 {
			t.Fatalf("sweep after the pause lifted resumed %d %v", resumed, err)
		}
		if got := claim(model.Destinations()); ids(got) != "[g1/meta_leadgen g2/meta_leadgen m1/meta]" {
			t.Errorf("after the resume: %s", ids(got))
		}
	})
}
