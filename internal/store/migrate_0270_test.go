package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// Migration 0270 dates the leads already there by their last history
// entry, so the first sync of an upgraded server lists them in the order
// they changed.
func TestMigration0270DatesChanges(t *testing.T) {
	eachBelow(t, 270, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		testkit.AddSite(t, db, &model.Site{ID: "a", Name: "A"}, now)
		for i, id := range []model.LeadID{"old1", "old2"} {
			at := now.Add(time.Duration(i) * time.Minute)
			if err := db.LeadInsert(ctx, &model.Lead{ID: id, SiteID: "a", EventID: string(id), SubmittedAt: at, ReceivedAt: at,
				Decision: model.Decision{Verdict: model.VerdictReview}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.HistoryInsert(ctx, &model.HistoryEntry{ID: "h1", LeadID: "old1", At: now.Add(time.Hour), Kind: model.HistoryStage}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		list, err := db.LeadChanges(ctx, store.LeadChangesParams{Site: "a", Since: now, Until: now.Add(2 * time.Hour)})
		if err != nil || len(list) != 2 || list[0].Lead.ID != "old2" || list[1].Lead.ID != "old1" ||
			!list[1].ChangedAt.Equal(now.Add(time.Hour)) {
			t.Errorf("after 0270: %+v %v", list, err)
		}
	})
}
