package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// enqueuePageViews queues n PageViews of site, their event ids in order.
func enqueuePageViews(t *testing.T, db *store.DB, site model.SiteID, n int, at time.Time) []*model.Delivery {
	t.Helper()
	ctx := context.Background()
	var out []*model.Delivery
	for i := range n {
		d := &model.Delivery{SiteID: site, Kind: model.KindPageView, EventName: model.PageViewEvent,
			EventID: fmt.Sprintf("%s-pv-%04d", site, i), PixelID: "px-" + string(site),
			Payload: fmt.Appendf(nil, `{"event_name":"PageView","n":%d}`, i), CreatedAt: at}
		if ok, err := db.PageViewEnqueue(ctx, d); err != nil || !ok {
			t.Fatalf("enqueue %d: %v %v", i, ok, err)
		}
		out = append(out, d)
	}
	return out
}

func eventIDs(ds []*model.Delivery) []string {
	var ids []string
	for _, d := range ds {
		ids = append(ids, d.EventID)
	}
	return ids
}

// Queued PageViews fill a claim after the outbox, per site oldest first;
// a site's queue is leased to one node, which renews it at each claim and
// loses it when it runs out. Sent ones leave the queue and are counted;
// one given back stays; a retry moves into the outbox with its outcome.
func TestPageViewQueue(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		lease := now.Add(10 * time.Minute)
		testkit.AddSites(t, db, now, "a", "b")
		if _, ok, err := db.DeliveryNextDue(ctx, now); err != nil || ok {
			t.Fatalf("empty: due %v %v", ok, err)
		}
		a := enqueuePageViews(t, db, "a", 3, now)
		b := enqueuePageViews(t, db, "b", 2, now)
		if ok, err := db.PageViewEnqueue(ctx, a[0]); err != nil || ok {
			t.Errorf("the same PageView again: %v %v", ok, err)
		}
		if next, ok, err := db.DeliveryNextDue(ctx, now); err != nil || !ok || !next.Equal(now) {
			t.Errorf("queued PageViews are due now: %v %v %v", next, ok, err)
		}
		got, err := db.VisitPageView(ctx, "a", a[1].EventID)
		if err != nil || !got.Queued || got.State != model.DeliveryPending || got.PixelID != "px-a" ||
			string(got.Payload) != string(a[1].Payload) || !got.DeadlineAt.Equal(now.Add(model.MaxEventAge)) {
			t.Fatalf("queued PageView: %+v %v", got, err)
		}
		// An outbox event goes first.
		lead := &model.Delivery{ID: "dl-lead", SiteID: "b", Kind: model.KindLead, EventName: "Lead", EventID: "lead-1",
			Payload: []byte(`{}`), State: model.DeliveryPending, NextAt: now, DeadlineAt: now.Add(time.Hour), CreatedAt: now, UpdatedAt: now}
		if _, err := db.DeliveryInsert(ctx, lead); err != nil {
			t.Fatal(err)
		}
		claim, err := db.DeliveryClaim(ctx, "n1", now, lease, 4, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"lead-1", "a-pv-0000", "a-pv-0001", "a-pv-0002"}; fmt.Sprint(eventIDs(claim)) != fmt.Sprint(want) {
			t.Fatalf("claim %v, want %v", eventIDs(claim), want)
		}
		// Another node gets nothing of a's queue, but b's.
		if claim2, err := db.DeliveryClaim(ctx, "n2", now, lease, 10, nil); err != nil || fmt.Sprint(eventIDs(claim2)) != fmt.Sprint(eventIDs(b)) {
			t.Fatalf("second node: %v %v", eventIDs(claim2), err)
		}
		// The owner claims its queue again unless it skips it (the runner
		// skips sites it is sending for).
		if again, err := db.DeliveryClaim(ctx, "n1", now, lease, 10, []model.SiteID{"b"}); err != nil || len(again) != 3 {
			t.Fatalf("owner again: %v %v", eventIDs(again), err)
		}
		pv := claim[1:]
		sentAt := now.Add(time.Second)
		pv[0].State, pv[0].SentAt, pv[0].Attempts = model.DeliverySent, &sentAt, 1
		pv[1].State, pv[1].Attempts, pv[1].NextAt, pv[1].LastError = model.DeliveryRetry, 1, now.Add(time.Minute), "code 2"
		pv[1].Response, pv[1].Mode = []byte(`{"error":{"code":2}}`), model.ModeLive
		// pv[2] is given back unchanged.
		if lost, err := db.DeliveryRecord(ctx, "n1", claim, now.Add(time.Second)); err != nil || lost != 0 {
			t.Fatalf("record: %d %v", lost, err)
		}
		if _, err := db.VisitPageView(ctx, "a", pv[0].EventID); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("a sent PageView is gone: %v", err)
		}
		moved, err := db.VisitPageView(ctx, "a", pv[1].EventID)
		if err != nil || moved.Queued || moved.ID == "" || moved.State != model.DeliveryRetry || moved.Attempts != 1 ||
			!moved.NextAt.Equal(now.Add(time.Minute)) || moved.LastError != "code 2" || string(moved.Payload) != string(a[1].Payload) ||
			moved.PixelID != "px-a" || !moved.DeadlineAt.Equal(now.Add(model.MaxEventAge)) || moved.Mode != model.ModeLive {
			t.Errorf("retry moved into the outbox: %+v %v", moved, err)
		}
		if d, err := db.VisitPageView(ctx, "a", pv[2].EventID); err != nil || !d.Queued {
			t.Errorf("given back: %+v %v", d, err)
		}
		counts, err := db.DeliveryCounts(ctx, "a")
		if err != nil || counts[model.DeliverySent] != 1 || counts[model.DeliveryRetry] != 1 || counts[model.DeliveryPending] != 1 || len(counts) != 3 {
			t.Errorf("counts of a: %v %v", counts, err)
		}
		if queued, sent, err := db.PageViewStats(ctx, "", now); err != nil || queued != 3 || sent != 1 {
			t.Errorf("stats: queued %d sent %d %v", queued, sent, err)
		}
		st, err := db.Stats(ctx, now)
		if err != nil || fmt.Sprint(st.Deliveries["a"]) != "map[pending:1 retry:1 sent:1]" ||
			fmt.Sprint(st.Deliveries["b"]) != "map[pending:3]" || !st.OldestDue.Equal(now) {
			t.Errorf("metrics: %+v %v", st, err)
		}
		if _, sent, _ := db.PageViewStats(ctx, "a", now.Add(48*time.Hour)); sent != 0 {
			t.Errorf("sent counted on a later day: %d", sent)
		}
		// The outcome of the last PageView n1 claimed (a-pv-0002, given
		// back) ended its lease: n2 takes a's queue at once.
		over, err := db.DeliveryClaim(ctx, "n2", now, lease, 10, []model.SiteID{"b"})
		if err != nil || fmt.Sprint(eventIDs(over)) != "[a-pv-0002]" {
			t.Fatalf("after n1's outcomes: %v %v", eventIDs(over), err)
		}
		// b's queue stays n2's, unrecorded, until the lease runs out; then
		// n1 takes it over (after the retry, due by then, from the outbox).
		if got, err := db.DeliveryClaim(ctx, "n1", now, lease, 10, []model.SiteID{"a"}); err != nil || fmt.Sprint(eventIDs(got)) != "[lead-1]" {
			t.Fatalf("b leased to n2: %v %v", eventIDs(got), err)
		}
		later := lease.Add(time.Millisecond)
		took, err := db.DeliveryClaim(ctx, "n1", later, later.Add(time.Minute), 10, []model.SiteID{"a"})
		if err != nil || fmt.Sprint(eventIDs(took)) != "[lead-1 b-pv-0000 b-pv-0001]" {
			t.Fatalf("take-over: %v %v", eventIDs(took), err)
		}
		if again, err := db.DeliveryClaim(ctx, "n2", later, later.Add(time.Minute), 10, []model.SiteID{"a"}); err != nil || len(again) != 0 {
			t.Errorf("the old owner after the take-over: %v %v", eventIDs(again), err)
		}
		// A visitor erased meanwhile: its PageView leaves the queue, and a
		// record of it afterwards moves nothing.
		if n, err := db.PageViewForget(ctx, "a", []string{"a-pv-0002", "nope"}); err != nil || n != 1 {
			t.Fatalf("forget: %d %v", n, err)
		}
		over[0].State, over[0].LastError = model.DeliveryDead, "refused"
		if _, err := db.DeliveryRecord(ctx, "n2", over, later); err != nil {
			t.Fatal(err)
		}
		if _, err := db.VisitPageView(ctx, "a", "a-pv-0002"); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("erased PageView came back: %v", err)
		}
	})
}

