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

func TestStats(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a", "b")
		db.SitePause(ctx, "b", "token expired", now)
		if st, err := db.Stats(ctx, now); err != nil || !st.OldestDue.IsZero() || len(st.Leads) != 0 || !st.Paused["b"] || st.Paused["a"] {
			t.Fatalf("empty stats: %+v %v", st, err)
		}
		for i, v := range []model.Verdict{"clean", "clean", "junk"} {
			l := &model.Lead{ID: model.LeadID(fmt.Sprint("ld_", i)), SiteID: "a", EventID: fmt.Sprint("e", i),
				SubmittedAt: now, ReceivedAt: now, Decision: model.Decision{Verdict: v}}
			if err := db.LeadInsert(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
		for i, d := range []struct {
			state model.DeliveryState
			next  time.Time
		}{{"pending", now.Add(-90 * time.Second)}, {"retry", now.Add(-time.Minute)}, {"retry", now.Add(time.Hour)}, {"sent", now.Add(-time.Hour)}} {
			if _, err := db.DeliveryInsert(ctx, &model.Delivery{ID: fmt.Sprint("d", i), SiteID: "a", Kind: "lead", EventName: "Lead",
				EventID: fmt.Sprint("e", i), PixelID: "1", Payload: []byte(`{}`), State: d.state, NextAt: d.next,
				DeadlineAt: now.Add(time.Hour), CreatedAt: now, UpdatedAt: now}); err != nil {
				t.Fatal(err)
			}
		}
		st, err := db.Stats(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		if st.Leads["a"]["clean"] != 2 || st.Leads["a"]["junk"] != 1 || st.Deliveries["a"]["retry"] != 2 ||
			st.Deliveries["a"]["sent"] != 1 || !st.OldestDue.Equal(now.Add(-90*time.Second)) {
			t.Errorf("stats: %+v", st)
		}
		// A new verdict moves the lead in the counts.
		if err := db.LeadSetDecision(ctx, "ld_2", model.Decision{Verdict: model.VerdictClean, DecidedBy: model.DecidedByOwner}, nil); err != nil {
			t.Fatal(err)
		}
		if st, err = db.Stats(ctx, now); err != nil || st.Leads["a"]["clean"] != 3 || st.Leads["a"]["junk"] != 0 {
			t.Errorf("stats after a new verdict: %+v %v", st.Leads, err)
		}
	})
}
