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

// TestMigration0330ReportCountersOfLeadsThere: on a database of the shape
// before migration 0330, with leads of random sources, campaigns (on the
// page, from Meta), verdicts, reasons and stages, the migration's campaign
// report counters equal a recount of the leads.
func TestMigration0330ReportCountersOfLeadsThere(t *testing.T) {
	eachBelow(t, 330, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a", "b")
		rng := rand.New(rand.NewPCG(3, 30))
		for i := range 300 {
			at := now.Add(-time.Duration(rng.Int64N(int64(20 * 24 * time.Hour))))
			source := []string{model.SourceWeb, model.SourceLeadAds, model.SourceWhatsApp}[rng.IntN(3)]
			page, detail := "https://a.example/", "{}"
			switch campaign := []string{"", "spring", "autumn"}[rng.IntN(3)]; {
			case campaign == "":
			case source == model.SourceLeadAds:
				detail = `{"campaign_name":"` + campaign + `","ad_name":"video"}`
			default:
				page += "?utm_campaign=" + campaign + "&utm_term=women"
			}
			verdict := randomVerdict(rng)
			if err := db.TestExec(ctx, `INSERT INTO leads (id, site_id, event_id, submitted_at, received_at, verdict, decided_by,
				reasons, source, source_detail, page_url) VALUES (?, ?, ?, ?, ?, ?, ?, '[{"code":"PRICE_ONLY","points":40}]', ?, ?, ?)`,
				fmt.Sprintf("ld_%03d", i), []string{"a", "b"}[rng.IntN(2)], fmt.Sprintf("ev%03d", i), at.UnixMilli(), at.UnixMilli(),
				string(verdict), model.DecidedByRules, source, detail, page); err != nil {
				t.Fatal(err)
			}
			for _, stage := range []string{"qualified", model.StageWon} {
				if rng.IntN(3) > 0 {
					continue
				}
				if err := db.TestExec(ctx, `INSERT INTO lead_stages (lead_id, stage, at, event_name, event_id, value, currency, action_source, created_at)
					VALUES (?, ?, ?, 'E', ?, 12.5, 'EUR', 'system_generated', ?)`, fmt.Sprintf("ld_%03d", i), stage, at.UnixMilli()+1000,
					fmt.Sprintf("st%03d%s", i, stage), at.UnixMilli()); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		checkReportCounters(t, db, model.Day(now)-21, model.Day(now), "a", "b")
	})
}
