package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

// BenchmarkLeadByEventIDMissing measures a look-up that finds nothing, as
// most of intake's do (the replay check of every lead), 1,000 to a
// transaction on the writer: about the fixed cost of one statement.
func BenchmarkLeadByEventIDMissing(b *testing.B) {
	db := storetest.SQLite(b)
	ctx := context.Background()
	n := 0
	for b.Loop() {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for range 1000 {
				n++
				if _, err := tx.LeadByEventID(ctx, "a", fmt.Sprint("ev", n)); err == nil {
					return fmt.Errorf("found a lead")
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/lookup")
}
