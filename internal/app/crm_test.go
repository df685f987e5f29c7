package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
)

// The orders in which a CRM's stages and the owner's word can meet, on the
// engine under test. A stage is evidence that the person is real; only the
// owner's junk outranks it, and then nothing goes to Meta until the owner
// changes the word.

// queued lists a lead's events that are still to go to Meta, by kind, and
// fails if any kind is in the outbox twice.
func (f *fixture) queued(id model.LeadID) map[string]*model.Delivery {
	f.t.Helper()
	list, err := f.db.DeliveriesByLead(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string]*model.Delivery{}
	seen := map[string]bool{}
	for _, d := range list {
		if seen[d.Kind] {
			f.t.Errorf("%s is in the outbox twice", d.Kind)
		}
		seen[d.Kind] = true
		if d.State == model.DeliveryPending {
			out[d.Kind] = d
		}
	}
	return out
}

// kinds is the sorted, comma-separated kinds of m, for messages.
func kinds(m map[string]*model.Delivery) string {
	var out []string
	for _, k := range []string{model.KindLead, model.KindQualified, "stage:meeting", "stage:won"} {
		if m[k] != nil {
			out = append(out, k)
		}
	}
	if len(out) != len(m) {
		return "unexpected kinds"
	}
	return strings.Join(out, ",")
}

// newCRMFixture is a site with stages and a review lead for its CRM.
func newCRMFixture(t *testing.T) (*fixture, *model.Lead) {
	t.Helper()
	f := newFixture(t)
	f.withStages()
	lead := f.submit(crmLead())
	if lead.Verdict != model.VerdictReview {
		t.Fatalf("want a review lead, got %s", lead.Verdict)
	}
	return f, lead
}

