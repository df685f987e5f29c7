package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestLeadSearch: the inbox's search finds a lead by part of its name,
// e-mail, phone (as written or its digits) or message, on both engines,
// through the search index, and not by a term whose parts it has apart; a
// replaced attempt is found by its new text only, and an erased lead by
// nothing.
func TestLeadSearch(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		base := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, base, "a", "b")
		add := func(id, site, name, email, phone, phoneKey, msg string, at time.Time) *model.Lead {
			l := &model.Lead{ID: model.LeadID(id), SiteID: model.SiteID(site), EventID: id, Name: name, Email: email,
				Phone: phone, PhoneKey: phoneKey, Message: msg, SubmittedAt: at, ReceivedAt: at,
				Decision: model.Decision{Verdict: model.VerdictClean}}
			if err := db.LeadInsert(ctx, l); err != nil {
				t.Fatal(err)
			}
			return l
		}
		add("s1", "a", "Ayşe Yılmaz", "ayse.yilmaz@gmail.com", "0532 412 87 19", "905324128719",
			"Merhaba, implant tedavisi için randevu almak istiyorum", base)
		add("s2", "a", "Mehmet Demir", "mdemir@x.example", "0533 218 44 90", "905332184490", "fiyat nedir? zirkonyum", base.Add(time.Hour))
		s3 := add("s3", "b", "John Smith", "john@smith.example", "+49 151 1234 5678", "4915112345678",
			"I would like an appointment for whitening", base.Add(2*time.Hour))
		// Every trigram of "kaya deniz", but not the words in a row.
		add("s4", "b", "Kaya Ada Deniz", "kad@d.test", "", "", "", base.Add(3*time.Hour))
		find := func(f store.LeadFilter) string { t.Helper(); return listedIDs(t, ctx, db, f) }
		for _, c := range []struct {
			name string
			f    store.LeadFilter
			want string
		}{
			{"full name", store.LeadFilter{Search: "Ayşe Yılmaz"}, "s1"},
			{"part of a name, other case", store.LeadFilter{Search: "DEMI"}, "s2"},
			{"e-mail", store.LeadFilter{Search: "ayse.yilmaz@gmail.com"}, "s1"},
			{"part of an e-mail", store.LeadFilter{Search: "@smith"}, "s3"},
			{"phone as written", store.LeadFilter{Search: "0532 412 87"}, "s1"},
			{"phone digits", store.LeadFilter{Search: "533 218", PhoneDigits: "533218"}, "s2"},
			{"a message word", store.LeadFilter{Search: "implant"}, "s1"},
			{"message words", store.LeadFilter{Search: "whitening"}, "s3"},
			{"one site", store.LeadFilter{Search: "example", Site: "a"}, "s2"},
			{"every site", store.LeadFilter{Search: "example"}, "s3,s2"},
			{"nothing", store.LeadFilter{Search: "qxzqv"}, ""},
			{"too short", store.LeadFilter{Search: "ay"}, ""},
			{"quotes are text", store.LeadFilter{Search: `"fiyat" OR x`}, ""},
			{"other case, Turkish letters", store.LeadFilter{Search: "AYŞE"}, "s1"},
			{"words in a row", store.LeadFilter{Search: "ada deniz"}, "s4"},
			{"the trigrams of words not in a row", store.LeadFilter{Search: "kaya deniz"}, ""},
		} {
			if got := find(c.f); got != c.want {
				t.Errorf("%s: %q, want %q", c.name, got, c.want)
			}
		}

		// A later attempt replaces the text: found by the new, not the old.
		s3.Name, s3.Email, s3.Message = "Jane Doe", "jane@doe.example", "veneers please"
		if err := db.LeadAttemptSet(ctx, s3); err != nil {
			t.Fatal(err)
		}
		if got := find(store.LeadFilter{Search: "Smith"}); got != "" {
			t.Errorf("the replaced name is still found: %q", got)
		}
		if got := find(store.LeadFilter{Search: "veneers"}); got != "s3" {
			t.Errorf("the new message: %q", got)
		}
		// An erased lead is found by nothing it said.
		if _, err := db.LeadRedact(ctx, "s1", nil, nil, base.Add(3*time.Hour)); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"Ayşe", "yilmaz@gmail", "0532 412", "324128719", "implant"} {
			if got := find(store.LeadFilter{Search: q}); got != "" {
				t.Errorf("erased lead found by %q: %q", q, got)
			}
		}
	})
}

