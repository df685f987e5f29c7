package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

type fixture struct {
	t    *testing.T
	db   *store.DB
	svc  *app.Service
	clk  *testkit.Clock // the service under test's
	site *model.Site
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	db := storetest.New(t)
	clk := testkit.NewClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	testkit.AddSite(t, db, testkit.Site(testkit.WithMeta("123456789012345", model.ModeDryRun)), clk.Now())
	site, _ := db.SiteByID(context.Background(), "dent")
	return &fixture{t: t, db: db, svc: app.New(app.Options{Store: db, Now: clk.Now}), clk: clk, site: site}
}

func i64(v int64) *int64 { return &v }

// realLead is an ordinary enquiry from a person on the site.
func realLead() *app.LeadInput {
	return &app.LeadInput{Email: "ayse.yilmaz@gmail.com", Phone: "0532 412 87 19", Name: "Ayşe Yılmaz",
		Message: "Merhaba, implant tedavisi için randevu almak istiyorum. Hafta içi öğleden sonra uygundur.",
		FillMS:  i64(24000), PageURL: "https://www.istanbuldis.example/implant", ClientIP: "85.105.1.2",
		UserAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)"}
}

// greyLead is a real number that only asked for a price.
func greyLead() *app.LeadInput {
	return &app.LeadInput{Phone: "0533 218 44 90", Name: "Mehmet Demir", Message: "fiyat?", FillMS: i64(9000),
		PageURL: "https://www.istanbuldis.example/", ClientIP: "85.105.1.3", UserAgent: "Mozilla/5.0"}
}

func (f *fixture) submit(in *app.LeadInput) *model.Lead {
	f.t.Helper()
	l, _, err := f.svc.Submit(context.Background(), f.site, in)
	if err != nil {
		f.t.Fatal(err)
	}
	return l
}

func (f *fixture) deliveries(id model.LeadID) map[string]*model.Delivery {
	f.t.Helper()
	list, err := f.db.DeliveriesByLead(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	m := map[string]*model.Delivery{}
	for _, d := range list {
		m[d.Kind] = d
	}
	return m
}

func (f *fixture) evidence(id model.LeadID, ev qualify.Evidence) *model.Lead {
	f.t.Helper()
	l, err := f.svc.AddEvidence(context.Background(), f.site, id, ev)
	if err != nil {
		f.t.Fatal(err)
	}
	return l
}

func hasReason(l *model.Lead, code string) bool {
	for _, r := range l.Reasons {
		if r.Code == code {
			return true
		}
	}
	return false
}

func TestVerdictsAtSubmit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	clean := f.submit(realLead())
	if clean.Verdict != model.VerdictClean || clean.RulesVersion != qualify.RulesVersion || clean.DecidedBy != model.DecidedByRules {
		t.Errorf("real lead: %+v", clean.Decision)
	}
	grey := f.submit(greyLead())
	if grey.Verdict != model.VerdictReview || grey.ReviewUntil == nil ||
		!grey.ReviewUntil.Equal(grey.SubmittedAt.Add(qualify.DefaultReviewTimeout)) {
		t.Errorf("grey lead: %+v until %v", grey.Decision, grey.ReviewUntil)
	}
	hp := realLead()
	hp.Email, hp.Phone, hp.Honeypot = "other@gmail.com", "0542 318 22 70", "http://spam.example"
	junk := f.submit(hp)
	if junk.Verdict != model.VerdictJunk || !hasReason(junk, qualify.CodeHoneypot) {
		t.Errorf("honeypot lead: %+v", junk.Decision)
	}
	// Stored as judged, with the history's first entry.
	got, _ := f.db.LeadByID(context.Background(), junk.ID)
	hist, _ := f.db.HistoryByLead(context.Background(), junk.ID)
	if got.Verdict != model.VerdictJunk || len(hist) != 1 || hist[0].Data["verdict"] != "junk" {
		t.Errorf("stored: %+v %+v", got.Decision, hist)
	}
}

