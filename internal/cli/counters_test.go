package cli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/config"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// TestCountersRebuild: `cleanads counters rebuild` puts counters that went
// wrong back to the count of the rows, and says what it counted.
func TestCountersRebuild(t *testing.T) {
	cfg, _, _ := runInit(t, t.TempDir())
	ctx := context.Background()
	c, err := config.Load(cfg, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, c.Database, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now()
	one := 1
	if err := db.SiteUpsert(ctx, &model.Site{ID: "istanbuldis", Name: "Istanbul"}, now); err != nil {
		t.Fatal(err)
	}
	if err := db.VisitorUpsert(ctx, &model.Visitor{ID: "v_1", SiteID: "istanbuldis", FirstSeen: now, LastSeen: now}); err != nil {
		t.Fatal(err)
	}
	if err := db.VisitInsert(ctx, &model.Visit{SiteID: "istanbuldis", VisitorID: "v_1",
		At: now, EventID: "ev-1", LeadForms: &one}); err != nil {
		t.Fatal(err)
	}
	if err := db.CountersAdd(ctx, "istanbuldis", model.Day(now)-1, "x", model.Count{Name: model.CounterVisits, N: 500},
		model.Count{Name: model.CounterStages, Dim: model.StageWon, N: 3}, model.Count{Name: model.CounterStageCents, Dim: "won EUR", N: 600000}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI("", "counters", "rebuild", "--config", cfg)
	if code != 0 || !strings.Contains(out, "site istanbuldis: ") || !strings.Contains(out, "recounted: 1 visits (1 to pages with a lead form), 0 leads (0 without t.js's timing), 0 stages (0 won)") {
		t.Fatalf("counters rebuild: exit %d\n%s%s", code, out, errOut)
	}
	cs, err := db.Counters(ctx, "istanbuldis", 0, model.Day(now))
	if err != nil || cs.Sum(model.CounterVisits, "*", 0, model.Day(now)) != 1 || cs.Sum(model.CounterStages, "*", 0, model.Day(now)) != 0 ||
		cs.Sum(model.CounterStageCents, "*", 0, model.Day(now)) != 0 {
		t.Errorf("counters after the rebuild: %v %v", cs, err)
	}
	if code, _, errOut := runCLI("", "counters", "rebuild", "--config", cfg, "--site", "nope"); code == 0 || !strings.Contains(errOut, `no site "nope"`) {
		t.Errorf("an unknown site: exit %d %s", code, errOut)
	}
}
