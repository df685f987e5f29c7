package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// On PostgreSQL a lead's intake is one statement that counts no readiness,
// which events inserted already sent or in dry run would need: it refuses
// them and writes nothing; SQLite's statements count them.
func TestLeadIntakeWriteOfASentEvent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		testkit.AddSite(t, db, &model.Site{ID: "a", Name: "A"}, now)
		l := &model.Lead{ID: "ld_1", SiteID: "a", EventID: "ev-1", Name: "Ayşe", SubmittedAt: now, ReceivedAt: now,
			Decision: model.Decision{Verdict: model.VerdictClean, DecidedBy: "rules"}}
		d := &model.Delivery{ID: "dl_1", SiteID: "a", LeadID: l.ID, Kind: model.KindLead, EventName: "Lead", EventID: "ev-1",
			Payload: []byte(`{}`), State: model.DeliverySent, NextAt: now, DeadlineAt: now.Add(time.Hour), CreatedAt: now, UpdatedAt: now}
		w := store.LeadWrite{Lead: l, LandingRead: true, Deliveries: []*model.Delivery{d},
			History: &model.HistoryEntry{ID: "h_1", LeadID: l.ID, At: now, Kind: model.HistoryVerdict}}
		err := db.InTx(ctx, func(tx *store.Tx) error { return tx.LeadIntakeWrite(ctx, w) })
		_, found := db.LeadByID(ctx, l.ID)
		if db.Dialect() == store.Postgres {
			if err == nil || !errors.Is(found, model.ErrNotFound) {
				t.Errorf("PostgreSQL took a sent event at intake: %v, lead %v", err, found)
			}
			return
		}
		if err != nil || found != nil {
			t.Errorf("SQLite: %v, lead %v", err, found)
		}
	})
}
