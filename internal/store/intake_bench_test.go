package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

// intakeDB is a database of one site with n leads and n visitors, as the
// intake look-ups meet it after a while.
func intakeDB(b *testing.B, n int) (*store.DB, time.Time) {
	db := storetest.SQLite(b)
	ctx := context.Background()
	now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	if err := db.SiteUpsert(ctx, &model.Site{ID: "a", Name: "A"}, now); err != nil {
		b.Fatal(err)
	}
	err := db.InTx(ctx, func(tx *store.Tx) error {
		for i := range n {
			at := now.Add(time.Duration(i) * time.Millisecond)
			if err := tx.VisitorUpsert(ctx, &model.Visitor{SiteID: "a", ID: fmt.Sprintf("v_%026d", i), FBC: "fb.1.1.x", FBP: "fb.1.2.y",
				FirstSeen: at, LastSeen: at, LastIP: "192.0.2.1", LastUserAgent: "Mozilla/5.0"}); err != nil {
				return err
			}
			l := &model.Lead{ID: model.LeadID(model.NewID("ld_", at)), SiteID: "a", EventID: benchKey(fmt.Sprint("ev", i)),
				EmailKey: benchKey(fmt.Sprint("e", i)), PhoneKey: benchKey(fmt.Sprint("p", i)),
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
	return db, now
}

func benchKey(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }

// BenchmarkLeadIntake measures what intake reads on the writer before it
// stores a new lead (LeadIntake: the replay check, the same person's
// earlier lead, the visitor to link), for a new person with a visitor, 1,000
// to a transaction, in a database of 20,000 leads and visitors.
func BenchmarkLeadIntake(b *testing.B) {
	db, now := intakeDB(b, 20000)
	ctx := context.Background()
	n := 0
	for b.Loop() {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for range 1000 {
				n++
				f, err := tx.LeadIntake(ctx, "a", store.IntakeLookup{EventID: benchKey(fmt.Sprint("new", n)),
					EmailKey: benchKey(fmt.Sprint("ne", n)), PhoneKey: benchKey(fmt.Sprint("np", n)), Since: now,
					Exclude: "ld_x", VisitorIDs: [2]string{fmt.Sprintf("v_%026d", n%20000)}, VisitEventID: "x"})
				if err != nil {
					return err
				}
				if f.Visitor == nil || f.Existing != "" || f.Previous != "" {
					return fmt.Errorf("found %+v", f)
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/lead")
}

// BenchmarkDeliveryInsertLead measures queueing a clean lead's two events
// (the raw lead event and the qualified one, each with a payload of about
// 1.2 kB) in one statement as intake does, 1,000 leads to a transaction.
func BenchmarkDeliveryInsertLead(b *testing.B) {
	db := storetest.SQLite(b)
	ctx := context.Background()
	now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	if err := db.SiteUpsert(ctx, &model.Site{ID: "a", Name: "A"}, now); err != nil {
		b.Fatal(err)
	}
	payload := []byte(`{"event_name":"Lead","event_time":1773133200,"event_id":"` + benchKey("x")[:36] + `","action_source":"website",` +
		`"event_source_url":"https://www.istanbuldis.example/implant","user_data":{"em":["` + benchKey("em") + `"],"ph":["` + benchKey("ph") +
		`"],"fn":["` + benchKey("fn") + `"],"ln":["` + benchKey("ln") + `"],"country":["` + benchKey("tr") + `"],` +
		`"client_ip_address":"192.0.2.1","client_user_agent":"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",` +
		`"fbc":"fb.1.1773133100000.IwAR0abcdefghijklmnopqrstuvwxyz0123456789","fbp":"fb.1.1773133000000.1234567890"},"custom_data":{"lead_status":"qualified","qualified_by":"rules"}}`)
	var ids model.IDGen
	n := 0
	for b.Loop() {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for range 1000 {
				n++
				at := now.Add(time.Duration(n) * time.Millisecond)
				lead := model.LeadID(ids.New("ld_", at))
				var ds []*model.Delivery
				for _, k := range []struct{ kind, name, id string }{
					{model.KindLead, "Lead", benchKey(fmt.Sprint("ev", n))[:36]},
					{model.KindQualified, "QualifiedLead", benchKey(fmt.Sprint("q", n))[:36]},
				} {
					ds = append(ds, &model.Delivery{ID: ids.New("dl_", at), SiteID: "a", LeadID: lead, Kind: k.kind,
						EventName: k.name, EventID: k.id, PixelID: "123456789012345", Payload: payload, State: model.DeliveryPending,
						NextAt: at, DeadlineAt: at.Add(model.MaxEventAge), CreatedAt: at, UpdatedAt: at})
				}
				if _, err := tx.DeliveryInsertAll(ctx, ds); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/lead")
}
