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
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// historyRows counts a lead's stored history entries.
func historyRows(t *testing.T, ctx context.Context, db *store.DB, id model.LeadID) string {
	t.Helper()
	n, err := db.TestQueryString(ctx, `SELECT CAST(COUNT(*) AS TEXT) FROM lead_history WHERE lead_id = ?`, string(id))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestHistoryFolded: a new lead's intake entry that says only its verdict,
// score and who decided is not stored, and reads the same; one that says
// more is stored; a verdict change stores the folded entry first, with
// what it said, and a later entry comes after it.
func TestHistoryFolded(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC().Truncate(time.Millisecond)
		testkit.AddSites(t, db, now, "a")
		write := func(id model.LeadID, data map[string]any) model.HistoryEntry {
			t.Helper()
			l := testkit.Lead("a", id, now, func(l *model.Lead) {
				l.Decision = model.Decision{Verdict: model.VerdictReview, Score: 25, DecidedBy: model.DecidedByRules}
			})
			h := &model.HistoryEntry{ID: "h_" + string(id)[3:], LeadID: id, At: now, Kind: model.HistoryVerdict, Data: data}
			if err := db.LeadIntakeWrite(ctx, store.LeadWrite{Lead: l, History: h}); err != nil {
				t.Fatal(err)
			}
			return model.HistoryEntry{ID: h.ID, LeadID: id, At: now, Kind: h.Kind, Data: map[string]any{}}
		}
		plain := write("ld_plain", map[string]any{"verdict": model.VerdictReview, "score": 25, "decided_by": model.DecidedByRules})
		plain.Data = map[string]any{"verdict": "review", "score": float64(25), "decided_by": "rules"}
		token := write("ld_token", map[string]any{"verdict": model.VerdictReview, "score": 25, "decided_by": model.DecidedByRules,
			"form_token": map[string]any{"checked": true}})
		if n := historyRows(t, ctx, db, "ld_plain"); n != "0" {
			t.Errorf("a plain intake entry is stored: %s rows", n)
		}
		if n := historyRows(t, ctx, db, "ld_token"); n != "1" {
			t.Errorf("an intake entry with the form token's check: %s rows, want 1", n)
		}
		read := func(id model.LeadID) []model.HistoryEntry {
			t.Helper()
			h, err := db.HistoryByLead(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return h
		}
		if got := read("ld_plain"); !reflect.DeepEqual(got, []model.HistoryEntry{plain}) {
			t.Errorf("folded history\n%+v\nwant\n%+v", got, plain)
		}
		if got := read("ld_token"); len(got) != 1 || got[0].ID != token.ID || got[0].Data["form_token"] == nil {
			t.Errorf("stored history %+v", got)
		}

		later := now.Add(time.Minute)
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.LeadSetDecision(ctx, "ld_plain", model.Decision{Verdict: model.VerdictClean, DecidedBy: model.DecidedByOwner}, nil); err != nil {
				return err
			}
			return tx.HistoryInsert(ctx, &model.HistoryEntry{ID: "h_later", LeadID: "ld_plain", At: later, Kind: model.HistoryVerdict,
				Data: map[string]any{"verdict": "clean", "was": "review", "decided_by": "owner"}})
		}); err != nil {
			t.Fatal(err)
		}
		got := read("ld_plain")
		if len(got) != 2 || !reflect.DeepEqual(got[0], plain) || got[1].ID != "h_later" {
			t.Errorf("history after a verdict change\n%+v\nwant the intake entry as it was, then h_later", got)
		}
		if n := historyRows(t, ctx, db, "ld_plain"); n != "2" {
			t.Errorf("%s stored entries after a verdict change, want 2", n)
		}
	})
}

