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

// BenchmarkLeadInsert measures storing a web lead (no external or Lead Ads
// id, no review time, as most are), 1,000 to a transaction so that the
// fsync does not hide the cost of the rows and their indexes.
func BenchmarkLeadInsert(b *testing.B) {
	db := storetest.SQLite(b)
	ctx := context.Background()
	now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	if err := db.SiteUpsert(ctx, &model.Site{ID: "a", Name: "A"}, now); err != nil {
		b.Fatal(err)
	}
	n := 0
	b.ResetTimer()
	for b.Loop() {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for range 1000 {
				n++
				at := now.Add(time.Duration(n) * time.Millisecond)
				l := &model.Lead{ID: model.LeadID(model.NewID("ld_", at)), SiteID: "a", EventID: benchKey(fmt.Sprint("ev", n)),
					Email: fmt.Sprintf("p%d@example.com", n), EmailKey: benchKey(fmt.Sprint("e", n)), PhoneKey: benchKey(fmt.Sprint("p", n)),
					Phone: "+905324128719", Name: "Ayşe", PageURL: "https://www.istanbuldis.example/", UserAgent: "Mozilla/5.0",
					SubmittedAt: at, ReceivedAt: at, Decision: model.Decision{Verdict: model.VerdictClean}}
				if err := tx.LeadInsert(ctx, l); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n), "us/lead")
}
