package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestLeadSearchPagesInTimeOrder: a search's pages are the matching leads
// by (received_at, id), newest first, each once, whatever order the leads
// were stored in: leads stored in random order of their times, many with
// the same time, then an import of older ones and a lead from the future
// stored first, over three sites; each term is paged through with each
// filter (a site, a user's sites, a verdict) at pages of several sizes, and
// compared with the leads that contain it, found by reading them all; an
// erased lead is found on no page after. SQLite reads its index's
// candidates newest rowid first and stops at a page (leadSearchWalk) or,
// when few pass, walks the leads; PostgreSQL its trigram index.
func TestLeadSearchPagesInTimeOrder(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		base := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, base, "a", "b", "c")
		r := rand.New(rand.NewPCG(33, 510))
		firsts := []string{"Ann", "Bora", "Cem"}
		lasts := []string{"Lee", "Kaya", "Demir", "Ozkan"}
		words := []string{"implant", "zircon", "whitening", "price", "appointment", "today"}
		sites := []model.SiteID{"a", "a", "a", "b", "c"}
		var all []*model.Lead
		newLead := func(i int, at time.Time) *model.Lead {
			fn, ln := firsts[r.IntN(len(firsts))], lasts[r.IntN(len(lasts))]
			msg := words[r.IntN(len(words))] + " " + words[r.IntN(len(words))]
			if r.IntN(60) == 0 {
				msg += " lee ann"
			}
			v := model.VerdictClean
			if r.IntN(3) == 0 {
				v = model.VerdictJunk
			}
			id := fmt.Sprintf("o%05d", i)
			return &model.Lead{ID: model.LeadID(id), SiteID: sites[r.IntN(len(sites))], EventID: id,
				Name: fn + " " + ln, FirstName: fn, LastName: ln, Email: strings.ToLower(fn+ln) + fmt.Sprint(i) + "@mail.example",
				Phone: fmt.Sprintf("0532 %03d %04d", i%1000, i), PhoneKey: fmt.Sprintf("90532%03d%04d", i%1000, i),
				Message: msg, SubmittedAt: at, ReceivedAt: at, Decision: model.Decision{Verdict: v}}
		}
		// A lead from the future stored first: every rowid above it is
		// below a newer time.
		all = append(all, newLead(0, base.Add(400*24*time.Hour)))
		// Then the live leads in random order of their times, 40 to a
		// second, so that times repeat.
		const live = 2400
		for _, i := range r.Perm(live) {
			all = append(all, newLead(1+i, base.Add(time.Duration(i/40)*time.Second)))
		}
		// Then an import of older leads, some at the same times as live ones.
		for i := range 400 {
			at := base.Add(-time.Duration(r.IntN(3000)) * time.Second)
			if i%10 == 0 {
				at = base.Add(time.Duration(r.IntN(live/40)) * time.Second)
			}
			all = append(all, newLead(1+live+i, at))
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			for _, l := range all {
				if err := tx.LeadInsert(ctx, l); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		erased := map[model.LeadID]bool{}
		want := func(term string, f store.LeadFilter) []string {
			var ls []*model.Lead
			for _, l := range all {
				text := strings.ToLower(strings.Join([]string{l.Name, l.FirstName, l.LastName, l.Email, l.Phone, l.PhoneKey, l.Message}, " "))
				if erased[l.ID] || !strings.Contains(text, strings.ToLower(term)) ||
					f.Site != "" && l.SiteID != f.Site || f.Only != nil && !slices.Contains(f.Only, l.SiteID) ||
					f.Verdict != "" && l.Verdict != f.Verdict {
					continue
				}
				ls = append(ls, l)
			}
			slices.SortFunc(ls, func(a, b *model.Lead) int {
				if c := b.ReceivedAt.Compare(a.ReceivedAt); c != 0 {
					return c
				}
				return strings.Compare(string(b.ID), string(a.ID))
			})
			var ids []string
			for _, l := range ls {
				ids = append(ids, string(l.ID))
			}
			return ids
		}
		filters := []store.LeadFilter{{}, {Site: "a"}, {Only: []model.SiteID{"b", "c"}}, {Verdict: model.VerdictJunk}, {Site: "c", Verdict: model.VerdictClean}}
		sizes := []int{13, 50, 500}
		check := func(terms []string) {
			t.Helper()
			n := 0
			for _, term := range terms {
				for _, f := range filters {
					f.Search, f.Limit = term, sizes[n%len(sizes)]
					n++
					got, exp := pagedIDs(t, ctx, db, f), want(term, f)
					if !slices.Equal(got, exp) {
						t.Errorf("%q, site %q, only %v, verdict %q, pages of %d: %d leads, want %d (first differing at %d)",
							term, f.Site, f.Only, f.Verdict, f.Limit, len(got), len(exp), firstDiff(got, exp))
					}
				}
			}
		}
		check([]string{"Ann Lee", "ann", "zircon", "mail.example", "lee ann", "bora ozkan", "0532 01", "nothing-here"})
		// Erasure: a lead forgotten is on no page.
		for _, l := range all[:300] {
			if r.IntN(4) == 0 {
				if _, err := db.LeadRedact(ctx, l.ID, nil, nil, base); err != nil {
					t.Fatal(err)
				}
				erased[l.ID] = true
			}
		}
		check([]string{"Ann Lee", "mail.example", "zircon"})
	})
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestSearchWalkReadsByRowid: SQLite reads the walk's candidates' leads by
// their rowids, not through an index on the filters' columns (with a
// site it chose leads_site_changed, every lead of the site: 224 ms of CPU
// at a million leads where the rowids took 3.7).
func TestSearchWalkReadsByRowid(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	plan, err := db.TestSearchWalkPlan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "INTEGER PRIMARY KEY (rowid=?)") || strings.Contains(plan, "INDEX") && !strings.Contains(plan, "PRIMARY KEY") {
		t.Errorf("plan:\n%s\nwant the leads by rowid", plan)
	}
}

