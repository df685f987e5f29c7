package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// searchFill stores n leads on SQLite as intake does, 32 callers at a
// time so that the group commit takes many to a transaction, and returns
// the database as the fill left its search index (no optimize).
func searchFill(b *testing.B, n int) *store.DB {
	b.Helper()
	ctx := context.Background()
	db := storetest.SQLite(b)
	now := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	testkit.AddSites(b, db, now, "a")
	first := []string{"Ayşe", "Mehmet", "Zeynep", "Can", "Elif", "Murat", "Deniz", "Ece", "Burak", "Selin"}
	last := []string{"Yılmaz", "Kaya", "Demir", "Şahin", "Çelik", "Aydın", "Öztürk", "Arslan", "Doğan", "Koç"}
	words := []string{"implant", "fiyat", "randevu", "zirkonyum", "beyazlatma", "kanal", "tedavi", "diş", "muayene", "acil"}
	var next sync.Mutex
	i := 0
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for {
				next.Lock()
				k := i
				i++
				next.Unlock()
				if k >= n {
					return
				}
				r := rand.New(rand.NewPCG(uint64(k), 7))
				id := model.LeadID(fmt.Sprintf("ld_%07d", k))
				l := testkit.Lead("a", id, now.Add(time.Duration(k)*time.Second), func(l *model.Lead) {
					l.Name = first[r.IntN(len(first))] + " " + last[r.IntN(len(last))]
					l.Email = fmt.Sprintf("p%d@example.com", k)
					l.Phone = fmt.Sprintf("0532 %03d %02d %02d", r.IntN(1000), r.IntN(100), r.IntN(100))
					l.Message = words[r.IntN(len(words))] + " " + words[r.IntN(len(words))] + " hakkında bilgi"
					l.Decision = model.Decision{Verdict: model.VerdictReview}
				})
				if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.LeadInsert(ctx, l) }); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return db
}

// BenchmarkLeadSearchAfterFill: the inbox's first page of a search right
// after 20,000 leads were stored through the group commit, its index as
// the fill left it: a name (many leads), a message word (many), an e-mail
// (one lead) and a term no lead has. Reported with the index's pages
// (rows of lead_search_data) and segments, which the fill's flushes and
// merges make.
func BenchmarkLeadSearchAfterFill(b *testing.B) {
	db := searchFill(b, 20000)
	ctx := context.Background()
	pages, err := db.TestQueryString(ctx, `SELECT CAST(COUNT(*) AS TEXT) FROM lead_search_data`)
	if err != nil {
		b.Fatal(err)
	}
	segments, err := db.TestQueryString(ctx, `SELECT CAST(COUNT(DISTINCT segid) AS TEXT) FROM lead_search_idx`)
	if err != nil {
		b.Fatal(err)
	}
	for _, term := range []string{"Zeynep Kaya", "zirkonyum", "p12345@example.com", "qxzqv"} {
		b.Run(term, func(b *testing.B) {
			for b.Loop() {
				if _, err := db.LeadList(ctx, store.LeadFilter{Search: term}); err != nil {
					b.Fatal(err)
				}
			}
			var n, segs float64
			fmt.Sscan(pages, &n)
			fmt.Sscan(segments, &segs)
			b.ReportMetric(n, "index_pages")
			b.ReportMetric(segs, "segments")
		})
	}
}
