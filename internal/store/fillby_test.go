package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestLeadFillBy: who measured a lead's fill time is kept with it (migration
// 0190), and a lead without a fill time has no one.
func TestLeadFillBy(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
		testkit.AddSite(t, db, &model.Site{ID: "dent", Name: "dent"}, now)
		ms := int64(800)
		for id, want := range map[string]string{"l_backend": model.FillByBackend, "l_tracker": model.FillByTracker, "l_none": ""} {
			l := &model.Lead{ID: model.LeadID(id), SiteID: "dent", EventID: "ev-" + id, SubmittedAt: now, ReceivedAt: now, FillBy: want,
				Decision: model.Decision{Verdict: model.VerdictClean, RulesVersion: "test", DecidedBy: model.DecidedByRules}}
			if want != "" {
				l.FillMS = &ms
			}
			if err := db.LeadInsert(ctx, l); err != nil {
				t.Fatal(err)
			}
			got, err := db.LeadByID(ctx, l.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.FillBy != want || (want != "") != (got.FillMS != nil) {
				t.Errorf("%s: fill_by %q fill_ms %v, want %q", id, got.FillBy, got.FillMS, want)
			}
		}
	})
}

// TestLeadPreviousOf: a replay looks for the same person's lead before the
// one it judges; a later lead of the same phone must not hide an earlier one
// of the same e-mail, as it does for LeadPrevious (intake, where no later
// lead exists yet).
func TestLeadPreviousOf(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
		testkit.AddSite(t, db, &model.Site{ID: "dent", Name: "dent"}, now)
		add := func(id, email, phone string, at time.Time) *model.Lead {
			t.Helper()
			l := &model.Lead{ID: model.LeadID(id), SiteID: "dent", EventID: "ev-" + id, EmailKey: email, PhoneKey: phone,
				SubmittedAt: at, ReceivedAt: at, Decision: model.Decision{Verdict: model.VerdictClean, RulesVersion: "test", DecidedBy: "rules"}}
			if err := db.LeadInsert(ctx, l); err != nil {
				t.Fatal(err)
			}
			return l
		}
		a := add("l_a", "ayse@gmail.com", "", now)
		b := add("l_b", "ayse@gmail.com", "905324128719", now.Add(time.Minute))
		add("l_c", "", "905324128719", now.Add(2*time.Minute))
		tie := add("l_d", "", "905324128719", now.Add(2*time.Minute))
		since := now.Add(-time.Hour)

		if id, _, match, err := db.LeadPrevious(ctx, "dent", b.EmailKey, b.PhoneKey, since, b.ID); err != nil || id != "l_c" || match != "phone" {
			t.Errorf("LeadPrevious(b): %s %s %v, want the later l_c by phone", id, match, err)
		}
		if id, at, match, err := db.LeadPreviousOf(ctx, b, since); err != nil || id != a.ID || match != "email" || !at.Equal(a.ReceivedAt) {
			t.Errorf("LeadPreviousOf(b): %s %s %s %v, want l_a by e-mail", id, at, match, err)
		}
		if id, _, _, err := db.LeadPreviousOf(ctx, tie, since); err != nil || id != "l_b" {
			t.Errorf("LeadPreviousOf(d): %s %v, want l_b (first by phone before it)", id, err)
		}
		if _, _, _, err := db.LeadPreviousOf(ctx, a, since); err == nil {
			t.Errorf("LeadPreviousOf(a) found a lead: nothing came before it")
		}
	})
}
