package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// searchLead is a lead of site a with a name and a message to search by.
func searchLead(id model.LeadID, at time.Time, name, message string) *model.Lead {
	return siteLead("a", id, at, name, message)
}

// siteLead is searchLead of another site.
func siteLead(site model.SiteID, id model.LeadID, at time.Time, name, message string) *model.Lead {
	return testkit.Lead(site, id, at, func(l *model.Lead) {
		l.Name, l.Message = name, message
		l.Decision = model.Decision{Verdict: model.VerdictReview, Score: 25, DecidedBy: model.DecidedByRules}
	})
}

// indexHits counts the entries of SQLite's search index that have every
// trigram of term, whatever lead now has their rowid: what the index
// itself holds, not what the search's check of each lead lets through.
func indexHits(t *testing.T, ctx context.Context, db *store.DB, term string) int {
	t.Helper()
	term = strings.ToLower(term)
	var grams []string
	for i := 0; i+3 <= len(term); i++ {
		grams = append(grams, `"`+term[i:i+3]+`"`)
	}
	n, err := db.TestQueryString(ctx, `SELECT CAST(COUNT(*) AS TEXT) FROM lead_search WHERE lead_search MATCH ?`, strings.Join(grams, " AND "))
	if err != nil {
		t.Fatal(err)
	}
	var hits int
	fmt.Sscan(n, &hits)
	return hits
}

// searchIndexExact fails unless, on SQLite, nothing waits to be indexed
// and the index holds exactly the leads stored, one entry each.
func searchIndexExact(t *testing.T, ctx context.Context, db *store.DB) {
	t.Helper()
	if db.Dialect() != store.SQLite {
		return
	}
	for _, c := range []struct{ what, query string }{
		{"leads pending", `SELECT CAST(COUNT(*) AS TEXT) FROM lead_search_pending`},
		{"leads not in the index", `SELECT CAST(COUNT(*) AS TEXT) FROM leads WHERE rowid NOT IN (SELECT id FROM lead_search_docsize)`},
		{"index entries of no lead", `SELECT CAST(COUNT(*) AS TEXT) FROM lead_search_docsize WHERE id NOT IN (SELECT rowid FROM leads)`},
	} {
		n, err := db.TestQueryString(ctx, c.query)
		if err != nil {
			t.Fatal(err)
		}
		if n != "0" {
			t.Errorf("%s: %s", c.what, n)
		}
	}
}

