package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestMigration0620LeaseInState: on a database of the shape before
// migration 0620 (every lease a row of delivery_leases) with queued,
// retrying, leased, expired-lease, sent and dead events, the migration keeps
// every row and, on SQLite, moves each lease into its state row and drops
// delivery_leases (PostgreSQL keeps the table). Either way another node's
// claim then takes the unleased due events and those whose lease ran out,
// never one under a live lease; the holder records its event (none lost,
// the lease cleared), a node that does not hold it records nothing.
func TestMigration0620LeaseInState(t *testing.T) {
	eachBelow(t, 620, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a", "b")
		states := []string{"sent", "pending", "retry", "dead", "pending", "sent"}
		var leased, free []string
		for i := range 300 {
			id := fmt.Sprintf("d_%03d", i)
			site := []string{"a", "b"}[i%2]
			state := states[i%len(states)]
			if err := db.TestExec(ctx, `INSERT INTO delivery_events (id, site_id, event_name, event_id, pixel_id, payload, destination)
				VALUES (?, ?, 'Lead', ?, 'px', '{}', 'meta')`, id, site, id); err != nil {
				t.Fatal(err)
			}
			if err := db.TestExec(ctx, `INSERT INTO delivery_state (id, site_id, kind, state, next_at, deadline_at, created_at,
				updated_at, destination) VALUES (?, ?, 'lead', ?, ?, ?, ?, 0, 'meta')`,
				id, site, state, now.Add(-time.Duration(i)*time.Second).UnixMilli(), now.Add(24*time.Hour).UnixMilli(),
				now.UnixMilli()); err != nil {
				t.Fatal(err)
			}
			if state != "pending" && state != "retry" {
				continue
			}
			owner, until := "", int64(0)
			switch {
			case i%5 == 0:
				owner, until = "node", now.Add(time.Hour).UnixMilli()
				leased = append(leased, id)
			case i%7 == 0:
				owner, until = "gone", now.Add(-time.Minute).UnixMilli() // a dead node's, not given back yet
				free = append(free, id)
			default:
				free = append(free, id)
			}
			if owner != "" {
				if err := db.TestExec(ctx, `INSERT INTO delivery_leases (id, until, owner) VALUES (?, ?, ?)`, id, until, owner); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		counts, err := db.DeliveryCounts(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if n := counts[model.DeliverySent] + counts[model.DeliveryPending] + counts[model.DeliveryRetry] + counts[model.DeliveryDead]; n != 300 {
			t.Fatalf("after the migration %d rows (%v), want 300", n, counts)
		}
		if db.Dialect() == store.SQLite {
			live, err := db.TestQueryAll(ctx, `SELECT id FROM delivery_state WHERE lease_owner = 'node' AND lease_until > ? ORDER BY id`,
				now.UnixMilli())
			if err != nil || !slices.Equal(live, leased) {
				t.Errorf("live leases in the state rows: %v %v, want %v", live, err, leased)
			}
			if _, err := db.TestQueryAll(ctx, `SELECT id FROM delivery_leases`); err == nil {
				t.Error("delivery_leases is still there on SQLite")
			}
		}
		next, ok, err := db.DeliveryNextDue(ctx, now)
		if err != nil || !ok || next.After(now) {
			t.Errorf("next due: %v %v %v, want now or before", next, ok, err)
		}
		claimed, err := db.DeliveryClaim(ctx, "other", now, now.Add(time.Minute), 1000, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range claimed {
			got = append(got, d.ID)
			if d.EventID != d.ID || d.EventName != "Lead" || string(d.Payload) != "{}" {
				t.Errorf("claimed %s read as %+v", d.ID, d)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, free) {
			t.Errorf("claimed %v\nwant the unleased and expired ones %v", got, free)
		}
		mine, err := db.DeliveryByID(ctx, leased[0])
		if err != nil {
			t.Fatal(err)
		}
		sent := now.Add(time.Second)
		mine.State, mine.SentAt, mine.Attempts = model.DeliverySent, &sent, 1
		if lost, err := db.DeliveryRecord(ctx, "other", []*model.Delivery{mine}, sent); err != nil || lost != 1 {
			t.Errorf("record by a node without the lease: lost %d %v, want 1", lost, err)
		}
		if lost, err := db.DeliveryRecord(ctx, "node", []*model.Delivery{mine}, sent); err != nil || lost != 0 {
			t.Errorf("record by the lease's holder: lost %d %v, want 0", lost, err)
		}
		if d, err := db.DeliveryByID(ctx, leased[0]); err != nil || d.State != model.DeliverySent {
			t.Errorf("after the holder's record: %+v %v", d, err)
		}
		if lost, err := db.DeliveryRecord(ctx, "node", []*model.Delivery{mine}, sent); err != nil || lost != 1 {
			t.Errorf("a second record of the same event: lost %d %v, want 1 (the lease is gone)", lost, err)
		}
	})
}