func (f *fixture) history(id model.LeadID) []model.HistoryEntry {
	f.t.Helper()
	hist, err := f.db.HistoryByLead(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	return hist
}

func (f *fixture) mustStage(id model.LeadID, in app.LeadEventInput) *model.Lead {
	f.t.Helper()
	l, err := f.stage(id, in)
	if err != nil {
		f.t.Fatalf("stage %s: %v", in.Stage, err)
	}
	return l
}

func TestStageMakesAReviewLeadClean(t *testing.T) {
	t.Parallel()
	f, lead := newCRMFixture(t)
	f.clk.Add(26 * time.Hour)
	after := f.mustStage(lead.ID, app.LeadEventInput{Stage: "meeting", ActionSource: "phone_call"})
	if after.Verdict != model.VerdictClean || after.DecidedBy != model.DecidedByCRM || !hasReason(after, qualify.CodeCRMQualified) {
		t.Fatalf("after the meeting: %+v", after.Decision)
	}
	stored, _ := f.db.LeadByID(context.Background(), lead.ID)
	if stored.Verdict != model.VerdictClean || stored.ReviewUntil != nil {
		t.Errorf("stored: %+v until %v", stored.Decision, stored.ReviewUntil)
	}
	r := stored.Reasons[len(stored.Reasons)-1]
	if r.Code != qualify.CodeCRMQualified || r.Evidence["stage"] != "meeting" || !strings.Contains(r.Message, "meeting") {
		t.Errorf("reason: %+v", r)
	}
	if got := kinds(f.queued(lead.ID)); got != "lead,qualified,stage:meeting" {
		t.Fatalf("queued: %s", got)
	}
	ev := f.sentByKind(lead.ID)
	q, m := ev[model.KindQualified], ev["stage:meeting"]
	if q.EventName != "QualifiedLead" || q.ActionSource != capi.SourceSystemGenerated || q.EventTime != lead.SubmittedAt.Unix() ||
		q.EventID != capi.QualifiedEventID(lead.ID, model.KindQualified) || q.CustomData["qualified_by"] != model.DecidedByCRM {
		t.Errorf("qualified event: %+v", q)
	}
	if m.EventName != "Schedule" || m.ActionSource != capi.SourcePhoneCall || m.EventTime != f.clk.Now().Unix() {
		t.Errorf("meeting event: %+v", m)
	}
	// The qualified event is queued before the stage's.
	dels := f.deliveries(lead.ID)
	if dels[model.KindQualified].ID >= dels["stage:meeting"].ID {
		t.Errorf("the stage's event is ahead of the qualified one: %s, %s", dels[model.KindQualified].ID, dels["stage:meeting"].ID)
	}
	// The story: the stage, then the verdict it caused.
	hist := f.history(lead.ID)
	n := len(hist)
	if n < 3 || hist[n-2].Kind != model.HistoryStage || hist[n-2].Data["stage"] != "meeting" || hist[n-2].Data["queued"] != true ||
		hist[n-1].Kind != model.HistoryVerdict || hist[n-1].Data["verdict"] != "clean" || hist[n-1].Data["was"] != "review" ||
		hist[n-1].Data["decided_by"] != model.DecidedByCRM {
		t.Errorf("story: %+v", hist)
	}

	// A second stage adds its own event and nothing else; a replay of
	// either stage adds nothing.
	f.clk.Add(24 * time.Hour)
	f.mustStage(lead.ID, app.LeadEventInput{Stage: "won"})
	for _, in := range []app.LeadEventInput{{Stage: "won", Value: f64(1)}, {Stage: "meeting"}} {
		if l := f.mustStage(lead.ID, in); l.Verdict != model.VerdictClean || l.DecidedBy != model.DecidedByCRM {
			t.Errorf("replay of %s: %+v", in.Stage, l.Decision)
		}
	}
	if got := kinds(f.queued(lead.ID)); got != "lead,qualified,stage:meeting,stage:won" {
		t.Errorf("after the second stage and replays: %s", got)
	}
	if got := len(f.history(lead.ID)); got != n+1 {
		t.Errorf("the history grew by %d entries, want 1 (the won stage)", got-n)
	}
}

func TestStageMakesARulesJunkLeadClean(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.withStages()
	in := realLead()
	in.Honeypot = "http://spam.example"
	lead := f.submit(in)
	if lead.Verdict != model.VerdictJunk || lead.DecidedBy != model.DecidedByRules {
		t.Fatalf("want rules junk, got %+v", lead.Decision)
	}
	if got := kinds(f.queued(lead.ID)); got != "" {
		t.Fatalf("a junk lead has events queued: %s", got)
	}
	after := f.mustStage(lead.ID, app.LeadEventInput{Stage: "won", Value: f64(4200), Currency: "TRY"})
	if after.Verdict != model.VerdictClean || after.DecidedBy != model.DecidedByCRM {
		t.Fatalf("after won: %+v", after.Decision)
	}
	// The raw lead event held back for junk goes too, then the qualified
	// event, then the sale.
	if got := kinds(f.queued(lead.ID)); got != "lead,qualified,stage:won" {
		t.Fatalf("queued: %s", got)
	}
	if w := f.sentByKind(lead.ID)["stage:won"]; w.CustomData["value"] != 4200.0 || w.CustomData["currency"] != "TRY" {
		t.Errorf("won: %+v", w.CustomData)
	}
}

func TestOwnerJunkHoldsStagesUntilTheWordChanges(t *testing.T) {
	t.Parallel()
	f, lead := newCRMFixture(t)
	f.clk.Add(time.Hour)
	f.evidence(lead.ID, qualify.Evidence{Type: qualify.EvidenceJunk})
	if got := kinds(f.queued(lead.ID)); got != "" {
		t.Fatalf("the owner's junk left events queued: %s", got)
	}

	f.clk.Add(20 * time.Hour)
	meetingAt := f.clk.Now()
	after := f.mustStage(lead.ID, app.LeadEventInput{Stage: "meeting", ActionSource: "chat"})
	f.clk.Add(30 * time.Hour)
	wonAt := f.clk.Now()
	f.mustStage(lead.ID, app.LeadEventInput{Stage: "won", Value: f64(6000)})
	f.mustStage(lead.ID, app.LeadEventInput{Stage: "won"}) // a replay
	if after.Verdict != model.VerdictJunk || after.DecidedBy != model.DecidedByOwner {
		t.Fatalf("a stage overturned the owner's junk: %+v", after.Decision)
	}
	if got := kinds(f.queued(lead.ID)); got != "" {
		t.Fatalf("stages of an owner-junk lead were queued: %s", got)
	}
	for kind := range f.deliveries(lead.ID) {
		if kind != model.KindLead {
			t.Errorf("%s is in the outbox of an owner-junk lead", kind)
		}
	}
	stages, _ := f.db.LeadStagesByLead(context.Background(), lead.ID)
	if len(stages) != 2 || stages[0].Stage != "meeting" || stages[1].Stage != "won" || *stages[1].Value != 6000 {
		t.Fatalf("recorded stages: %+v", stages)
	}
	held := 0
	for _, h := range f.history(lead.ID) {
		if h.Kind == model.HistoryStage {
			if h.Data["held"] != app.HeldOwnerJunk || h.Data["queued"] != false {
				t.Errorf("stage entry: %+v", h.Data)
			}
			held++
		}
	}
	if held != 2 {
		t.Errorf("%d held stages in the story, want 2", held)
	}

	// The owner changes the word: what the evidence allows goes out, once.
	f.clk.Add(time.Hour)
	clean := f.evidence(lead.ID, qualify.Evidence{Type: qualify.EvidenceCustomer})
	if clean.Verdict != model.VerdictClean || clean.DecidedBy != model.DecidedByOwner {
		t.Fatalf("after customer: %+v", clean.Decision)
	}
	if got := kinds(f.queued(lead.ID)); got != "lead,qualified,stage:meeting,stage:won" {
		t.Fatalf("released: %s", got)
	}
	ev := f.sentByKind(lead.ID)
	if q := ev[model.KindQualified]; q.EventTime != lead.SubmittedAt.Unix() || q.ActionSource != capi.SourceSystemGenerated ||
		q.CustomData["qualified_by"] != model.DecidedByOwner {
		t.Errorf("qualified: %+v", q)
	}
	if m := ev["stage:meeting"]; m.EventTime != meetingAt.Unix() || m.ActionSource != capi.SourceChat || m.EventName != "Schedule" ||
		m.EventID != capi.QualifiedEventID(lead.ID, "stage:meeting") {
		t.Errorf("meeting: %+v", m)
	}
	if w := ev["stage:won"]; w.EventTime != wonAt.Unix() || w.CustomData["value"] != 6000.0 || w.CustomData["currency"] != "EUR" {
		t.Errorf("won: %+v", w)
	}
	hist := f.history(lead.ID)
	if v := hist[len(hist)-1]; v.Kind != model.HistoryVerdict || v.Data["released_events"] != 3.0 {
		t.Errorf("the verdict entry does not say what was released: %+v", v.Data)
	}
	// Saying it again, or the CRM repeating itself, sends nothing more.
	f.evidence(lead.ID, qualify.Evidence{Type: qualify.EvidenceCustomer})
	f.mustStage(lead.ID, app.LeadEventInput{Stage: "won"})
	if n := len(f.deliveries(lead.ID)); n != 4 {
		t.Errorf("%d events after repeats, want 4", n)
	}
}

func TestStageBeforeTheOwnersJunk(t *testing.T) {
	t.Parallel()
	f, lead := newCRMFixture(t)
	f.clk.Add(2 * time.Hour)
	f.mustStage(lead.ID, app.LeadEventInput{Stage: "meeting"})
	if got := kinds(f.queued(lead.ID)); got != "lead,qualified,stage:meeting" {
		t.Fatalf("after the meeting: %s", got)
	}
	// The owner disagrees: the unsent events are cancelled and a later
	// stage is held.
	f.clk.Add(time.Hour)
	junk := f.evidence(lead.ID, qualify.Evidence{Type: qualify.EvidenceJunk})
	if !junk.OwnerSaidJunk() {
		t.Fatalf("after junk: %+v", junk.Decision)
	}
	f.clk.Add(time.Hour)
	f.mustStage(lead.ID, app.LeadEventInput{Stage: "won"})
	if got := kinds(f.queued(lead.ID)); got != "" {
		t.Fatalf("queued after the owner's junk: %s", got)
	}
	// And changes the word back: every cancelled event and the held stage
	// go, each once, as they were built.
	f.clk.Add(time.Hour)
	f.evidence(lead.ID, qualify.Evidence{Type: qualify.EvidenceCustomer})
	q := f.queued(lead.ID)
	if got := kinds(q); got != "lead,qualified,stage:meeting,stage:won" {
		t.Fatalf("after customer: %s", got)
	}
	if d := q[model.KindQualified]; d.LastError != "" || !d.NextAt.Equal(f.clk.Now()) {
		t.Errorf("the cancelled qualified event is not due again: %+v", d)
	}
}

func TestStageAfterTheOwnersWord(t *testing.T) {
	t.Parallel()
	f, lead := newCRMFixture(t)
	f.evidence(lead.ID, qualify.Evidence{Type: qualify.EvidenceCustomer})
	f.clk.Add(time.Hour)
	after := f.mustStage(lead.ID, app.LeadEventInput{Stage: "won"})
	if after.DecidedBy != model.DecidedByOwner || hasReason(after, qualify.CodeCRMQualified) {
		t.Errorf("a stage on a lead the owner confirmed changed its decision: %+v", after.Decision)
	}
	if got := kinds(f.queued(lead.ID)); got != "lead,qualified,stage:won" {
		t.Errorf("queued: %s", got)
	}
}

func TestStageOnALateLead(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.withStages()
	ctx := context.Background()
	expired := f.submit(crmLead())
	f.clk.Add(qualify.DefaultReviewTimeout + time.Hour)
	if n, err := f.svc.ExpireReviews(ctx); err != nil || n != 1 {
		t.Fatalf("expire: %d %v", n, err)
	}
	// The review ran out unconfirmed: the qualified event is never sent,
	// but the person is real and the sale happened now.
	after := f.mustStage(expired.ID, app.LeadEventInput{Stage: "won"})
	if after.Verdict != model.VerdictClean || after.DecidedBy != model.DecidedByCRM {
		t.Fatalf("after won: %+v", after.Decision)
	}
	if got := kinds(f.queued(expired.ID)); got != "lead,stage:won" {
		t.Errorf("expired review lead: %s", got)
	}
	hist := f.history(expired.ID)
	if v := hist[len(hist)-1]; v.Data["note"] == nil {
		t.Errorf("the story does not say why no qualified event went: %+v", v.Data)
	}

	// A lead the owner called junk and calls a real customer two weeks
	// later: nothing with its submit time can go, nor the stage held past
	// its window; the stage of yesterday still can.
	other := crmLead()
	other.Phone, other.Email, other.ExternalID, other.LeadAdsID = "0542 318 22 70", "ali.kaya@gmail.com", "crm-4712", ""
	old := f.submit(other)
	f.evidence(old.ID, qualify.Evidence{Type: qualify.EvidenceJunk})
	meetingAt := f.clk.Now().Add(time.Hour)
	f.clk.Set(meetingAt)
	f.mustStage(old.ID, app.LeadEventInput{Stage: "meeting"})
	f.clk.Add(7 * 24 * time.Hour)
	f.mustStage(old.ID, app.LeadEventInput{Stage: "won"})
	f.evidence(old.ID, qualify.Evidence{Type: qualify.EvidenceCustomer})
	if got := kinds(f.queued(old.ID)); got != "stage:won" {
		t.Errorf("owner's word changed 8 days on: %s", got)
	}
}

// A stage mapped to the site's qualified event is that event: held for an
// owner-junk lead, then sent once, when the owner changes the word.
func TestQualifiedStageHeldThenSentOnce(t *testing.T) {
	t.Parallel()
	f, lead := newCRMFixture(t)
	f.evidence(lead.ID, qualify.Evidence{Type: qualify.EvidenceJunk})
	f.clk.Add(time.Hour)
	f.mustStage(lead.ID, app.LeadEventInput{Stage: "qualified"})
	if got := kinds(f.queued(lead.ID)); got != "" {
		t.Fatalf("queued for an owner-junk lead: %s", got)
	}
	f.evidence(lead.ID, qualify.Evidence{Type: qualify.EvidenceCustomer})
	n := 0
	for _, d := range f.deliveries(lead.ID) {
		if d.EventName == "QualifiedLead" {
			n++
		}
	}
	if got := kinds(f.queued(lead.ID)); got != "lead,qualified" || n != 1 {
		t.Errorf("after customer: %s, %d QualifiedLead", got, n)
	}
}