// TestLeadSearchQueueCommits: a lead is found as soon as the transaction
// that stores it has committed, intake's write or another; a lead stored
// and edited in one transaction is found by its new text only, one stored
// and deleted in one by nothing; an edit of a lead indexed before, in a
// transaction that stores another, leaves each found by its own text; and
// after each, nothing waits to be indexed and the index holds each lead
// once.
func TestLeadSearchQueueCommits(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a")
		find := func(search string) string { t.Helper(); return listedIDs(t, ctx, db, store.LeadFilter{Search: search}) }
		inTx := func(fn func(tx *store.Tx) error) {
			t.Helper()
			if err := db.InTx(ctx, fn); err != nil {
				t.Fatal(err)
			}
		}

		intake := searchLead("ld_intake", now, "Zeynep Kaplan", "kanal tedavisi fiyatı")
		inTx(func(tx *store.Tx) error {
			return tx.LeadIntakeWrite(ctx, store.LeadWrite{Lead: intake,
				History: &model.HistoryEntry{ID: "h_intake", LeadID: intake.ID, At: now, Kind: model.HistoryVerdict}})
		})
		if got := find("Kaplan"); got != "ld_intake" {
			t.Errorf("right after its intake: %q", got)
		}
		if got := find("kanal tedavi"); got != "ld_intake" {
			t.Errorf("by its message right after its intake: %q", got)
		}
		searchIndexExact(t, ctx, db)

		// Two in one transaction, the second edited there.
		edited := searchLead("ld_edited", now.Add(time.Minute), "Eski Soyadı", "ilk mesaj")
		inTx(func(tx *store.Tx) error {
			if err := tx.LeadInsert(ctx, searchLead("ld_plain", now.Add(time.Minute), "Murat Aksoy", "diş beyazlatma")); err != nil {
				return err
			}
			if err := tx.LeadInsert(ctx, edited); err != nil {
				return err
			}
			next := *edited
			next.Name, next.Message = "Yeni Soyadı", "ikinci mesaj"
			return tx.LeadAttemptSet(ctx, &next)
		})
		for search, want := range map[string]string{"Aksoy": "ld_plain", "Yeni Soyadı": "ld_edited", "ikinci mesaj": "ld_edited",
			"Eski Soyadı": "", "ilk mesaj": ""} {
			if got := find(search); got != want {
				t.Errorf("stored and edited in one transaction: %q finds %q, want %q", search, got, want)
			}
		}
		searchIndexExact(t, ctx, db)

		// Stored and deleted in one transaction (retention's statement, as
		// a test would run it).
		inTx(func(tx *store.Tx) error {
			if err := tx.LeadInsert(ctx, searchLead("ld_deleted", now.Add(2*time.Minute), "Silinen Kişi", "hiç görünmez")); err != nil {
				return err
			}
			return tx.TestExec(ctx, `DELETE FROM leads WHERE id = ?`, "ld_deleted")
		})
		if got := find("Silinen"); got != "" {
			t.Errorf("stored and deleted in one transaction: found %q", got)
		}
		searchIndexExact(t, ctx, db)

		// A lead indexed before, edited in a transaction that stores
		// another: both found by their own text.
		inTx(func(tx *store.Tx) error {
			next := *intake
			next.Name = "Zeynep Kaplanoğlu Demir"
			if err := tx.LeadAttemptSet(ctx, &next); err != nil {
				return err
			}
			return tx.LeadInsert(ctx, searchLead("ld_later", now.Add(3*time.Minute), "Can Yücel", "implant"))
		})
		for search, want := range map[string]string{"Kaplanoğlu": "ld_intake", "Yücel": "ld_later", "kanal": "ld_intake"} {
			if got := find(search); got != want {
				t.Errorf("an edit beside a new lead: %q finds %q, want %q", search, got, want)
			}
		}
		searchIndexExact(t, ctx, db)

		// Outside a transaction each statement commits on its own, and so
		// is indexed on its own (syncedWriter).
		if err := db.LeadInsert(ctx, searchLead("ld_alone", now.Add(4*time.Minute), "Tek Başına", "")); err != nil {
			t.Fatal(err)
		}
		if got := find("Başına"); got != "ld_alone" {
			t.Errorf("stored outside a transaction: %q", got)
		}
		searchIndexExact(t, ctx, db)
	})
}

