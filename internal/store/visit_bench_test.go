package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

// BenchmarkVisitStore measures a collect's store work as intake does it:
// the visitor looked up, written when new (two in three visits, as the load
// script's mix has it), the visit stored and its PageView queued; 1,000
// visits to a transaction so that the fsync does not hide the rows' cost.
func BenchmarkVisitStore(b *testing.B) {
	ctx := context.Background()
	// No background checkpoint: the figure is the visits' own work (and
	// steady under callgrind, which a timed checkpointer is not).
	db, err := store.Open(ctx, storetest.SQLiteDSN(b), store.Options{CheckpointEvery: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx, time.Now); err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	if err := db.SiteUpsert(ctx, &model.Site{ID: "a", Name: "A"}, now); err != nil {
		b.Fatal(err)
	}
	var ids model.IDGen
	var known []string
	payload := []byte(`{"event_name":"PageView","event_time":1773133200,"event_id":"0195c3a0-0000-7000-8000-000000000000","action_source":"website","event_source_url":"https://www.istanbuldis.example/implant?utm_source=facebook","user_data":{"client_ip_address":"203.0.113.7","client_user_agent":"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15","fbp":"fb.1.1773133200000.1234567890"}}`)
	n := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for range 1000 {
				n++
				at := now.Add(time.Duration(n) * time.Millisecond)
				var v *model.Visitor
				if n%3 == 0 && len(known) > 0 {
					var err error
					if v, err = tx.VisitorByID(ctx, "a", known[(n*7919)%len(known)]); err != nil {
						return err
					}
				} else {
					v = &model.Visitor{ID: ids.New("v_", at), SiteID: "a", FirstSeen: at, LastSeen: at,
						FBP: "fb.1.1773133200000.1234567890", LastIP: "203.0.113.7", LastUserAgent: "Mozilla/5.0"}
					if err := tx.VisitorUpsert(ctx, v); err != nil {
						return err
					}
					known = append(known, v.ID)
				}
				visit := &model.Visit{SiteID: "a", VisitorID: v.ID, EventID: model.NewUUIDv7(at),
					UTM: model.UTM{Source: "facebook"}, At: at}
				if err := tx.VisitInsert(ctx, visit); err != nil {
					return err
				}
				d := &model.Delivery{SiteID: "a", Kind: model.KindPageView, EventID: visit.EventID, PixelID: "1", Payload: payload, CreatedAt: at}
				if _, err := tx.PageViewEnqueue(ctx, d); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n), "us/visit")
}
