package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestMigration0390EventsThereAreWholeAndFound: the outbox rows of a
// database before migration 0390 are whole after it (shrunk_at NULL, read
// as not shrunk) and found by retention's walk of the rows not shrunk yet,
// which shrinks the finished one past its deadline and leaves the rest.
func TestMigration0390EventsThereAreWholeAndFound(t *testing.T) {
	eachBelow(t, 390, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a")
		old := now.Add(-40 * 24 * time.Hour).UnixMilli()
		for _, r := range []struct {
			id, state string
			deadline  int64
		}{{"d_sent", "sent", old + 1}, {"d_pending", "pending", now.UnixMilli() + 1}, {"d_google", "sent", now.UnixMilli() + 1}} {
			if err := db.TestExec(ctx, `INSERT INTO delivery_events (id, site_id, event_name, event_id, pixel_id, payload, destination)
				VALUES (?, 'a', 'Lead', ?, 'px', '{"event_name":"Lead"}', 'meta')`, r.id, r.id); err != nil {
				t.Fatal(err)
			}
			if err := db.TestExec(ctx, `INSERT INTO delivery_state (id, site_id, kind, state, next_at, deadline_at, created_at,
				updated_at, destination) VALUES (?, 'a', 'lead', ?, 0, ?, ?, 0, 'meta')`, r.id, r.state, r.deadline, old); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"d_sent", "d_pending", "d_google"} {
			if d, err := db.DeliveryByID(ctx, id); err != nil || d.ShrunkAt != nil {
				t.Errorf("%s after the migration: %+v %v", id, d, err)
			}
		}
		ds, err := db.DeliveriesToShrink(ctx, now.Add(-30*24*time.Hour), store.ShrinkCursor{}, now, 10)
		if err != nil || len(ds) != 1 || ds[0].ID != "d_sent" {
			t.Fatalf("to shrink: %v %v", ds, err)
		}
		if ok, err := db.DeliveryShrink(ctx, "d_sent", json.RawMessage(`{"event_name":"Lead"}`), now); err != nil || !ok {
			t.Fatalf("shrink: %v %v", ok, err)
		}
		if ok, err := db.DeliveryShrink(ctx, "d_pending", json.RawMessage(`{}`), now); err != nil || ok {
			t.Errorf("a pending row was shrunk: %v %v", ok, err)
		}
		if ds, err := db.DeliveriesToShrink(ctx, now.Add(-30*24*time.Hour), store.ShrinkCursor{}, now, 10); err != nil || len(ds) != 0 {
			t.Errorf("to shrink after: %v %v", ds, err)
		}
		if d, err := db.DeliveryByID(ctx, "d_sent"); err != nil || d.ShrunkAt == nil || !d.ShrunkAt.Equal(now) {
			t.Errorf("shrunk row: %+v %v", d, err)
		}
	})
}
