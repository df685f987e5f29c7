package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestMigration0360HistoryKeptByLead: on a database of the shape before
// migration 0360, with leads whose history entries come in random order
// (some at the same millisecond), every lead's history reads the same
// after the migration, oldest first; the lead_history table has no index
// but its key; a new entry still moves the lead's changed time, an entry's
// data is still replaced by its lead and id, and deleting a lead still
// takes its history with it.
func TestMigration0360HistoryKeptByLead(t *testing.T) {
	eachBelow(t, 360, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a")
		rng := rand.New(rand.NewPCG(3, 60))
		want := map[model.LeadID][]model.HistoryEntry{}
		var ids []model.LeadID
		for i := range 40 {
			id := model.LeadID(fmt.Sprintf("ld_%03d", i))
			at := now.Add(-time.Duration(rng.Int64N(int64(30 * 24 * time.Hour)))).Truncate(time.Millisecond)
			if err := db.TestExec(ctx, `INSERT INTO leads (id, site_id, event_id, submitted_at, received_at, verdict, decided_by,
				reasons) VALUES (?, 'a', ?, ?, ?, 'review', 'rules', '[]')`, string(id), fmt.Sprintf("ev%03d", i),
				at.UnixMilli(), at.UnixMilli()); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
			// A lead without a stored entry reads its intake entry from
			// its own columns (folded, migration 0550).
			folded := model.HistoryEntry{ID: "h_" + strings.TrimPrefix(string(id), "ld_"), LeadID: id, At: at.UTC(),
				Kind: model.HistoryVerdict, Data: map[string]any{"verdict": "review", "score": float64(0), "decided_by": "rules"}}
			want[id] = []model.HistoryEntry{folded}
			for k := range rng.IntN(5) {
				if k == 0 {
					want[id] = nil
				}
				hat := at.Add(time.Duration(rng.IntN(3)) * time.Hour)
				h := model.HistoryEntry{ID: fmt.Sprintf("h_%03d_%d_%d", i, rng.IntN(100), k), LeadID: id, At: hat.UTC(),
					Kind: model.HistoryVerdict, Data: map[string]any{"verdict": "clean", "n": float64(k)}}
				if err := db.TestExec(ctx, `INSERT INTO lead_history (id, lead_id, at, kind, data) VALUES (?, ?, ?, ?, ?)`,
					h.ID, string(id), hat.UnixMilli(), h.Kind, fmt.Sprintf(`{"verdict":"clean","n":%d}`, k)); err != nil {
					t.Fatal(err)
				}
				want[id] = append(want[id], h)
			}
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			w := slices.Clone(want[id])
			slices.SortFunc(w, func(a, b model.HistoryEntry) int {
				if c := a.At.Compare(b.At); c != 0 {
					return c
				}
				return strings.Compare(a.ID, b.ID)
			})
			got, err := db.HistoryByLead(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(w) || len(w) > 0 && !reflect.DeepEqual(got, w) {
				t.Errorf("%s: history after the migration\n%+v\nwant\n%+v", id, got, w)
			}
		}
		indexes := `SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'lead_history'`
		if db.Dialect() == store.Postgres {
			indexes = `SELECT COUNT(*) FROM pg_indexes WHERE tablename = 'lead_history' AND schemaname = current_schema()`
		}
		n, err := db.TestQueryString(ctx, `SELECT CAST((`+indexes+`) AS TEXT)`)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]string{true: "1", false: "0"}[db.Dialect() == store.Postgres]; n != want {
			t.Errorf("lead_history has %s indexes, want %s (its key alone)", n, want)
		}
		// The trigger of migration 0270 still moves the lead's changed time.
		later := now.Add(time.Hour)
		if err := db.HistoryInsert(ctx, &model.HistoryEntry{ID: "h_new", LeadID: ids[0], At: later, Kind: model.HistoryVerdict,
			Data: map[string]any{"verdict": "junk"}}); err != nil {
			t.Fatal(err)
		}
		changed, err := db.TestQueryString(ctx, `SELECT CAST(changed_at AS TEXT) FROM leads WHERE id = ?`, string(ids[0]))
		if err != nil || changed != fmt.Sprint(later.UnixMilli()) {
			t.Errorf("changed_at %q (%v) after a new entry, want %d", changed, err, later.UnixMilli())
		}
		if err := db.HistorySetData(ctx, ids[0], "h_new", map[string]any{"verdict": "clean"}); err != nil {
			t.Fatal(err)
		}
		hist, err := db.HistoryByLead(ctx, ids[0])
		if err != nil || len(hist) == 0 || hist[len(hist)-1].Data["verdict"] != "clean" {
			t.Errorf("history after HistorySetData: %+v (%v)", hist, err)
		}
		if err := db.TestExec(ctx, `DELETE FROM leads WHERE id = ?`, string(ids[0])); err != nil {
			t.Fatal(err)
		}
		left, err := db.TestQueryString(ctx, `SELECT CAST(COUNT(*) AS TEXT) FROM lead_history WHERE lead_id = ?`, string(ids[0]))
		if err != nil || left != "0" {
			t.Errorf("%s entries left of a deleted lead (%v)", left, err)
		}
	})
}
