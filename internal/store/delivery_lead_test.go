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

// PageViews have no lead: the look-ups by lead (served by a partial index
// that leaves them out) never return or cancel them, even asked for the
// empty lead id.
func TestDeliveriesByLeadLeaveOutPageViews(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		testkit.AddSite(t, db, &model.Site{ID: "a", Name: "A"}, now)
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

// DeliveryInsertAll queues several events in one statement and says, as
// DeliveryInsert does, which went in: an event already queued (same site,
// name and id) is left as it was.
func TestDeliveryInsertAll(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		testkit.AddSite(t, db, &model.Site{ID: "a", Name: "A"}, now)
		row := func(id, name, event string) *model.Delivery {
			return &model.Delivery{ID: id, SiteID: "a", LeadID: "l_1", Kind: model.KindLead, EventName: name, EventID: event,
				Payload: []byte(`{"n":"` + id + `"}`), State: model.DeliveryPending, NextAt: now, DeadlineAt: now.Add(time.Hour),
				CreatedAt: now, UpdatedAt: now}
		}
		for _, tt := range []struct {
			rows []*model.Delivery
			want []bool
		}{
			{nil, []bool{}},
			{[]*model.Delivery{row("d1", "Lead", "e1"), row("d2", "QualifiedLead", "e2")}, []bool{true, true}},
			{[]*model.Delivery{row("d3", "Lead", "e1"), row("d4", "Lead", "e4")}, []bool{false, true}},
			{[]*model.Delivery{row("d5", "QualifiedLead", "e2")}, []bool{false}},
		} {
			var got []bool
			err := db.InTx(ctx, func(tx *store.Tx) (err error) {
				got, err = tx.DeliveryInsertAll(ctx, tt.rows)
				return err
			})
			if err != nil || fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("DeliveryInsertAll(%d rows) = %v, %v; want %v", len(tt.rows), got, err, tt.want)
			}
		}
		list, err := db.DeliveriesByLead(ctx, "l_1")
		if err != nil || len(list) != 3 {
			t.Fatalf("DeliveriesByLead = %d rows, %v; want d1, d2, d4", len(list), err)
		}
		if string(list[0].Payload) != `{"n":"d1"}` {
			t.Errorf("the first e1 row's payload = %s, want d1's kept", list[0].Payload)
		}
	})
}
