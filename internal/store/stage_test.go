package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// A stage keeps what its event carries (a value or none, the currency, the
// action source), once per lead, and a page of leads reads its stages in
// one query.
func TestLeadStages(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		testkit.AddSite(t, db, &model.Site{ID: "a", Name: "A"}, now)
		for _, id := range []model.LeadID{"l1", "l2", "l3"} {
			if err := db.LeadInsert(ctx, &model.Lead{ID: id, SiteID: "a", EventID: string(id), SubmittedAt: now, ReceivedAt: now,
				Decision: model.Decision{Verdict: model.VerdictJunk}}); err != nil {
				t.Fatal(err)
			}
		}
		value := 7000.5
		for i, st := range []model.LeadStage{
			{LeadID: "l1", SiteID: "a", Stage: "won", At: now.Add(time.Hour), EventName: "Purchase", EventID: "e1", Value: &value,
				Currency: "TRY", ActionSource: "phone_call"},
			{LeadID: "l1", SiteID: "a", Stage: "meeting", At: now, EventName: "Schedule", EventID: "e2", ActionSource: "system_generated"},
			{LeadID: "l2", SiteID: "a", Stage: "meeting", At: now, EventName: "Schedule", EventID: "e3", ActionSource: "chat"},
		} {
			st.CreatedAt = now.Add(time.Duration(i) * time.Minute)
			if ok, err := db.LeadStageInsert(ctx, &st); err != nil || !ok {
				t.Fatalf("insert %s/%s: %v %v", st.LeadID, st.Stage, ok, err)
			}
		}
		again := model.LeadStage{LeadID: "l1", Stage: "won", At: now, EventName: "Purchase", EventID: "e1", CreatedAt: now.Add(time.Hour)}
		if ok, err := db.LeadStageInsert(ctx, &again); err != nil || ok {
			t.Errorf("the same stage again: inserted %v, %v", ok, err)
		}
		list, err := db.LeadStagesByLead(ctx, "l1")
		if err != nil || len(list) != 2 {
			t.Fatalf("stages of l1: %+v %v", list, err)
		}
		won, meeting := list[0], list[1]
		if won.Stage != "won" || won.Value == nil || *won.Value != value || won.Currency != "TRY" || won.ActionSource != "phone_call" ||
			!won.At.Equal(now.Add(time.Hour)) || won.EventID != "e1" {
			t.Errorf("won: %+v", won)
		}
		if meeting.Value != nil || meeting.Currency != "" || meeting.ActionSource != "system_generated" {
			t.Errorf("meeting: %+v", meeting)
		}
		byLead, err := db.LeadStagesByLeads(ctx, []model.LeadID{"l1", "l2", "l3", "nope"})
		if err != nil || len(byLead) != 2 || len(byLead["l1"]) != 2 || len(byLead["l2"]) != 1 || byLead["l2"][0].ActionSource != "chat" {
			t.Errorf("stages of a page: %+v %v", byLead, err)
		}
		if m, err := db.LeadStagesByLeads(ctx, nil); err != nil || len(m) != 0 {
			t.Errorf("no leads: %v %v", m, err)
		}
	})
}

// Only the events cancelled with the reason given, still inside their
// deadline, go back to the queue; one Meta refused stays dead.
func TestDeliveryRequeueCancelled(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		const reason = "cancelled: the lead was marked junk"
		testkit.AddSite(t, db, &model.Site{ID: "a", Name: "A"}, now)
		for _, d := range []*model.Delivery{
			{ID: "d1", LeadID: "l_1", EventID: "e1", State: model.DeliveryPending, DeadlineAt: now.Add(48 * time.Hour)},
			{ID: "d2", LeadID: "l_1", EventID: "e2", State: model.DeliveryRetry, Attempts: 2, DeadlineAt: now.Add(48 * time.Hour)},
			{ID: "d3", LeadID: "l_1", EventID: "e3", State: model.DeliveryPending, DeadlineAt: now.Add(30 * time.Minute)},
			{ID: "d4", LeadID: "l_1", EventID: "e4", State: model.DeliveryDead, LastError: "Invalid parameter", DeadlineAt: now.Add(48 * time.Hour)},
			{ID: "d5", LeadID: "l_2", EventID: "e5", State: model.DeliveryPending, DeadlineAt: now.Add(48 * time.Hour)},
		} {
			d.SiteID, d.Kind, d.EventName, d.Payload = "a", model.KindQualified, "QualifiedLead", []byte(`{}`)
			d.NextAt, d.CreatedAt, d.UpdatedAt = now, now, now
			if _, err := db.DeliveryInsert(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
		for _, lead := range []model.LeadID{"l_1", "l_2"} {
			if _, err := db.DeliveryCancelByLead(ctx, lead, reason, now); err != nil {
				t.Fatal(err)
			}
		}
		later := now.Add(10 * time.Minute)
		n, err := db.DeliveryRequeueCancelled(ctx, "l_1", reason, later, later.Add(time.Hour))
		if err != nil || n != 2 {
			t.Fatalf("requeued %d, %v; want 2", n, err)
		}
		want := map[string]model.DeliveryState{"d1": model.DeliveryPending, "d2": model.DeliveryPending,
			"d3": model.DeliveryDead, "d4": model.DeliveryDead, "d5": model.DeliveryDead}
		for id, state := range want {
			d, err := db.DeliveryByID(ctx, id)
			if err != nil || d.State != state {
				t.Errorf("%s: %+v %v; want %s", id, d, err, state)
				continue
			}
			if state == model.DeliveryPending && (d.LastError != "" || !d.NextAt.Equal(later)) {
				t.Errorf("%s requeued as %+v", id, d)
			}
		}
		if d, _ := db.DeliveryByID(ctx, "d2"); d.Attempts != 2 {
			t.Errorf("attempts not kept: %d", d.Attempts)
		}
		if n, err := db.DeliveryRequeueCancelled(ctx, "l_1", reason, later, later.Add(time.Hour)); err != nil || n != 0 {
			t.Errorf("again: %d, %v", n, err)
		}
	})
}