// A claim of more queued PageViews than a slice returns exactly its limit,
// in order, each once, while other writers run; recording them all sent
// empties the queue.
func TestPageViewQueueAcrossSlices(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		testkit.AddSite(t, db, &model.Site{ID: "a", Name: "A"}, now)
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for i := range 300 {
				d := &model.Delivery{SiteID: "a", EventID: fmt.Sprintf("pv-%04d", i), Payload: []byte(`{}`), CreatedAt: now}
				if _, err := tx.PageViewEnqueue(ctx, d); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				default:
					db.InTx(ctx, func(*store.Tx) error { return nil })
				}
			}
		}()
		claim, err := db.DeliveryClaim(ctx, "n1", now, now.Add(time.Minute), 250, nil)
		close(stop)
		<-done
		if err != nil || len(claim) != 250 {
			t.Fatalf("claim: %d %v", len(claim), err)
		}
		for i, d := range claim {
			if d.EventID != fmt.Sprintf("pv-%04d", i) {
				t.Fatalf("claim[%d] = %s", i, d.EventID)
			}
			d.State = model.DeliverySent
		}
		if _, err := db.DeliveryRecord(ctx, "n1", claim, now); err != nil {
			t.Fatal(err)
		}
		if queued, sent, err := db.PageViewStats(ctx, "a", now); err != nil || queued != 50 || sent != 250 {
			t.Errorf("after: queued %d sent %d %v", queued, sent, err)
		}
	})
}