// pagedIDs reads every page of f's list, each after the last one's
// (received_at, id), and returns the leads' ids in order.
func pagedIDs(t *testing.T, ctx context.Context, db *store.DB, f store.LeadFilter) []string {
	t.Helper()
	var ids []string
	for range 1000 {
		list, err := db.LeadList(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range list {
			ids = append(ids, string(l.ID))
		}
		if len(list) < f.Limit {
			return ids
		}
		last := list[len(list)-1]
		f.Before, f.BeforeID = last.ReceivedAt, last.ID
	}
	t.Fatalf("%+v: no last page", f)
	return nil
}

// TestLeadSearchPagesOverDays: a search's pages are exact when its matches
// are spread over many days, thick in some, thin or missing in others:
// PostgreSQL reads them a window of days at a time (leadSearchDays: the
// newest day, the 7 before, the 49 before those, then the rest), SQLite
// through its walk. Leads over 400 days, in random order, some at the
// last and first millisecond of a day and several at one time, a lead
// from the future; terms from two in three leads to one in 300, with
// each filter, at pages from 7 to 500, each compared with the leads that
// contain the term, found by reading them all.
func TestLeadSearchPagesOverDays(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		const day = 24 * time.Hour
		base := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, base, "a", "b")
		r := rand.New(rand.NewPCG(33, 530))
		var all []*model.Lead
		for i := range 1500 {
			// Most leads in the last 10 days, the others over the year
			// before; days 3 and 20-30 have none.
			d := r.IntN(10)
			if i%5 == 0 {
				d = 10 + r.IntN(390)
			}
			if d == 3 || d >= 20 && d <= 30 {
				d += 40
			}
			at := base.Add(-time.Duration(d) * day)
			switch i % 5 {
			case 0:
				at = at.Add(day - time.Millisecond) // a day's last millisecond
			case 1: // its first
			case 2:
				at = at.Add(12 * time.Hour) // several at one time
			default:
				at = at.Add(time.Duration(r.IntN(86400)) * time.Second)
			}
			if i == 700 {
				at = base.Add(90 * day)
			}
			name := "Deniz Kaya"
			if i%3 == 0 {
				name = "Ece Demir"
			}
			msg := "price"
			if r.IntN(300) == 0 {
				msg = "zircon crown"
			}
			if i%40 == 0 {
				msg += " implant"
			}
			if i%20 == 7 {
				msg += " veneer"
			}
			v := model.VerdictClean
			if r.IntN(4) == 0 {
				v = model.VerdictJunk
			}
			id := fmt.Sprintf("d%05d", r.IntN(100000))
			site := model.SiteID("a")
			if r.IntN(5) == 0 {
				site = "b"
			}
			all = append(all, &model.Lead{ID: model.LeadID(id + fmt.Sprint(i)), SiteID: site, EventID: id + fmt.Sprint(i),
				Name: name, Email: fmt.Sprintf("p%d@mail.example", i), Message: msg,
				SubmittedAt: at, ReceivedAt: at, Decision: model.Decision{Verdict: v}})
		}
		r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			for _, l := range all {
				if err := tx.LeadInsert(ctx, l); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, term := range []string{"deniz kaya", "ece demir", "implant", "veneer", "zircon", "mail.example", "nobody"} {
			for _, f := range []store.LeadFilter{{}, {Site: "b"}, {Only: []model.SiteID{"a"}}, {Verdict: model.VerdictJunk}} {
				f.Search, f.Limit = term, []int{7, 50, 500, 13}[n%4]
				n++
				var want []string
				var ls []*model.Lead
				for _, l := range all {
					text := strings.ToLower(l.Name + " " + l.Email + " " + l.Message)
					if strings.Contains(text, term) && (f.Site == "" || l.SiteID == f.Site) &&
						(f.Only == nil || slices.Contains(f.Only, l.SiteID)) && (f.Verdict == "" || l.Verdict == f.Verdict) {
						ls = append(ls, l)
					}
				}
				slices.SortFunc(ls, func(a, b *model.Lead) int {
					if c := b.ReceivedAt.Compare(a.ReceivedAt); c != 0 {
						return c
					}
					return strings.Compare(string(b.ID), string(a.ID))
				})
				for _, l := range ls {
					want = append(want, string(l.ID))
				}
				if got := pagedIDs(t, ctx, db, f); !slices.Equal(got, want) {
					t.Errorf("%q, site %q, only %v, verdict %q, pages of %d: %d leads, want %d (first differing at %d)",
						term, f.Site, f.Only, f.Verdict, f.Limit, len(got), len(want), firstDiff(got, want))
				}
			}
		}
	})
}
