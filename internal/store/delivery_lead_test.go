package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

// PageViews have no lead: the look-ups by lead (served by a partial index
// that leaves them out) never return or cancel them, even asked for the
// empty lead id.
func TestDeliveriesByLeadLeaveOutPageViews(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		db.SiteUpsert(ctx, &model.Site{ID: "a", Name: "A"}, now)
		for _, d := range []*model.Delivery{
			{ID: "d1", LeadID: "l_1", Kind: model.KindLead, EventName: "Lead", EventID: "e1"},
			{ID: "d2", Kind: model.KindPageView, EventName: "PageView", EventID: "e2"},
		} {
			d.SiteID, d.Payload, d.State = "a", []byte(`{}`), model.DeliveryPending
			d.NextAt, d.DeadlineAt, d.CreatedAt, d.UpdatedAt = now, now.Add(time.Hour), now, now
			if _, err := db.DeliveryInsert(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
		for lead, want := range map[model.LeadID]int{"l_1": 1, "": 0} {
			list, err := db.DeliveriesByLead(ctx, lead)
			if err != nil || len(list) != want {
				t.Errorf("DeliveriesByLead(%q) = %d events, %v; want %d", lead, len(list), err, want)
			}
		}
		if n, err := db.DeliveryCancelByLead(ctx, "", "test", now); err != nil || n != 0 {
			t.Errorf("DeliveryCancelByLead(\"\") = %d, %v; want 0", n, err)
		}
		if n, err := db.DeliveryCancelByLead(ctx, "l_1", "test", now); err != nil || n != 1 {
			t.Errorf("DeliveryCancelByLead(l_1) = %d, %v; want 1", n, err)
		}
	})
}