// TestMigration0550HistoryFolded: on a database of the shape before
// migration 0550, a lead whose only entry is its plain intake entry loses
// the row and reads the same history (its id now the lead's); a lead with
// more entries, or an intake entry that says more, or one its lead's
// columns no longer say, keeps its rows.
func TestMigration0550HistoryFolded(t *testing.T) {
	eachBelow(t, 550, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Now().UTC().Truncate(time.Millisecond)
		testkit.AddSites(t, db, now, "a")
		type entry struct {
			at   time.Time
			data string
		}
		cases := []struct {
			id      model.LeadID
			verdict string
			entries []entry
			folds   bool
		}{
			{"ld_plain", "review", []entry{{now, `{"decided_by":"rules","score":25,"verdict":"review"}`}}, true},
			{"ld_more", "review", []entry{{now, `{"decided_by":"rules","score":25,"verdict":"review"}`},
				{now.Add(time.Hour), `{"kind":"whatsapp"}`}}, false},
			{"ld_token", "review", []entry{{now, `{"decided_by":"rules","form_token":{"checked":true},"score":25,"verdict":"review"}`}}, false},
			{"ld_changed", "clean", []entry{{now, `{"decided_by":"rules","score":25,"verdict":"review"}`}}, false},
			{"ld_late", "review", []entry{{now.Add(time.Second), `{"decided_by":"rules","score":25,"verdict":"review"}`}}, false},
		}
		before := map[model.LeadID][]model.HistoryEntry{}
		for _, c := range cases {
			if err := db.TestExec(ctx, `INSERT INTO leads (id, site_id, event_id, submitted_at, received_at, verdict, score, decided_by,
				reasons) VALUES (?, 'a', ?, ?, ?, ?, 25, 'rules', '[]')`, string(c.id), "ev-"+string(c.id), now.UnixMilli(), now.UnixMilli(),
				c.verdict); err != nil {
				t.Fatal(err)
			}
			for i, e := range c.entries {
				if err := db.TestExec(ctx, `INSERT INTO lead_history (id, lead_id, at, kind, data) VALUES (?, ?, ?, 'verdict', ?)`,
					fmt.Sprintf("h_old%d", i), string(c.id), e.at.UnixMilli(), e.data); err != nil {
					t.Fatal(err)
				}
			}
			h, err := db.HistoryByLead(ctx, c.id)
			if err != nil {
				t.Fatal(err)
			}
			before[c.id] = h
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			got, err := db.HistoryByLead(ctx, c.id)
			if err != nil {
				t.Fatal(err)
			}
			want := before[c.id]
			rows := fmt.Sprint(len(c.entries))
			if c.folds {
				rows = "0"
				want = []model.HistoryEntry{want[0]}
				want[0].ID = "h_" + string(c.id)[3:]
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: history after the migration\n%+v\nwant\n%+v", c.id, got, want)
			}
			if n := historyRows(t, ctx, db, c.id); n != rows {
				t.Errorf("%s: %s stored entries, want %s", c.id, n, rows)
			}
		}
	})
}

