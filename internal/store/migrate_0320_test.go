package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestMigration0320ReasonCountersOfLeadsThere: on a database of the shape
// before migration 0320, with leads of random reasons, verdicts, deciders
// and rules' verdicts (the first verdict history entry; a later one is not
// the rules'), the migration's counters equal a recount of the leads, and
// the learning card reads them.
func TestMigration0320ReasonCountersOfLeadsThere(t *testing.T) {
	eachBelow(t, 320, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a", "b")
		rng := rand.New(rand.NewPCG(3, 20))
		rules := map[model.LeadID]model.Verdict{}
		var leads []*model.Lead
		for i := range 400 {
			at := now.Add(-time.Duration(rng.Int64N(int64(10 * 24 * time.Hour))))
			l := &model.Lead{ID: model.LeadID(fmt.Sprintf("ld_%03d", i)), SiteID: model.SiteID([]string{"a", "b"}[rng.IntN(2)]), ReceivedAt: at,
				Decision: model.Decision{Verdict: randomVerdict(rng), Reasons: randomReasons(rng),
					DecidedBy: []string{model.DecidedByRules, model.DecidedByOwner, model.DecidedByCRM, model.DecidedByEvidence}[rng.IntN(4)]}}
			reasons, _ := json.Marshal(l.Reasons)
			if l.Reasons == nil {
				reasons = []byte("[]")
			}
			if err := db.TestExec(ctx, `INSERT INTO leads (id, site_id, event_id, submitted_at, received_at, verdict, decided_by, reasons)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, string(l.ID), string(l.SiteID), "ev"+string(l.ID), at.UnixMilli(), at.UnixMilli(),
				string(l.Verdict), l.DecidedBy, string(reasons)); err != nil {
				t.Fatal(err)
			}
			if rng.IntN(8) > 0 { // some leads have no history
				rules[l.ID] = randomVerdict(rng)
				for j, v := range []model.Verdict{rules[l.ID], l.Verdict} {
					if err := db.TestExec(ctx, `INSERT INTO lead_history (id, lead_id, at, kind, data) VALUES (?, ?, ?, 'verdict', ?)`,
						fmt.Sprintf("h_%03d_%d", i, j), string(l.ID), at.UnixMilli()+int64(j), `{"verdict":"`+string(v)+`"}`); err != nil {
						t.Fatal(err)
					}
				}
			}
			leads = append(leads, l)
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		want := withAgreement(recount{}, leads, rules)
		got := recount{}
		for _, site := range []model.SiteID{"a", "b"} {
			cs, err := db.Counters(ctx, site, model.Day(now)-11, model.Day(now))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				if strings.HasPrefix(c.Name, model.CounterReasons) || c.Name == model.CounterAgreement {
					got[counterKey{site, c.Day, c.Name, c.Dim}] += c.N
				}
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("reason counters after the migration:\n%v\nwant\n%v", got, want)
		}
		checkAgreement(t, db, want, now.Add(-11*24*time.Hour), "a", "b")
	})
}