func TestSamePersonAgainIsJunkAndLinksTheFirst(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	first := f.submit(realLead())
	f.clk.Add(48 * time.Hour)
	again := realLead()
	again.Phone = "+90 532 412 8719" // the same number written differently
	again.Email = "someone.else@gmail.com"
	second := f.submit(again)
	if second.Verdict != model.VerdictJunk || !hasReason(second, qualify.CodeDuplicate) {
		t.Fatalf("second lead: %+v", second.Decision)
	}
	for _, r := range second.Reasons {
		if r.Code == qualify.CodeDuplicate && (r.Evidence["lead_id"] != string(first.ID) || r.Evidence["match"] != "phone") {
			t.Errorf("duplicate evidence: %v", r.Evidence)
		}
	}
	// Past the window it is a new enquiry.
	f.clk.Add(8 * 24 * time.Hour)
	third := f.submit(realLead())
	if third.Verdict != model.VerdictClean {
		t.Errorf("after the window: %+v", third.Decision)
	}
}

func TestEvidenceMovesReviewToClean(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := []struct {
		name  string
		ev    qualify.Evidence
		clean bool
	}{
		{"whatsapp reply", qualify.Evidence{Type: qualify.EvidenceWhatsAppReply}, true},
		{"call of 75 s", qualify.Evidence{Type: qualify.EvidenceCall, DurationS: 75}, true},
		{"call of 30 s", qualify.Evidence{Type: qualify.EvidenceCall, DurationS: 30}, false},
		{"owner says customer", qualify.Evidence{Type: qualify.EvidenceCustomer}, true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := greyLead()
			in.Phone = []string{"0533 218 44 90", "0535 611 27 43", "0542 774 19 02", "0555 301 86 24"}[i]
			lead := f.submit(in)
			f.clk.Add(time.Hour)
			after := f.evidence(lead.ID, c.ev)
			if (after.Verdict == model.VerdictClean) != c.clean {
				t.Fatalf("verdict %s", after.Verdict)
			}
			d := f.deliveries(lead.ID)[model.KindQualified]
			if !c.clean {
				if d != nil {
					t.Errorf("a qualified event was queued for a lead still in review")
				}
				return
			}
			if d == nil {
				t.Fatal("no qualified event queued")
			}
			var ev struct {
				EventTime    int64          `json:"event_time"`
				ActionSource string         `json:"action_source"`
				EventID      string         `json:"event_id"`
				CustomData   map[string]any `json:"custom_data"`
			}
			json.Unmarshal(d.Payload, &ev)
			if ev.EventTime != lead.SubmittedAt.Unix() || ev.ActionSource != "system_generated" || ev.EventID != d.EventID ||
				ev.CustomData["lead_status"] != "qualified" || ev.CustomData["qualified_by"] != after.DecidedBy {
				t.Errorf("qualified event: %s", d.Payload)
			}
			hist, _ := f.db.HistoryByLead(context.Background(), lead.ID)
			if len(hist) != 3 || hist[1].Kind != model.HistoryEvidence || hist[2].Data["verdict"] != "clean" {
				t.Errorf("history: %+v", hist)
			}
			// The same evidence again changes nothing and queues nothing new:
			// still the raw lead event (queued at submit for a review lead)
			// and the qualified one.
			f.evidence(lead.ID, c.ev)
			if n := len(f.deliveries(lead.ID)); n != 2 {
				t.Errorf("%d deliveries after repeated evidence", n)
			}
		})
	}
}

func TestOwnerWord(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	hp := realLead()
	hp.Honeypot = "x"
	junk := f.submit(hp)
	after := f.evidence(junk.ID, qualify.Evidence{Type: qualify.EvidenceCustomer})
	d := f.deliveries(junk.ID)
	if after.Verdict != model.VerdictClean || after.DecidedBy != model.DecidedByOwner || d[model.KindQualified] == nil || d[model.KindLead] == nil {
		t.Fatalf("owner reversed junk: %+v, deliveries %v", after.Decision, d)
	}
	// And back to junk: the unsent events are cancelled.
	after = f.evidence(junk.ID, qualify.Evidence{Type: qualify.EvidenceJunk})
	d = f.deliveries(junk.ID)
	if after.Verdict != model.VerdictJunk || d[model.KindQualified].State != model.DeliveryDead || d[model.KindLead].State != model.DeliveryDead {
		t.Errorf("owner junk: %+v %+v", after.Decision, d[model.KindQualified])
	}
	// A WhatsApp reply does not clean the owner's junk.
	after = f.evidence(junk.ID, qualify.Evidence{Type: qualify.EvidenceWhatsAppReply})
	if after.Verdict != model.VerdictJunk {
		t.Errorf("reply overrode the owner: %s", after.Verdict)
	}
}

