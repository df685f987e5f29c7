package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// queueDeliveries puts n due PageViews of site a in the outbox, their
// deadlines in the reverse of their ids' order, some sharing a deadline.
func queueDeliveries(t *testing.T, db *store.DB, n int, now time.Time) {
	t.Helper()
	ctx := context.Background()
	testkit.AddSite(t, db, &model.Site{ID: "a", Name: "A"}, now)
	for i := range n {
		d := &model.Delivery{ID: fmt.Sprintf("d%04d", i), SiteID: "a", Kind: model.KindPageView, EventName: "PageView",
			EventID: fmt.Sprintf("e%04d", i), Payload: []byte(`{}`), State: model.DeliveryPending,
			NextAt: now, DeadlineAt: now.Add(time.Duration(n-i/2) * time.Minute), CreatedAt: now, UpdatedAt: now}
		if _, err := db.DeliveryInsert(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
}

// A claim larger than one slice returns exactly its limit, oldest deadline
// first (ties by id), each event once; the next claim goes on with the
// rest, and recording more events than a slice sets every one of them.
// Other writers run throughout, so on SQLite the claims and records also
// end transactions between slices for them.
func TestDeliveryClaimAndRecordAcrossSlices(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		const n = 150
		queueDeliveries(t, db, n, now)
		stop := make(chan struct{})
		noise := make(chan error, 1)
		go func() {
			for {
				select {
				case <-stop:
					noise <- nil
					return
				default:
				}
				if err := db.InTx(ctx, func(*store.Tx) error { return nil }); err != nil {
					noise <- err
					return
				}
			}
		}()
		defer func() {
			close(stop)
			if err := <-noise; err != nil {
				t.Errorf("a writer beside the claims: %v", err)
			}
		}()
		first, err := db.DeliveryClaim(ctx, "node-a", now, now.Add(time.Minute), 100, nil)
		if err != nil || len(first) != 100 {
			t.Fatalf("first claim = %d events, %v; want 100", len(first), err)
		}
		rest, err := db.DeliveryClaim(ctx, "node-a", now, now.Add(time.Minute), 100, nil)
		if err != nil || len(rest) != n-100 {
			t.Fatalf("second claim = %d events, %v; want %d", len(rest), err, n-100)
		}
		seen := map[string]bool{}
		all := append(first, rest...)
		for i, d := range all {
			if seen[d.ID] {
				t.Fatalf("%s claimed twice", d.ID)
			}
			seen[d.ID] = true
			if i > 0 {
				p := all[i-1]
				if d.DeadlineAt.Before(p.DeadlineAt) || d.DeadlineAt.Equal(p.DeadlineAt) && d.ID < p.ID {
					t.Fatalf("claim order: %s (deadline %v) after %s (deadline %v)", d.ID, d.DeadlineAt, p.ID, p.DeadlineAt)
				}
			}
		}
		if again, err := db.DeliveryClaim(ctx, "node-a", now, now.Add(time.Minute), 100, nil); err != nil || len(again) != 0 {
			t.Fatalf("claim with every event leased = %d events, %v; want none", len(again), err)
		}

		sent := now.Add(time.Second)
		for i, d := range all {
			d.Attempts = 1
			if i%3 == 0 {
				d.State, d.NextAt, d.LastError = model.DeliveryRetry, now.Add(time.Minute), "try again"
			} else {
				d.State, d.SentAt = model.DeliverySent, &sent
			}
		}
		if lost, err := db.DeliveryRecord(ctx, "node-b", all, sent); err != nil || lost != n {
			t.Fatalf("record by a node without the lease = %d lost, %v; want all %d lost", lost, err, n)
		}
		if lost, err := db.DeliveryRecord(ctx, "node-a", all, sent); err != nil || lost != 0 {
			t.Fatalf("record = %d lost, %v; want none", lost, err)
		}
		counts, err := db.DeliveryCounts(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if counts[model.DeliveryRetry] != n/3 || counts[model.DeliverySent] != n-n/3 {
			t.Errorf("after the record: %v; want %d retry and %d sent", counts, n/3, n-n/3)
		}
		// Released by the record, the retries are claimed again when due.
		if again, err := db.DeliveryClaim(ctx, "node-a", now.Add(time.Minute), now.Add(2*time.Minute), 1000, nil); err != nil || len(again) != n/3 {
			t.Fatalf("claim of the retries = %d events, %v; want %d", len(again), err, n/3)
		}
		// Node a dies holding them: once its lease ran out, a claim gives
		// them back and takes them.
		if again, err := db.DeliveryClaim(ctx, "node-c", now.Add(2*time.Minute), now.Add(3*time.Minute), 1000, nil); err != nil || len(again) != n/3 {
			t.Errorf("claim after node a's lease ran out = %d events, %v; want %d", len(again), err, n/3)
		}
	})
}

// ShouldYield is what lets a long job on SQLite's one writer end its
// transaction for the calls queued behind it: false while the call is
// alone, true once another InTx call waits, and false on PostgreSQL, where
// transactions run side by side.
func TestShouldYield(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		sqlite := db.Dialect() == store.SQLite
		other := make(chan error, 1)
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if tx.ShouldYield() {
				t.Error("ShouldYield with no other call")
			}
			go func() { other <- db.InTx(ctx, func(*store.Tx) error { return nil }) }()
			if !sqlite {
				if err := <-other; err != nil {
					t.Error(err)
				}
				if tx.ShouldYield() {
					t.Error("ShouldYield on PostgreSQL")
				}
				return nil
			}
			testkit.WaitWithin(t, 10*time.Second, "ShouldYield with another call queued", tx.ShouldYield)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if sqlite {
			if err := <-other; err != nil {
				t.Fatal(err)
			}
		}
	})
}

