package store_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// judgedLead stores a lead as intake does (its reasons, the rules' verdict
// in its first history entry) and then, when owner is "clean" or "junk",
// the owner's word as the app records it.
func judgedLead(t *testing.T, db *store.DB, site model.SiteID, id string, at time.Time, rules model.Verdict, owner model.Verdict, msg string, reasons ...model.Reason) {
	t.Helper()
	ctx := context.Background()
	l := &model.Lead{ID: model.LeadID(id), SiteID: site, EventID: "ev-" + id, Message: msg, SubmittedAt: at, ReceivedAt: at,
		Decision: model.Decision{Verdict: rules, Reasons: reasons, RulesVersion: "test", DecidedBy: model.DecidedByRules}}
	if err := db.LeadInsert(ctx, l); err != nil {
		t.Fatal(err)
	}
	if err := db.HistoryInsert(ctx, &model.HistoryEntry{ID: "h1_" + id, LeadID: l.ID, At: at, Kind: model.HistoryVerdict,
		Data: map[string]any{"verdict": rules, "decided_by": "rules"}}); err != nil {
		t.Fatal(err)
	}
	if owner == "" {
		return
	}
	d := l.Decision
	d.Verdict, d.DecidedBy = owner, model.DecidedByOwner
	d.Reasons = append(append([]model.Reason(nil), reasons...), model.Reason{Code: "OWNER_CUSTOMER"})
	if err := db.LeadSetDecision(ctx, l.ID, d, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.HistoryInsert(ctx, &model.HistoryEntry{ID: "h2_" + id, LeadID: l.ID, At: at.Add(time.Hour), Kind: model.HistoryVerdict,
		Data: map[string]any{"verdict": owner, "was": rules, "decided_by": "owner"}}); err != nil {
		t.Fatal(err)
	}
}

func TestReasonAgreement(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "dent", "other")
		fast := model.Reason{Code: "FILL_TOO_FAST", Points: 50}
		price := model.Reason{Code: "PRICE_ONLY", Points: 35}
		missing := model.Reason{Code: "FILL_TIME_MISSING", Points: 10}
		shadow := model.Reason{Code: "TEXT_MODEL", Points: 0, Evidence: map[string]any{"shadow": true}}
		h := func(n int) time.Time { return now.Add(-time.Duration(n) * time.Hour) }
		judgedLead(t, db, "dent", "l1", h(1), model.VerdictReview, model.VerdictJunk, "", fast)
		judgedLead(t, db, "dent", "l2", h(2), model.VerdictReview, model.VerdictClean, "fiyat?", price, missing)
		judgedLead(t, db, "dent", "l3", h(3), model.VerdictReview, "", "", price)
		judgedLead(t, db, "dent", "l4", h(4), model.VerdictClean, model.VerdictJunk, "seo teklifi", missing, shadow)
		judgedLead(t, db, "dent", "l5", h(5), model.VerdictClean, model.VerdictClean, "randevu", missing)
		judgedLead(t, db, "dent", "l6", h(6), model.VerdictClean, "", "", shadow)
		// Before the period, and another site's: not counted.
		judgedLead(t, db, "dent", "l7", now.AddDate(0, 0, -40), model.VerdictReview, model.VerdictClean, "", price)
		judgedLead(t, db, "other", "l8", h(1), model.VerdictReview, model.VerdictClean, "", price)

		since := now.AddDate(0, 0, -30)
		got, err := db.ReasonAgreement(ctx, "dent", since)
		if err != nil {
			t.Fatal(err)
		}
		want := []store.CodeAgreement{
			{Code: "FILL_TIME_MISSING", Leads: 3, Judged: 3, Junk: 1, Customers: 2, Overturned: 1},
			{Code: "PRICE_ONLY", Leads: 2, Judged: 1, Customers: 1, Overturned: 1},
			{Code: "FILL_TOO_FAST", Leads: 1, Judged: 1, Junk: 1},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("agreement:\n got %+v\nwant %+v", got, want)
		}
		tot, err := db.AgreementTotals(ctx, "dent", since)
		if err != nil {
			t.Fatal(err)
		}
		if want := (store.AgreementTotals{Judged: 4, Junk: 2, Missed: 1, Rescued: 1}); tot != want {
			t.Errorf("totals %+v, want %+v", tot, want)
		}
		if a, err := db.ReasonAgreement(ctx, "empty", since); err != nil || len(a) != 0 {
			t.Errorf("a site without leads: %v %v", a, err)
		}
		if tot, err := db.AgreementTotals(ctx, "empty", since); err != nil || tot != (store.AgreementTotals{}) {
			t.Errorf("a site without leads: %+v %v", tot, err)
		}

		// The training set: owner-judged leads, newest first, all time.
		js, err := db.LeadOwnerJudged(ctx, "dent", 10)
		if err != nil {
			t.Fatal(err)
		}
		wantJ := []store.OwnerJudgement{{LeadID: "l1", Junk: true}, {LeadID: "l2", Message: "fiyat?"},
			{LeadID: "l4", Message: "seo teklifi", Junk: true}, {LeadID: "l5", Message: "randevu"}, {LeadID: "l7"}}
		if !reflect.DeepEqual(js, wantJ) {
			t.Errorf("owner judged:\n got %+v\nwant %+v", js, wantJ)
		}
	})
}