func TestReviewExpires(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	lead := f.submit(greyLead())
	f.clk.Add(qualify.DefaultReviewTimeout - time.Minute)
	if n, err := f.svc.ExpireReviews(context.Background()); err != nil || n != 0 {
		t.Fatalf("expired early: %d %v", n, err)
	}
	f.clk.Add(2 * time.Minute)
	if n, err := f.svc.ExpireReviews(context.Background()); err != nil || n != 1 {
		t.Fatalf("expire: %d %v", n, err)
	}
	if n, _ := f.svc.ExpireReviews(context.Background()); n != 0 {
		t.Errorf("expired twice")
	}
	got, _ := f.db.LeadByID(context.Background(), lead.ID)
	if got.ReviewExpiredAt == nil || got.Verdict != model.VerdictReview {
		t.Errorf("after expiry: %+v", got)
	}
	// Confirmed too late: clean for the owner, never sent as qualified.
	after := f.evidence(lead.ID, qualify.Evidence{Type: qualify.EvidenceWhatsAppReply})
	if after.Verdict != model.VerdictClean || f.deliveries(lead.ID)[model.KindQualified] != nil {
		t.Errorf("late evidence: %s, %v", after.Verdict, f.deliveries(lead.ID))
	}
}

func TestEvidenceErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	lead := f.submit(greyLead())
	var ie *model.InputError
	if _, err := f.svc.AddEvidence(context.Background(), f.site, lead.ID, qualify.Evidence{Type: "tweet"}); !errors.As(err, &ie) {
		t.Errorf("unknown type: %v", err)
	}
	if _, err := f.svc.AddEvidence(context.Background(), f.site, "ld_nope", qualify.Evidence{Type: "customer"}); !errors.Is(err, model.ErrNotFound) {
		t.Errorf("unknown lead: %v", err)
	}
	other := &model.Site{ID: "other"}
	f.db.SiteUpsert(context.Background(), other, f.clk.Now())
	if _, err := f.svc.AddEvidence(context.Background(), other, lead.ID, qualify.Evidence{Type: "customer"}); !errors.Is(err, model.ErrNotFound) {
		t.Errorf("another site's lead: %v", err)
	}
	if _, err := f.svc.AddLeadEvent(context.Background(), f.site, lead.ID, &app.LeadEventInput{Type: "call", At: "yesterday"}); !errors.As(err, &ie) {
		t.Errorf("bad time: %v", err)
	}
}

func TestScoreOffline(t *testing.T) {
	svc := app.New(app.Options{})
	site := &model.Site{ID: "dent", Settings: model.SiteSettings{Country: "TR"}}
	in := realLead()
	in.Phone = "555 555 55 55"
	lead, err := svc.Score(site, in)
	if err != nil {
		t.Fatal(err)
	}
	if lead.Verdict == model.VerdictClean || !hasReason(lead, qualify.CodePhonePattern) && !hasReason(lead, qualify.CodePhoneInvalid) {
		t.Errorf("fake phone scored %+v", lead.Decision)
	}
}

func TestNoConsentNoEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	no := false
	in := greyLead()
	in.Consent = &no
	lead := f.submit(in)
	after := f.evidence(lead.ID, qualify.Evidence{Type: qualify.EvidenceCustomer})
	if after.Verdict != model.VerdictClean || len(f.deliveries(lead.ID)) != 0 {
		t.Errorf("a lead that said no to consent was queued for Meta: %v", f.deliveries(lead.ID))
	}
}