// A claim goes site by site: the site whose oldest due event is oldest
// first, each site's events oldest first; a site with only retries not due
// yet, or left out, gives nothing.
func TestDeliveryClaimSiteBySite(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		add := func(site model.SiteID, id string, deadline time.Duration, state model.DeliveryState, next time.Duration) {
			t.Helper()
			d := &model.Delivery{ID: id, SiteID: site, Kind: model.KindLead, EventName: "Lead", EventID: id, Payload: []byte(`{}`),
				State: state, NextAt: now.Add(next), DeadlineAt: now.Add(deadline), CreatedAt: now, UpdatedAt: now}
			if _, err := db.DeliveryInsert(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
		testkit.AddSites(t, db, now, "a", "b", "c", "d")
		add("a", "a1", 3*time.Hour, model.DeliveryPending, 0)
		add("a", "a2", 1*time.Hour, model.DeliveryPending, 0)
		add("b", "b1", 2*time.Hour, model.DeliveryRetry, -time.Minute)
		add("b", "b0", 30*time.Minute, model.DeliveryRetry, time.Minute) // not due: b's oldest due is b1
		add("c", "c1", time.Minute, model.DeliveryRetry, time.Hour)      // nothing due
		add("d", "d1", time.Minute, model.DeliveryPending, 0)            // left out
		got, err := db.DeliveryClaim(ctx, "n1", now, now.Add(time.Minute), 10, []model.SiteID{"d"})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, d := range got {
			ids = append(ids, d.ID)
		}
		if fmt.Sprint(ids) != "[a2 a1 b1]" {
			t.Errorf("claimed %v, want [a2 a1 b1]", ids)
		}
		if got, err := db.DeliveryClaim(ctx, "n1", now, now.Add(time.Minute), 1, nil); err != nil || len(got) != 1 || got[0].ID != "d1" {
			t.Errorf("then: %v %v", got, err)
		}
	})
}