// TestHistoryFoldedReadsAsStored: two sites get the same leads and the same
// decisions afterwards, one's intake entries folded, the other's stored
// (they say one thing more). Every reader of the history answers the same
// for both: the history itself (ids and that one thing aside), the rules'
// first verdict in the agreement counters as kept and as recounted, and
// the CRM sync's time of last change.
func TestHistoryFoldedReadsAsStored(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC().Truncate(time.Millisecond)
		testkit.AddSites(t, db, now, "a", "b")
		verdicts := []model.Verdict{model.VerdictReview, model.VerdictJunk, model.VerdictClean}
		id := func(site string, i int) model.LeadID { return model.LeadID(fmt.Sprintf("ld_%s%02d", site, i)) }
		for _, site := range []string{"a", "b"} {
			for i := range 12 {
				at := now.Add(time.Duration(i-12) * time.Minute)
				v := verdicts[i%3]
				l := testkit.Lead(model.SiteID(site), id(site, i), at, func(l *model.Lead) {
					l.Decision = model.Decision{Verdict: v, Score: 25 * (i % 3), DecidedBy: model.DecidedByRules,
						Reasons: []model.Reason{{Code: fmt.Sprintf("code%d", i%2), Points: 25}}}
				})
				data := map[string]any{"verdict": v, "score": l.Score, "decided_by": model.DecidedByRules}
				if site == "b" {
					data["x"] = 1
				}
				h := &model.HistoryEntry{ID: fmt.Sprintf("h_%s%02d", site, i), LeadID: l.ID, At: at, Kind: model.HistoryVerdict, Data: data}
				if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.LeadIntakeWrite(ctx, store.LeadWrite{Lead: l, History: h}) }); err != nil {
					t.Fatal(err)
				}
				var d *model.Decision
				switch i % 4 {
				case 0:
					d = &model.Decision{Verdict: model.VerdictClean, DecidedBy: model.DecidedByOwner}
				case 1:
					d = &model.Decision{Verdict: model.VerdictJunk, DecidedBy: model.DecidedByOwner}
				case 2:
					d = &model.Decision{Verdict: model.VerdictClean, DecidedBy: model.DecidedByCRM}
				}
				if d == nil {
					continue
				}
				if err := db.InTx(ctx, func(tx *store.Tx) error {
					if err := tx.LeadSetDecision(ctx, l.ID, *d, nil); err != nil {
						return err
					}
					return tx.HistoryInsert(ctx, &model.HistoryEntry{ID: fmt.Sprintf("h_%s%02dz", site, i), LeadID: l.ID,
						At: at.Add(time.Second), Kind: model.HistoryVerdict,
						Data: map[string]any{"verdict": d.Verdict, "was": v, "decided_by": d.DecidedBy}})
				}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if n := historyRows(t, ctx, db, id("a", 3)); n != "0" {
			t.Fatalf("site a's lead 3 has %s stored entries: its intake entry should be folded", n)
		}
		agreement := func(site model.SiteID) string {
			t.Helper()
			codes, err := db.ReasonAgreement(ctx, site, now.Add(-24*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			totals, err := db.AgreementTotals(ctx, site, now.Add(-24*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			return fmt.Sprintf("%+v %+v", codes, totals)
		}
		kept := agreement("a")
		if b := agreement("b"); kept != b {
			t.Errorf("agreement with the intake entries folded\n%s\nstored\n%s", kept, b)
		}
		if !strings.Contains(kept, "{Judged:6 Junk:3 Missed:1 Rescued:2 CRMRescued:2}") {
			t.Fatalf("the agreement counts nothing: %s", kept)
		}
		for _, site := range []model.SiteID{"a", "b"} {
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				return tx.CountersRebuild(ctx, site, model.Day(now)-1, model.Day(now)+1)
			}); err != nil {
				t.Fatal(err)
			}
			if got := agreement(site); got != kept {
				t.Errorf("site %s: agreement recounted\n%s\nkept\n%s", site, got, kept)
			}
		}
		changes := func(site model.SiteID) []string {
			t.Helper()
			cs, err := db.LeadChanges(ctx, store.LeadChangesParams{Site: site, Until: now.Add(time.Hour), Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, c := range cs {
				out = append(out, fmt.Sprintf("%s %d", string(c.Lead.ID)[4:], c.ChangedAt.UnixMilli()))
			}
			return out
		}
		if a, b := changes("a"), changes("b"); !reflect.DeepEqual(a, b) || len(a) != 12 {
			t.Errorf("changed leads with the intake entries folded\n%v\nstored\n%v", a, b)
		}
		for i := range 12 {
			var hs [2][]string
			for k, site := range []string{"a", "b"} {
				h, err := db.HistoryByLead(ctx, id(site, i))
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range h {
					delete(e.Data, "x")
					hs[k] = append(hs[k], fmt.Sprintf("%d %s %v", e.At.UnixMilli(), e.Kind, e.Data))
				}
			}
			if !reflect.DeepEqual(hs[0], hs[1]) {
				t.Errorf("lead %d: history with its intake entry folded\n%v\nstored\n%v", i, hs[0], hs[1])
			}
		}
	})
}
