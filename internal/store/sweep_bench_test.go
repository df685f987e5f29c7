package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

// BenchmarkDeliverySweep measures one sweep, on the writer, over a backlog
// of 100,000 unsent events of which none has expired: the state a sweep
// meets every poll during a long outage.
func BenchmarkDeliverySweep(b *testing.B) {
	db := backlog(b)
	now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	b.ResetTimer()
	for range b.N {
		if expired, _, err := db.DeliverySweep(context.Background(), now); err != nil || expired != 0 {
			b.Fatal(expired, err)
		}
	}
}

// BenchmarkDeliveryNextDue measures the runner's look-up of when to wake,
// made after every claim that was not full, over the same backlog.
func BenchmarkDeliveryNextDue(b *testing.B) {
	db := backlog(b)
	now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	b.ResetTimer()
	for range b.N {
		if next, ok, err := db.DeliveryNextDue(context.Background(), now); err != nil || !ok || !next.Equal(now.Add(time.Hour)) {
			b.Fatal(next, ok, err)
		}
	}
}

// backlog is a database holding 100,000 retries of 4 sites, due in an hour.
func backlog(b *testing.B) *store.DB {
	db := storetest.SQLite(b)
	ctx := context.Background()
	now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	for i := range 4 {
		if err := db.SiteUpsert(ctx, &model.Site{ID: model.SiteID(fmt.Sprint("s", i)), Name: "S"}, now); err != nil {
			b.Fatal(err)
		}
	}
	err := db.InTx(ctx, func(tx *store.Tx) error {
		for i := range 100_000 {
			d := &model.Delivery{ID: fmt.Sprintf("dl_%06d", i), SiteID: model.SiteID(fmt.Sprint("s", i%4)), Kind: model.KindLead,
				EventName: "Lead", EventID: fmt.Sprint(i), Payload: []byte(`{}`), State: model.DeliveryRetry,
				NextAt: now.Add(time.Hour), DeadlineAt: now.Add(time.Duration(i%1000+1) * time.Hour), CreatedAt: now, UpdatedAt: now}
			if _, err := tx.DeliveryInsert(ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return db
}