// The sweep expires what is past its deadline and unsent: pending, retry
// and paused events, and leased ones whose lease ran out; an event within
// its deadline or under a live lease is left alone. On SQLite it reads
// ranges of the claim's index (leased events among them, their lease in
// the state row), not every unsent event.
func TestDeliverySweep(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		testkit.AddSite(t, db, &model.Site{ID: "a", Name: "A"}, now)
		add := func(id string, state model.DeliveryState, deadline time.Duration) {
			t.Helper()
			d := &model.Delivery{ID: id, SiteID: "a", Kind: model.KindLead, EventName: "Lead", EventID: id, Payload: []byte(`{}`),
				State: state, NextAt: now, DeadlineAt: now.Add(deadline), CreatedAt: now, UpdatedAt: now}
			if _, err := db.DeliveryInsert(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
		add("old-pending", model.DeliveryPending, -time.Minute)
		add("old-retry", model.DeliveryRetry, -time.Minute)
		add("old-paused", model.DeliveryPaused, -time.Minute)
		add("old-leased", model.DeliveryPending, -time.Minute)
		add("old-lease-over", model.DeliveryPending, -time.Minute)
		add("young", model.DeliveryRetry, time.Hour)
		add("sent", model.DeliverySent, -time.Minute)
		setLease(t, db, "old-leased", "n1", now.Add(time.Minute))
		setLease(t, db, "old-lease-over", "n1", now.Add(-time.Second))
		expired, resumed, err := db.DeliverySweep(ctx, now)
		if err != nil || expired != 4 || resumed != 0 {
			t.Fatalf("sweep: expired %d resumed %d %v", expired, resumed, err)
		}
		want := map[string]model.DeliveryState{"old-pending": model.DeliveryExpired, "old-retry": model.DeliveryExpired,
			"old-paused": model.DeliveryExpired, "old-lease-over": model.DeliveryExpired, "old-leased": model.DeliveryPending,
			"young": model.DeliveryRetry, "sent": model.DeliverySent}
		for id, st := range want {
			d, err := db.DeliveryByID(ctx, id)
			if err != nil || d.State != st || (st == model.DeliveryExpired && d.LastError == "") {
				t.Errorf("%s: %+v %v, want %s", id, d, err, st)
			}
		}
		if db.Dialect() != store.SQLite {
			return
		}
		if plans, err := db.TestSweepPlans(ctx); err != nil || !strings.Contains(plans[0], "delivery_state_claimable (site_id=? AND destination=? AND deadline_at<?)") ||
			!strings.Contains(plans[1], "delivery_state_site_state_created (site_id=? AND state=?)") {
			t.Errorf("sweep plans: %q %v", plans, err)
		}
	})
}

// A claim on PostgreSQL whose look-up found an event free that another
// node leased meanwhile (its lease was not committed when the look-up
// read) leaves that event out and keeps the lease it met: the claim's
// insert waits for the other node's transaction, finds its lease and
// skips it, and the claim reads which leases are its own.
func TestDeliveryClaimMeetsALeaseTakenMeanwhile(t *testing.T) {
	t.Parallel()
	t.Run("postgres", func(t *testing.T) {
		db := storetest.Postgres(t)
		ctx := context.Background()
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		queueDeliveries(t, db, 10, now)
		until := now.Add(time.Minute).UnixMilli()
		inserted, release, other := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			other <- db.InTx(ctx, func(tx *store.Tx) error {
				err := tx.TestExec(ctx, `INSERT INTO delivery_leases (id, until, owner) VALUES ('d0004', ?, 'node-b')`, until)
				close(inserted)
				if err != nil {
					return err
				}
				<-release
				return nil
			})
		}()
		<-inserted
		type result struct {
			list []*model.Delivery
			err  error
		}
		claimed := make(chan result, 1)
		go func() {
			list, err := db.DeliveryClaim(ctx, "node-a", now, now.Add(time.Minute), 100, nil)
			claimed <- result{list, err}
		}()
		// The claim waits for node b's transaction once its insert meets
		// the lease.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			n, err := db.TestQueryString(ctx, `SELECT CAST(COUNT(*) AS TEXT) FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%Store.DeliveryClaim%'`)
			if err != nil {
				t.Fatal(err)
			}
			if n == "1" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the claim never waited for node b's lease")
			}
		}
		close(release)
		if err := <-other; err != nil {
			t.Fatal(err)
		}
		got := <-claimed
		if got.err != nil {
			t.Fatal(got.err)
		}
		var ids []string
		for _, d := range got.list {
			ids = append(ids, d.ID)
		}
		if len(ids) != 9 || strings.Contains(strings.Join(ids, " "), "d0004") {
			t.Errorf("claimed %v, want the 9 events but d0004", ids)
		}
		owner, err := db.TestQueryString(ctx, `SELECT owner FROM delivery_leases WHERE id = 'd0004'`)
		if err != nil || owner != "node-b" {
			t.Errorf("d0004's lease: %q %v, want node-b's", owner, err)
		}
	})
}

