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

// TestMigration0640LeasesWithoutTheirTimes: on a database of the shape
// before migration 0640 whose outbox holds leases that ran out (a node
// died holding them), live ones (another node sending) and one left on an
// event finished meanwhile (an erasure ended it), the migration drops
// PostgreSQL's index of the leases' times and the leases keep working as
// before: the next claim takes the free events and those whose lease ran
// out, never one under a live lease or a finished one; the node that lost
// its lease records nothing (counted lost); the sweep ends the lease left
// on the finished event. SQLite has had no delivery_leases since 0620 (its
// lease is in the state row: TestMigration0620LeaseInState,
// TestDeliveryLeaseRunOut).
func TestMigration0640LeasesWithoutTheirTimes(t *testing.T) {
	eachBelow(t, 640, func(t *testing.T, ctx context.Context, db *store.DB) {
		if db.Dialect() == store.SQLite {
			t.Skip("SQLite's 0640 is empty: its leases are in the state row since 0620")
		}
		t0 := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, t0, "a")
		var queued []*model.Delivery
		for i := range 8 {
			id := fmt.Sprintf("e%d", i)
			d := &model.Delivery{ID: id, SiteID: "a", Kind: model.KindLead, EventName: "Lead", EventID: id, Payload: []byte(`{}`),
				State: model.DeliveryPending, NextAt: t0, DeadlineAt: t0.Add(24*time.Hour + time.Duration(i)*time.Second),
				CreatedAt: t0, UpdatedAt: t0}
			if _, err := db.DeliveryInsert(ctx, d); err != nil {
				t.Fatal(err)
			}
			queued = append(queued, d)
		}
		ids := func(ds []*model.Delivery) []string {
			var out []string
			for _, d := range ds {
				out = append(out, d.ID)
			}
			slices.Sort(out)
			return out
		}
		// Node a dies holding e0-e2 (its lease runs out a minute later);
		// node c sends e3 and e4 for ten minutes; e2 is ended meanwhile.
		if got, err := db.DeliveryClaim(ctx, "a", t0, t0.Add(time.Minute), 3, nil); err != nil || fmt.Sprint(ids(got)) != "[e0 e1 e2]" {
			t.Fatalf("a's claim: %v %v", ids(got), err)
		}
		if got, err := db.DeliveryClaim(ctx, "c", t0, t0.Add(10*time.Minute), 2, nil); err != nil || fmt.Sprint(ids(got)) != "[e3 e4]" {
			t.Fatalf("c's claim: %v %v", ids(got), err)
		}
		if err := db.TestExec(ctx, `UPDATE delivery_state SET state = 'dead' WHERE id = 'e2'`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		indexes := `SELECT COUNT(*) FROM pg_indexes WHERE indexname = 'delivery_leases_until' AND schemaname = current_schema()`
		if n, err := db.TestQueryString(ctx, indexes); err != nil || n != "0" {
			t.Errorf("delivery_leases_until indexes: %s %v, want 0", n, err)
		}
		t2 := t0.Add(2 * time.Minute)
		if next, ok, err := db.DeliveryNextDue(ctx, t2); err != nil || !ok || next.After(t2) {
			t.Errorf("next due: %v %v %v, want due now", next, ok, err)
		}
		got, err := db.DeliveryClaim(ctx, "b", t2, t2.Add(10*time.Minute), 10, nil)
		if err != nil || fmt.Sprint(ids(got)) != "[e0 e1 e5 e6 e7]" {
			t.Fatalf("b's claim: %v %v, want [e0 e1 e5 e6 e7]", ids(got), err)
		}
		if again, err := db.DeliveryClaim(ctx, "d", t2, t2.Add(10*time.Minute), 10, nil); err != nil || len(again) != 0 {
			t.Errorf("a claim under b's and c's leases: %v %v", ids(again), err)
		}
		// Node a comes back and records what it sent: its leases are b's.
		sent := t2.Add(time.Second)
		queued[0].State, queued[0].Attempts, queued[0].SentAt = model.DeliverySent, 1, &sent
		if lost, err := db.DeliveryRecord(ctx, "a", queued[:1], sent); err != nil || lost != 1 {
			t.Errorf("a's outcome: lost %d %v, want 1", lost, err)
		}
		if d, err := db.DeliveryByID(ctx, "e0"); err != nil || d.State != model.DeliveryPending {
			t.Errorf("e0 after a's outcome: %+v %v", d, err)
		}
		if expired, _, err := db.DeliverySweep(ctx, t2.Add(time.Minute)); err != nil || expired != 0 {
			t.Errorf("sweep: %d %v", expired, err)
		}
		rows, err := db.TestQueryStrings(ctx, `SELECT cleanads_idtext(id) || ' ' || owner FROM delivery_leases ORDER BY id`)
		if err != nil || fmt.Sprint(rows) != "[e0 b e1 b e3 c e4 c e5 b e6 b e7 b]" {
			t.Errorf("leases: %v %v", rows, err)
		}
		// b records its events: none lost, all sent, no lease left of b's.
		for _, d := range got {
			d.State, d.Attempts, d.SentAt = model.DeliverySent, 1, &sent
		}
		if lost, err := db.DeliveryRecord(ctx, "b", got, sent); err != nil || lost != 0 {
			t.Errorf("b's outcome: lost %d %v", lost, err)
		}
		counts, err := db.DeliveryCounts(ctx, "a")
		if err != nil || counts[model.DeliverySent] != 5 || counts[model.DeliveryPending] != 2 || counts[model.DeliveryDead] != 1 {
			t.Errorf("counts: %v %v", counts, err)
		}
	})
}
