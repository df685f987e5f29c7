package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// A lead's time of change follows its history forward only (the trigger of
// migration 0270), and LeadChanges pages by (that time, id) within a site,
// up to Until.
func TestLeadChanges(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		testkit.AddSite(t, db, &model.Site{ID: "a", Name: "A"}, now)
		testkit.AddSite(t, db, &model.Site{ID: "b", Name: "B"}, now)
		for i, id := range []model.LeadID{"l1", "l2", "l3", "l4"} {
			site := model.SiteID("a")
			if id == "l4" {
				site = "b"
			}
			at := now.Add(time.Duration(i) * time.Minute)
			if err := db.LeadInsert(ctx, &model.Lead{ID: id, SiteID: site, EventID: string(id), SubmittedAt: at, ReceivedAt: at,
				Decision: model.Decision{Verdict: model.VerdictClean}}); err != nil {
				t.Fatal(err)
			}
			// Intake's own entry, at the time it was received: no change.
			if err := db.HistoryInsert(ctx, &model.HistoryEntry{ID: "h" + string(id), LeadID: id, At: at, Kind: model.HistoryVerdict}); err != nil {
				t.Fatal(err)
			}
		}
		// l1 changes after l3 came; an entry dated before that moves
		// nothing back.
		for i, at := range []time.Time{now.Add(10 * time.Minute), now.Add(5 * time.Minute)} {
			if err := db.HistoryInsert(ctx, &model.HistoryEntry{ID: fmt.Sprint("x", i), LeadID: "l1", At: at, Kind: model.HistoryStage}); err != nil {
				t.Fatal(err)
			}
		}
		page := func(p store.LeadChangesParams) string {
			t.Helper()
			p.Site = "a"
			list, err := db.LeadChanges(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, c := range list {
				out = append(out, fmt.Sprintf("%s@%d", c.Lead.ID, c.ChangedAt.Sub(now)/time.Minute))
			}
			return fmt.Sprint(out)
		}
		until := now.Add(time.Hour)
		for _, c := range []struct {
			p    store.LeadChangesParams
			want string
		}{
			{store.LeadChangesParams{Since: now, Until: until}, "[l2@1 l3@2 l1@10]"},
			{store.LeadChangesParams{Since: now, Until: until, Limit: 2}, "[l2@1 l3@2]"},
			{store.LeadChangesParams{After: now.Add(2 * time.Minute), AfterID: "l3", Until: until}, "[l1@10]"},
			{store.LeadChangesParams{After: now.Add(time.Minute), AfterID: "l1", Until: until}, "[l2@1 l3@2 l1@10]"},
			{store.LeadChangesParams{Since: now.Add(2 * time.Minute), Until: now.Add(9 * time.Minute)}, "[l3@2]"},
		} {
			if got := page(c.p); got != c.want {
				t.Errorf("%+v: %s, want %s", c.p, got, c.want)
			}
		}
		list, err := db.LeadsMatching(ctx, "a", store.LeadLookup{ID: "l1"}, 10)
		if err != nil || len(list) != 1 || !list[0].ChangedAt.Equal(now.Add(10*time.Minute)) {
			t.Errorf("LeadsMatching: %+v %v", list, err)
		}
	})
}