// setLease leases the event id to owner until until as a claim would:
// a row of delivery_leases on PostgreSQL, the state row's columns on
// SQLite (migration 0620).
func setLease(t *testing.T, db *store.DB, id, owner string, until time.Time) {
	t.Helper()
	query := `INSERT INTO delivery_leases (id, until, owner) VALUES (?, ?, ?)`
	if db.Dialect() == store.SQLite {
		query = `UPDATE delivery_state SET lease_until = ?, lease_owner = ? WHERE id = ?`
		if err := db.TestExec(context.Background(), query, until.UnixMilli(), owner, id); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := db.TestExec(context.Background(), query, id, until.UnixMilli(), owner); err != nil {
		t.Fatal(err)
	}
}

// An event whose lease ran out is due at once (on SQLite the lease is in
// the state row, migration 0620; on PostgreSQL the claim takes it over,
// 0640), claimed by another node with its payload, and the first owner's
// late outcome is lost.
func TestDeliveryLeaseRunOut(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		queueDeliveries(t, db, 2, now)
		first, err := db.DeliveryClaim(ctx, "n1", now, now.Add(time.Minute), 10, nil)
		if err != nil || len(first) != 2 || string(first[0].Payload) != "{}" || first[0].EventID == "" {
			t.Fatalf("first claim: %v %v", first, err)
		}
		later := now.Add(2 * time.Minute)
		next, ok, err := db.DeliveryNextDue(ctx, later)
		if err != nil || !ok || next.After(later) {
			t.Errorf("next due with the leases run out: %v %v %v, want due by %v", next, ok, err, later)
		}
		second, err := db.DeliveryClaim(ctx, "n2", later, later.Add(time.Minute), 10, nil)
		if err != nil || len(second) != 2 || string(second[1].Payload) != "{}" || second[1].EventID != first[1].EventID {
			t.Fatalf("second claim: %v %v", second, err)
		}
		sent := later.Add(time.Second)
		for _, d := range first {
			d.State, d.SentAt, d.Attempts = model.DeliverySent, &sent, 1
		}
		if lost, err := db.DeliveryRecord(ctx, "n1", first, sent); err != nil || lost != 2 {
			t.Errorf("the first owner's late outcome: lost %d %v, want 2", lost, err)
		}
		if d, err := db.DeliveryByID(ctx, first[0].ID); err != nil || d.State != model.DeliveryPending {
			t.Errorf("after the first owner's late outcome: %+v %v, want still pending", d, err)
		}
		for _, d := range second {
			d.State, d.SentAt, d.Attempts = model.DeliverySent, &sent, 1
		}
		if lost, err := db.DeliveryRecord(ctx, "n2", second, sent); err != nil || lost != 0 {
			t.Errorf("the second owner's outcome: lost %d %v, want 0", lost, err)
		}
		if next, ok, err := db.DeliveryNextDue(ctx, sent); err != nil || ok {
			t.Errorf("next due after both are sent: %v %v %v, want none", next, ok, err)
		}
	})
}
