package store_test

import (
	"context"
	"fmt"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestMigration0480NextDue: on a database of the shape before migration
// 0480 with events in every state, some leased, the migration keeps every
// row, and DeliveryNextDue then names the earliest next time of the
// unleased pending and retry events (on PostgreSQL read through the new
// index), leased and finished ones left out.
func TestMigration0480NextDue(t *testing.T) {
	eachBelow(t, 480, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a", "b")
		states := []string{"sent", "pending", "retry", "dead", "pending", "sent"}
		want := int64(-1)
		for i := range 300 {
			id := fmt.Sprintf("d_%03d", i)
			state := states[i%len(states)]
			next := now.Add(time.Duration(300-i) * time.Minute).UnixMilli()
			owner := ""
			if i%5 == 0 {
				owner = "node"
			}
			if err := db.TestExec(ctx, `INSERT INTO delivery_events (id, site_id, event_name, event_id, pixel_id, payload, destination)
				VALUES (?, ?, 'Lead', ?, 'px', '{}', 'meta')`, id, []string{"a", "b"}[i%2], id); err != nil {
				t.Fatal(err)
			}
			var until any
			if owner != "" {
				until = now.Add(time.Hour).UnixMilli()
			}
			if err := db.TestExec(ctx, `INSERT INTO delivery_state (id, site_id, kind, state, next_at, deadline_at, created_at,
				updated_at, destination, lease_owner, lease_until) VALUES (?, ?, 'lead', ?, ?, ?, ?, 0, 'meta', ?, ?)`,
				id, []string{"a", "b"}[i%2], state, next, now.Add(24*time.Hour).UnixMilli(), now.UnixMilli(), owner, until); err != nil {
				t.Fatal(err)
			}
			if (state == "pending" || state == "retry") && owner == "" && (want < 0 || next < want) {
				want = next
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
		got, ok, err := db.DeliveryNextDue(ctx, now)
		if err != nil || !ok || got.UnixMilli() != want {
			t.Fatalf("next due %v %v %v, want %v", got, ok, err, time.UnixMilli(want).UTC())
		}
	})
}

// TestDeliveryNextDueReadsTheDueIndex: on PostgreSQL the runner's look-up
// of the earliest due event descends delivery_state_due, never scanning
// delivery_state, whose rows are every event ever queued (it read them
// all, several times a second while a backlog drained).
func TestDeliveryNextDueReadsTheDueIndex(t *testing.T) {
	db := storetest.Postgres(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	testkit.AddSites(t, db, now, "a")
	for i := range 2000 {
		id := fmt.Sprintf("d_%04d", i)
		state := "sent"
		if i%50 == 0 {
			state = "pending"
		}
		if err := db.TestExec(ctx, `INSERT INTO delivery_state (id, site_id, kind, state, next_at, deadline_at, created_at,
			updated_at, destination) VALUES (?, 'a', 'lead', ?, ?, ?, ?, 0, 'meta')`,
			id, state, now.Add(time.Duration(i)*time.Second).UnixMilli(), now.Add(24*time.Hour).UnixMilli(), now.UnixMilli()); err != nil {
			t.Fatal(err)
		}
	}
	plan, err := db.TestNextDuePlanPostgres(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "delivery_state_due") || strings.Contains(plan, "Seq Scan on delivery_state") {
		t.Errorf("next-due plan:\n%s\nwant a descent of delivery_state_due, no scan of delivery_state", plan)
	}
}
