package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestMigration0351LeadAdsCounterOfLeadsThere: on a database of the shape
// before migration 0351, with leads of random days, verdicts and Lead Ads
// ids, the readiness page's lead figures read
// from the counters the migration fills equal a count of the leads.
func TestMigration0351LeadAdsCounterOfLeadsThere(t *testing.T) {
	eachBelow(t, 351, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a", "b")
		rng := rand.New(rand.NewPCG(3, 51))
		type figures struct{ leads, notJunk, leadAds int }
		want := map[model.SiteID]*figures{"a": {}, "b": {}}
		to := now.Truncate(24 * time.Hour)
		from := to.AddDate(0, 0, -model.ReadyPeriodDays)
		for i := range 300 {
			site := []model.SiteID{"a", "b"}[rng.IntN(2)]
			at := now.Add(-time.Duration(rng.Int64N(int64(40 * 24 * time.Hour))))
			verdict := randomVerdict(rng)
			leadAds := ""
			if rng.IntN(2) == 0 {
				leadAds = fmt.Sprintf("9%014d", i)
			}
			if !at.Before(from) && at.Before(to) {
				w := want[site]
				w.leads++
				if verdict != model.VerdictJunk {
					w.notJunk++
				}
				if leadAds != "" {
					w.leadAds++
				}
			}
			if err := db.TestExec(ctx, `INSERT INTO leads (id, site_id, event_id, submitted_at, received_at, verdict, decided_by,
				reasons, source, lead_ads_id) VALUES (?, ?, ?, ?, ?, ?, ?, '[]', ?, ?)`,
				fmt.Sprintf("ld_%03d", i), string(site), fmt.Sprintf("ev%03d", i), at.UnixMilli(), at.UnixMilli(),
				string(verdict), model.DecidedByRules, model.SourceLeadAds, leadAds); err != nil {
				t.Fatal(err)
			}
			// The verdicts' counters, which intake keeps since migration 0261.
			if err := db.CountersAdd(ctx, site, model.Day(at), fmt.Sprintf("ld_%03d", i),
				model.Count{Name: model.CounterVerdicts, Dim: string(verdict), N: 1}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		for site, w := range want {
			f, err := db.ReadinessFigures(ctx, site, from, to)
			if err != nil {
				t.Fatal(err)
			}
			if f.Leads != w.leads || f.NotJunk != w.notJunk || f.LeadAds != w.leadAds || w.leadAds == 0 {
				t.Errorf("%s: readiness leads %d, not junk %d, Instant Forms %d after the migration; want %+v", site, f.Leads, f.NotJunk,
					f.LeadAds, *w)
			}
		}
	})
}