// TestLeadSearchBackup: SQLite's search index names leads by rowid; a
// backup (VACUUM INTO) keeps the rowids, so a restored copy finds the same
// leads.
func TestLeadSearchBackup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.SQLite(t)
	now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	testkit.AddSites(t, db, now, "a")
	for i := range 50 {
		id := fmt.Sprintf("b%02d", i)
		l := &model.Lead{ID: model.LeadID(id), SiteID: "a", EventID: id, Name: fmt.Sprintf("Person%02d Name", i),
			SubmittedAt: now, ReceivedAt: now.Add(time.Duration(i) * time.Minute), Decision: model.Decision{Verdict: model.VerdictClean}}
		if err := db.LeadInsert(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	// Holes in the rowids, as retention leaves, so a renumbering would show.
	for _, id := range []string{"b03", "b10", "b11"} {
		if err := db.TestExec(ctx, `DELETE FROM leads WHERE id = ?`, id); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "backup.db")
	if err := db.Backup(ctx, path); err != nil {
		t.Fatal(err)
	}
	copyDB := storetest.Open(t, "sqlite:"+path)
	for _, i := range []int{0, 12, 49} {
		list, err := copyDB.LeadList(ctx, store.LeadFilter{Search: fmt.Sprintf("Person%02d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("b%02d", i); len(list) != 1 || string(list[0].ID) != want {
			t.Errorf("Person%02d in the backup: %v, want %s", i, list, want)
		}
	}
}

// TestLeadListPagesByKey: paging the inbox by key, newest first, returns
// every lead once, with leads sharing a time split across pages, and with
// a search or a verdict as the filter.
func TestLeadListPagesByKey(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a")
		r := rand.New(rand.NewPCG(7, 7))
		want := map[string][]string{}
		for i := range 230 {
			id := fmt.Sprintf("p%03d", i)
			// Few distinct times: many leads share one.
			at := now.Add(time.Duration(r.IntN(40)) * time.Second)
			v := []model.Verdict{model.VerdictClean, model.VerdictReview, model.VerdictJunk}[r.IntN(3)]
			name := []string{"Anna Berg", "Ali Kaya", "Elif Kurt"}[r.IntN(3)]
			l := &model.Lead{ID: model.LeadID(id), SiteID: "a", EventID: id, Name: name, SubmittedAt: at, ReceivedAt: at,
				Decision: model.Decision{Verdict: v}}
			if err := db.LeadInsert(ctx, l); err != nil {
				t.Fatal(err)
			}
			want[""] = append(want[""], id)
			want["v:"+string(v)] = append(want["v:"+string(v)], id)
			want["q:"+name] = append(want["q:"+name], id)
		}
		for key, ids := range want {
			f := store.LeadFilter{Site: "a", Limit: 17}
			if v, ok := strings.CutPrefix(key, "v:"); ok {
				f.Verdict = model.Verdict(v)
			}
			if q, ok := strings.CutPrefix(key, "q:"); ok {
				f.Search = q
			}
			var got []string
			var prev *model.Lead
			for pages := 0; ; pages++ {
				if pages > 100 {
					t.Fatalf("%s: paging does not end", key)
				}
				list, err := db.LeadList(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				for _, l := range list {
					if prev != nil && (l.ReceivedAt.After(prev.ReceivedAt) || l.ReceivedAt.Equal(prev.ReceivedAt) && l.ID >= prev.ID) {
						t.Errorf("%s: %s after %s is not older", key, l.ID, prev.ID)
					}
					got = append(got, string(l.ID))
					prev = l
				}
				if len(list) < f.Limit {
					break
				}
				f.Before, f.BeforeID = prev.ReceivedAt, prev.ID
			}
			slices.Sort(got)
			slices.Sort(ids)
			if !slices.Equal(got, ids) {
				t.Errorf("%s: pages gave %d leads (%v), want %d once each", key, len(got), got, len(ids))
			}
		}
	})
}

// TestLeadSearchManyPagesByKey: a search that matches many leads (more
// than searchMany) pages by key through every match once, newest first,
// and leaves out the others, whichever way SQLite reads them: the leads
// newest first checking each, when the matches are many among the newest
// leads ("dense"), or checking only the index's candidates, when they are
// not ("older": the matches stored first, then searchMany others).
func TestLeadSearchManyPagesByKey(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		match func(i int, r *rand.Rand) bool
		n     int
	}{
		{"dense", func(_ int, r *rand.Rand) bool { return r.IntN(5) != 0 }, 2600},
		{"older", func(i int, _ *rand.Rand) bool { return i < 2300 }, 4500},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := storetest.SQLite(t)
			now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
			testkit.AddSites(t, db, now, "a")
			r := rand.New(rand.NewPCG(5, 5))
			var want []string
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				for i := range c.n {
					id := fmt.Sprintf("m%04d", i)
					// "Arslan Zeynep" has every trigram of the search, not
					// the search.
					name := "Arslan Zeynep"
					if c.match(i, r) {
						name = "Zeynep Arslan"
						want = append(want, id)
					}
					at := now.Add(time.Duration(r.IntN(500)) * time.Second)
					l := &model.Lead{ID: model.LeadID(id), SiteID: "a", EventID: id, Name: name, SubmittedAt: at, ReceivedAt: at,
						Decision: model.Decision{Verdict: model.VerdictClean}}
					if err := tx.LeadInsert(ctx, l); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			f := store.LeadFilter{Search: "zeynep arslan", Limit: 500}
			var got []string
			var prev *model.Lead
			for {
				list, err := db.LeadList(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				for _, l := range list {
					if prev != nil && (l.ReceivedAt.After(prev.ReceivedAt) || l.ReceivedAt.Equal(prev.ReceivedAt) && l.ID >= prev.ID) {
						t.Fatalf("%s after %s is not older", l.ID, prev.ID)
					}
					got = append(got, string(l.ID))
					prev = l
				}
				if len(list) < f.Limit {
					break
				}
				f.Before, f.BeforeID = prev.ReceivedAt, prev.ID
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("pages gave %d leads, want the %d matches once each", len(got), len(want))
			}
		})
	}
}

// TestLeadSearchByContactKey: a search given as contact keys (a whole
// e-mail or phone, LeadFilter.Keys) finds the leads of the person who gave
// it, newest first, on both engines: each key in its own sites only,
// within the filter's site, user's sites, verdict and page, and not a lead
// that only mentions the contact in its message, nor an erased one.
func TestLeadSearchByContactKey(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		base := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, base, "tr", "de")
		add := func(id, site, email, emailKey, phoneKey, msg string, v model.Verdict, at time.Time) {
			l := testkit.Lead(model.SiteID(site), model.LeadID(id), at, func(l *model.Lead) {
				l.Email, l.EmailKey, l.PhoneKey, l.Message = email, emailKey, phoneKey, msg
				l.Phone, l.Decision.Verdict = phoneKey, v
			})
			if err := db.LeadInsert(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
		clean, junk := model.VerdictClean, model.VerdictJunk
		add("k1", "tr", "Ayse@Example.com", "ayse@example.com", "905324128719", "", clean, base)
		add("k2", "tr", "ayse@example.com", "ayse@example.com", "", "", junk, base.Add(time.Hour))
		add("k3", "de", "", "", "905324128719", "", clean, base.Add(2*time.Hour))
		add("k4", "de", "x@y.example", "x@y.example", "4953241287190", "", clean, base.Add(3*time.Hour))
		// Mentions both in its message: the text search finds it, the keys not.
		add("k5", "tr", "", "", "", "ayse@example.com 905324128719", clean, base.Add(4*time.Hour))
		add("k6", "tr", "ayse@example.com", "ayse@example.com", "", "", clean, base.Add(5*time.Hour))
		email := []store.ContactKey{{Email: true, Key: "ayse@example.com", Sites: []model.SiteID{"tr", "de"}}}
		phone := []store.ContactKey{{Key: "905324128719", Sites: []model.SiteID{"tr"}},
			{Key: "4953241287190", Sites: []model.SiteID{"de"}}}
		find := func(f store.LeadFilter) string { t.Helper(); return listedIDs(t, ctx, db, f) }
		second := base.Add(time.Hour)
		for _, c := range []struct {
			name string
			f    store.LeadFilter
			want string
		}{
			{"e-mail, newest first", store.LeadFilter{Search: "ayse@example.com", Keys: email}, "k6,k2,k1"},
			{"e-mail, text", store.LeadFilter{Search: "ayse@example.com"}, "k6,k5,k2,k1"},
			{"e-mail, a page", store.LeadFilter{Search: "ayse@example.com", Keys: email, Limit: 2}, "k6,k2"},
			{"e-mail, the next page", store.LeadFilter{Search: "ayse@example.com", Keys: email, Before: second, BeforeID: "k2"}, "k1"},
			{"e-mail, a verdict", store.LeadFilter{Search: "ayse@example.com", Keys: email, Verdict: junk}, "k2"},
			{"e-mail, another site", store.LeadFilter{Search: "ayse@example.com", Keys: email, Site: "de"}, ""},
			{"e-mail, a user's sites", store.LeadFilter{Search: "ayse@example.com", Keys: email, Only: []model.SiteID{"de"}}, ""},
			// k3 has the Turkish key in the German site, whose country
			// reads the number otherwise.
			{"phone, each site its key", store.LeadFilter{Search: "0532 412 87 19", Keys: phone}, "k4,k1"},
			{"phone, one site", store.LeadFilter{Search: "0532 412 87 19", Keys: phone, Site: "tr"}, "k1"},
			{"phone digits, text", store.LeadFilter{Search: "5324128719"}, "k5,k4,k3,k1"},
			{"no site left", store.LeadFilter{Search: "x", Keys: []store.ContactKey{{Key: "905324128719"}}}, ""},
		} {
			if got := find(c.f); got != c.want {
				t.Errorf("%s: %q, want %q", c.name, got, c.want)
			}
		}
		// An erased lead is found by its keys no more.
		if _, err := db.LeadRedact(ctx, "k6", nil, nil, base.Add(6*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if got := find(store.LeadFilter{Search: "ayse@example.com", Keys: email}); got != "k2,k1" {
			t.Errorf("after erasing k6: %q, want %q", got, "k2,k1")
		}
	})
}

// listedIDs is the ids of the leads LeadList gives for f, in its order,
// comma-separated.
func listedIDs(t *testing.T, ctx context.Context, db *store.DB, f store.LeadFilter) string {
	t.Helper()
	list, err := db.LeadList(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range list {
		out = append(out, string(l.ID))
	}
	return strings.Join(out, ",")
}