func TestTextModelStorage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
		testkit.AddSite(t, db, &model.Site{ID: "dent", Name: "D"}, now)
		if _, err := db.TextModelGet(ctx, "dent"); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("no model yet: %v", err)
		}
		if fp, err := db.TextModelFingerprint(ctx, "dent"); err != nil || fp != "" {
			t.Errorf("no model yet: %q %v", fp, err)
		}
		fingerprint := func() string {
			t.Helper()
			_, fp, err := db.LeadOwnerFingerprint(ctx, "dent")
			if err != nil {
				t.Fatal(err)
			}
			return fp
		}
		empty := fingerprint()
		judgedLead(t, db, "dent", "l1", now, model.VerdictReview, model.VerdictJunk, "seo teklifi")
		judgedLead(t, db, "dent", "l2", now.Add(time.Minute), model.VerdictReview, model.VerdictClean, "randevu")
		two := fingerprint()
		if two == empty {
			t.Error("two judgements left the fingerprint as it was")
		}
		// The owner changes their mind both ways: same counts, other leads.
		for id, v := range map[model.LeadID]model.Verdict{"l1": model.VerdictClean, "l2": model.VerdictJunk} {
			if err := db.LeadSetDecision(ctx, id, model.Decision{Verdict: v, DecidedBy: model.DecidedByOwner}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if swapped := fingerprint(); swapped == two {
			t.Error("swapped judgements left the fingerprint as it was")
		}
		n, _, err := db.LeadOwnerFingerprint(ctx, "dent")
		if err != nil || n != 2 {
			t.Errorf("judged %d %v", n, err)
		}

		row := &store.TextModelRow{Site: "dent", TrainedAt: now, Judged: 2, Fingerprint: two, Data: []byte(`{"v":1}`)}
		if err := db.TextModelPut(ctx, row); err != nil {
			t.Fatal(err)
		}
		row.Judged, row.Data, row.TrainedAt = 3, []byte(`{"v":1,"judged":3}`), now.Add(time.Hour)
		if err := db.TextModelPut(ctx, row); err != nil {
			t.Fatal(err)
		}
		got, err := db.TextModelGet(ctx, "dent")
		if err != nil || !reflect.DeepEqual(got, row) {
			t.Errorf("stored %+v %v, want %+v", got, err, row)
		}
		if fp, err := db.TextModelFingerprint(ctx, "dent"); err != nil || fp != two {
			t.Errorf("fingerprint %q %v", fp, err)
		}
	})
}

// TestReasonAgreementCRM: a lead the rules held that a CRM stage made clean
// turned out real, as surely as when the owner says so; a CRM stage on a
// lead the rules passed changes no figure, nor does the CRM_QUALIFIED
// reason (0 points) count as a code.
func TestReasonAgreementCRM(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
		testkit.AddSite(t, db, &model.Site{ID: "dent", Name: "dent"}, now)
		fast := model.Reason{Code: "FILL_TOO_FAST", Points: 70, Final: true}
		price := model.Reason{Code: "PRICE_ONLY", Points: 35}
		crm := model.Reason{Code: "CRM_QUALIFIED", Evidence: map[string]any{"stage": "won"}}
		h := func(n int) time.Time { return now.Add(-time.Duration(n) * time.Hour) }
		byCRM := func(id string, at time.Time, rules model.Verdict, reasons ...model.Reason) {
			t.Helper()
			judgedLead(t, db, "dent", id, at, rules, "", "", reasons...)
			d := model.Decision{Verdict: model.VerdictClean, Reasons: append(append([]model.Reason(nil), reasons...), crm),
				RulesVersion: "test", DecidedBy: model.DecidedByCRM}
			if err := db.LeadSetDecision(ctx, model.LeadID(id), d, nil); err != nil {
				t.Fatal(err)
			}
			if err := db.HistoryInsert(ctx, &model.HistoryEntry{ID: "h2_" + id, LeadID: model.LeadID(id), At: at.Add(time.Hour),
				Kind: model.HistoryVerdict, Data: map[string]any{"verdict": "clean", "was": rules, "decided_by": "crm"}}); err != nil {
				t.Fatal(err)
			}
		}
		byCRM("c1", h(1), model.VerdictJunk, fast)
		byCRM("c2", h(2), model.VerdictReview, price)
		judgedLead(t, db, "dent", "c3", h(3), model.VerdictReview, model.VerdictClean, "", price)
		judgedLead(t, db, "dent", "c4", h(4), model.VerdictJunk, model.VerdictJunk, "", fast)

		got, err := db.ReasonAgreement(ctx, "dent", now.AddDate(0, 0, -30))
		if err != nil {
			t.Fatal(err)
		}
		want := []store.CodeAgreement{
			{Code: "PRICE_ONLY", Leads: 2, Judged: 1, Customers: 1, Overturned: 2, CRM: 1},
			{Code: "FILL_TOO_FAST", Leads: 2, Judged: 1, Junk: 1, Overturned: 1, CRM: 1},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("agreement:\n got %+v\nwant %+v", got, want)
		}
		tot, err := db.AgreementTotals(ctx, "dent", now.AddDate(0, 0, -30))
		if err != nil {
			t.Fatal(err)
		}
		if want := (store.AgreementTotals{Judged: 2, Junk: 1, Rescued: 1, CRMRescued: 2}); tot != want {
			t.Errorf("totals %+v, want %+v", tot, want)
		}
	})
}
