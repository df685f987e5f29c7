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

// TestPageViewsDeleteBefore: on both engines, the outbox rows of page
// views never sent (dry run, dead, expired) created before the time go,
// state and event, over several batches; newer ones, waiting ones and a
// lead's events stay.
func TestPageViewsDeleteBefore(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now.AddDate(0, -6, 0), "dent")
		before := now.AddDate(0, 0, -90)
		states := []model.DeliveryState{model.DeliveryDryRun, model.DeliveryDead, model.DeliveryExpired, model.DeliveryPending}
		want := 0
		var ds []*model.Delivery
		for i := range 2600 {
			at := before.Add(-time.Duration(i) * time.Minute)
			if i%5 == 0 {
				at = before.Add(time.Duration(i) * time.Minute)
			}
			d := &model.Delivery{ID: fmt.Sprintf("dl_%05d", i), SiteID: "dent", Kind: model.KindPageView, EventName: "PageView",
				EventID: fmt.Sprintf("pv%05d", i), PixelID: "111", Payload: []byte(`{}`), State: states[i%4], NextAt: at,
				DeadlineAt: at.Add(7 * 24 * time.Hour), CreatedAt: at, UpdatedAt: at}
			if i%7 == 0 {
				d.Kind, d.EventName, d.LeadID = model.KindLead, "Lead", model.LeadID(fmt.Sprintf("ld_%05d", i))
			}
			if d.Kind == model.KindPageView && d.State != model.DeliveryPending && at.Before(before) {
				want++
			}
			ds = append(ds, d)
		}
		for i := 0; i < len(ds); i += 100 {
			if _, err := db.DeliveryInsertAll(ctx, ds[i:i+100]); err != nil {
				t.Fatal(err)
			}
		}
		n, err := db.PageViewsDeleteBefore(ctx, before)
		if err != nil || n != want || want < 1000 {
			t.Fatalf("deleted %d, %v; want %d", n, err, want)
		}
		for _, q := range []string{`SELECT COUNT(*) FROM delivery_state`, `SELECT COUNT(*) FROM delivery_events`} {
			got, err := db.TestQueryString(ctx, q)
			if err != nil || got != fmt.Sprint(len(ds)-want) {
				t.Errorf("%s: %s, %v; want %d", q, got, err, len(ds)-want)
			}
		}
		if n, err := db.PageViewsDeleteBefore(ctx, before); err != nil || n != 0 {
			t.Errorf("second run: %d, %v", n, err)
		}
	})
}
