package testkit_test

import (
	"context"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestFirstChange is the example CONTRIBUTING.md walks through: a fresh
// database, site dent, a lead built by the kit, a clock the test moves.
func TestFirstChange(t *testing.T) {
	t.Parallel() // it owns its database
	ctx := context.Background()
	db := storetest.New(t)
	clk := testkit.NewClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	site := testkit.AddSite(t, db, testkit.Site(testkit.WithMeta("111", model.ModeDryRun)), clk.Now())

	clk.Add(time.Hour)
	lead := testkit.Lead(site.ID, "ld_1", clk.Now(), func(l *model.Lead) { l.Email = "ayse@example.com" })
	if err := db.LeadInsert(ctx, lead); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the lead to be readable", func() bool {
		got, err := db.LeadByID(ctx, "ld_1")
		return err == nil && got.Email == "ayse@example.com" && got.SubmittedAt.Equal(clk.Now())
	})
}
