package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

// An open lead keeps its window with it; its held lead events say it may
// take a later attempt until one of them is due, tried, or joined by a
// stage; LeadAttemptSet replaces its values and drops the held events,
// leaving the rest.
func TestLeadAttempt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		until := now.Add(5 * time.Minute)
		db.SiteUpsert(ctx, &model.Site{ID: "a", Name: "A"}, now)
		fill := int64(6000)
		l := &model.Lead{ID: "l_1", SiteID: "a", EventID: "e1", Phone: "0532 412 87", FillMS: &fill, SubmittedAt: now, ReceivedAt: now,
			OpenUntil: &until, Decision: model.Decision{Verdict: model.VerdictJunk, DecidedBy: model.DecidedByRules}}
		if err := db.LeadInsert(ctx, l); err != nil {
			t.Fatal(err)
		}
		got, err := db.LeadByID(ctx, "l_1")
		if err != nil || got.OpenUntil == nil || !got.OpenUntil.Equal(until) {
			t.Fatalf("open_until: %+v %v", got, err)
		}
		held := func(want bool, at time.Time) {
			t.Helper()
			if ok, err := db.LeadEventsHeld(ctx, "l_1", at); err != nil || ok != want {
				t.Errorf("LeadEventsHeld at %v = %v, %v; want %v", at, ok, err, want)
			}
		}
		row := func(id, kind string, next time.Time) *model.Delivery {
			return &model.Delivery{ID: id, SiteID: "a", LeadID: "l_1", Kind: kind, EventName: id, EventID: "e1",
				Payload: []byte(`{}`), State: model.DeliveryPending, NextAt: next, DeadlineAt: now.Add(time.Hour),
				CreatedAt: now, UpdatedAt: now}
		}
		held(true, now) // no events at all (a junk lead)
		for _, d := range []*model.Delivery{row("Lead", model.KindLead, until), row("QualifiedLead", model.KindQualified, until)} {
			if _, err := db.DeliveryInsert(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
		held(true, now)
		held(false, until) // due: the runner may have it
		if _, err := db.DeliveryInsert(ctx, row("Schedule", model.KindStage+":meeting", until)); err != nil {
			t.Fatal(err)
		}
		held(false, now)

		l.Phone, l.Verdict, l.Message = "0532 412 87 19", model.VerdictClean, "an implant, please"
		later := until.Add(time.Minute)
		l.OpenUntil = &later
		if err := db.LeadAttemptSet(ctx, l); err != nil {
			t.Fatal(err)
		}
		got, _ = db.LeadByID(ctx, "l_1")
		if got.Phone != l.Phone || got.Verdict != model.VerdictClean || got.Message != l.Message || !got.OpenUntil.Equal(later) ||
			got.EventID != "e1" || !got.ReceivedAt.Equal(now) {
			t.Errorf("after the attempt: %+v", got)
		}
		ds, _ := db.DeliveriesByLead(ctx, "l_1")
		if len(ds) != 1 || ds[0].EventName != "Schedule" {
			t.Errorf("events left: %+v", ds)
		}
		l.OpenUntil = nil
		if err := db.LeadAttemptSet(ctx, l); err != nil {
			t.Fatal(err)
		}
		if got, _ = db.LeadByID(ctx, "l_1"); got.OpenUntil != nil {
			t.Errorf("a confirmed attempt left the lead open until %v", got.OpenUntil)
		}
		l.ID = "l_none"
		if err := db.LeadAttemptSet(ctx, l); err == nil {
			t.Errorf("LeadAttemptSet of a lead that is not there")
		}
	})
}
