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

// TestMigration0520Leases: on a database of the shape before migration
// 0520 (the lease in delivery_state's columns) with queued, retrying,
// leased, expired-lease, sent and dead events, the migration keeps every
// row and moves each lease to delivery_leases: another node's claim then
// takes the unleased due events and the one whose lease ran out, never one
// under a live lease; the holder records its events (none lost) and a node
// that does not hold an event's lease records nothing for it.
func TestMigration0520Leases(t *testing.T) {
	eachBelow(t, 520, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a", "b")
		states := []string{"sent", "pending", "retry", "dead", "pending", "sent"}
		var leased, free []string
		gone := 0
		for i := range 300 {
			id := fmt.Sprintf("d_%03d", i)
			state := states[i%len(states)]
			unsent := state == "pending" || state == "retry"
			owner, until := "", any(nil)
			switch {
			case unsent && i%5 == 0:
				owner, until = "node", now.Add(time.Hour).UnixMilli()
				leased = append(leased, id)
			case unsent && i%7 == 0:
				owner, until = "gone", now.Add(-time.Minute).UnixMilli() // a dead node's
				free = append(free, id)
				gone++
			case unsent:
				free = append(free, id)
			}
			if err := db.TestExec(ctx, `INSERT INTO delivery_events (id, site_id, event_name, event_id, pixel_id, payload, destination)
				VALUES (?, ?, 'Lead', ?, 'px', '{}', 'meta')`, id, []string{"a", "b"}[i%2], id); err != nil {
				t.Fatal(err)
			}
			if err := db.TestExec(ctx, `INSERT INTO delivery_state (id, site_id, kind, state, next_at, deadline_at, created_at,
				updated_at, destination, lease_owner, lease_until) VALUES (?, ?, 'lead', ?, ?, ?, ?, 0, 'meta', ?, ?)`,
				id, []string{"a", "b"}[i%2], state, now.Add(-time.Duration(i)*time.Second).UnixMilli(),
				now.Add(24*time.Hour).UnixMilli(), now.UnixMilli(), owner, until); err != nil {
				t.Fatal(err)
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
		// Since migration 0620 SQLite keeps the lease in the state row.
		leases := `SELECT owner FROM delivery_leases`
		if db.Dialect() == store.SQLite {
			leases = `SELECT lease_owner FROM delivery_state WHERE lease_owner IS NOT NULL`
		}
		moved, err := db.TestQueryAll(ctx, leases)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(moved); n != len(leased)+gone || n != gone+countOf(moved, "node") {
			t.Errorf("delivery_leases after the migration: %v, want %d of node and %d of gone", moved, len(leased), gone)
		}
		claimed, err := db.DeliveryClaim(ctx, "other", now, now.Add(time.Minute), 1000, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range claimed {
			got = append(got, d.ID)
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
	})
}

// countOf is how many of list are s.
func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}
