package store_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestMigration0500ClickKept: on a database of the shape before migration
// 0500, with leads old and new, with and without a click identity, every
// lead reads the same after it (the migration clears nothing: retention
// does); LeadsClickToClear then finds the old ones that have one, through
// the new partial index on SQLite, and LeadClickClear takes them out of it.
func TestMigration0500ClickKept(t *testing.T) {
	eachBelow(t, 500, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Now().UTC().Truncate(time.Millisecond)
		testkit.AddSites(t, db, now, "a")
		var ids []model.LeadID
		for i := range 40 {
			id := model.LeadID(fmt.Sprintf("ld_%03d", i))
			at := now.Add(-time.Duration(i*5) * 24 * time.Hour)
			l := testkit.Lead("a", id, at, func(l *model.Lead) {
				l.Verdict, l.Email, l.Message, l.FBClid = model.VerdictClean, fmt.Sprintf("p%d@example.com", i), "merhaba", "IwAR"+fmt.Sprint(i)
				switch i % 4 {
				case 0:
					l.UserAgent = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)"
				case 1:
					l.ClientIP = "85.105.1.2"
				case 2:
					l.FBC, l.FBP = "fb.1.1700000000000.IwAR", "fb.1.1700000000000.42"
				}
				l.SourceDetail = map[string]string{"cookie._ttp": "ttp" + fmt.Sprint(i)}
			})
			if err := db.LeadInsert(ctx, l); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		read := func() []*model.Lead {
			t.Helper()
			var out []*model.Lead
			for _, id := range ids {
				l, err := db.LeadByID(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, l)
			}
			return out
		}
		before := read()
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		if after := read(); !reflect.DeepEqual(after, before) {
			t.Errorf("leads changed by the migration")
		}
		if db.Dialect() == store.SQLite {
			plan, err := db.TestLeadsClickToClearPlan(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(plan, "leads_click_kept") {
				t.Errorf("LeadsClickToClear does not read leads_click_kept:\n%s", plan)
			}
		}
		cut := now.Add(-90 * 24 * time.Hour)
		list, err := db.LeadsClickToClear(ctx, cut, 100)
		if err != nil {
			t.Fatal(err)
		}
		var want []model.LeadID
		for i := len(ids) - 1; i >= 0; i-- {
			if l := before[i]; l.ReceivedAt.Before(cut) && i%4 != 3 {
				want = append(want, l.ID)
			}
		}
		var got []model.LeadID
		for _, c := range list {
			got = append(got, c.ID)
			if ok, err := db.LeadClickClear(ctx, c, map[string]string{}); err != nil || !ok {
				t.Fatalf("clear %s: %v %v", c.ID, ok, err)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("leads to clear %v, want %v (oldest first)", got, want)
		}
		if list, err := db.LeadsClickToClear(ctx, cut, 100); err != nil || len(list) != 0 {
			t.Errorf("after clearing: %d leads left %v", len(list), err)
		}
	})
}