// TestLeadSearchQueueGroupRollback: in a group commit, a call that stores
// a lead and fails, or panics, is rolled back and the batch run again
// without it (and the rest of it in savepoints): the leads of the calls
// that succeeded are found, the failed calls' leads leave no pending row
// and no index entry, and the batch is indexed at its one commit.
func TestLeadSearchQueueGroupRollback(t *testing.T) {
	t.Parallel()
	f := newGroupFixture(t)
	ctx := f.ctx
	now := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	errBoom := errors.New("boom")
	insert := func(id model.LeadID, name string) func(tx *store.Tx) error {
		// Of the site the fixture's first call stores, committed before
		// the batch runs.
		return func(tx *store.Tx) error { return tx.LeadInsert(ctx, siteLead("base", id, now, name, "")) }
	}
	results := f.queue(ctx,
		insert("ld_a", "Alpha Birinci"),
		func(tx *store.Tx) error {
			if err := insert("ld_gone", "Qwertyuk Kayboldu")(tx); err != nil {
				return err
			}
			return errBoom
		},
		insert("ld_b", "Bravo İkinci"),
		func(tx *store.Tx) error {
			if err := insert("ld_panic", "Zxcvbnmo Patladı")(tx); err != nil {
				return err
			}
			panic("kaboom")
		},
		insert("ld_c", "Charlie Üçüncü"),
	)
	rebuilds := f.db.WriterStats().Rebuilds
	f.releaseFirst()
	for i, ch := range results {
		got := <-ch
		switch i {
		case 1:
			if err, _ := got.(error); !errors.Is(err, errBoom) {
				t.Errorf("the failing call: %v", got)
			}
		case 3:
			if got != "panic: kaboom" {
				t.Errorf("the panicking call: %v", got)
			}
		default:
			if got != nil {
				t.Errorf("call %d: %v", i, got)
			}
		}
	}
	if n := f.db.WriterStats().Rebuilds - rebuilds; n != 1 {
		t.Errorf("%d rebuilds, want 1", n)
	}
	for search, want := range map[string]string{"Birinci": "ld_a", "İkinci": "ld_b", "Üçüncü": "ld_c", "Kayboldu": "", "Patladı": ""} {
		if got := listedIDs(t, ctx, f.db, store.LeadFilter{Search: search}); got != want {
			t.Errorf("%q finds %q, want %q", search, got, want)
		}
	}
	for _, term := range []string{"Qwertyuk", "Zxcvbnmo"} {
		if n := indexHits(t, ctx, f.db, term); n != 0 {
			t.Errorf("the rolled-back lead's %q is in the index %d times", term, n)
		}
	}
	if n := indexHits(t, ctx, f.db, "Charlie"); n != 1 {
		t.Errorf("a kept lead's name is in the index %d times, want once", n)
	}
	searchIndexExact(t, ctx, f.db)
}

// TestMigration0590SearchQueue: on a database of the shape before 0590,
// with leads stored, some edited and one deleted by the triggers of 0400,
// every lead is found afterwards by its own text, the edited by their new
// text only, nothing waits to be indexed, and a lead stored after the
// migration is found at once.
func TestMigration0590SearchQueue(t *testing.T) {
	eachBelow(t, 590, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a")
		const n = 120
		names := make([]string, n)
		for i := range n {
			names[i] = fmt.Sprintf("Kişi%03d Soyad", i)
			l := searchLead(model.LeadID(fmt.Sprintf("ld_%03d", i)), now.Add(time.Duration(i)*time.Second), names[i], fmt.Sprintf("mesaj%03d", i))
			if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.LeadInsert(ctx, l) }); err != nil {
				t.Fatal(err)
			}
			if i%10 == 3 {
				names[i] = fmt.Sprintf("Düzelt%03d Soyad", i)
				l.Name = names[i]
				if err := db.LeadAttemptSet(ctx, l); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := db.TestExec(ctx, `DELETE FROM leads WHERE id = 'ld_007'`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			want := fmt.Sprintf("ld_%03d", i)
			if i == 7 {
				want = ""
			}
			if got := listedIDs(t, ctx, db, store.LeadFilter{Search: names[i]}); got != want {
				t.Errorf("%q finds %q, want %q", names[i], got, want)
			}
			if got := listedIDs(t, ctx, db, store.LeadFilter{Search: fmt.Sprintf("mesaj%03d", i)}); got != want {
				t.Errorf("message of %s finds %q, want %q", want, got, want)
			}
			if i%10 == 3 {
				if got := listedIDs(t, ctx, db, store.LeadFilter{Search: fmt.Sprintf("Kişi%03d", i)}); got != "" {
					t.Errorf("the old name of %s finds %q", want, got)
				}
			}
		}
		searchIndexExact(t, ctx, db)
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			return tx.LeadInsert(ctx, searchLead("ld_new", now.Add(time.Hour), "Sonradan Gelen", ""))
		}); err != nil {
			t.Fatal(err)
		}
		if got := listedIDs(t, ctx, db, store.LeadFilter{Search: "Sonradan"}); got != "ld_new" {
			t.Errorf("a lead stored after the migration: %q", got)
		}
		searchIndexExact(t, ctx, db)
	})
}
