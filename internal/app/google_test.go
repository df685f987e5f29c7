package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/google"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
)

// googleSite makes the fixture's site send to Google too.
func (f *fixture) googleSite() {
	f.t.Helper()
	f.site.Settings.Google = &model.GoogleSettings{OperatingAccountID: "1234567890", QualifiedConversionAction: "555",
		Stages: map[string]string{"won": "666"}, Currency: "EUR"}
	f.site.Settings.Meta.Stages = map[string]model.StageEvent{"won": {Event: "Purchase"}}
	if err := f.db.SiteUpsert(context.Background(), f.site, f.clk.Now()); err != nil {
		f.t.Fatal(err)
	}
	f.site, _ = f.db.SiteByID(context.Background(), "dent")
}

func (f *fixture) googleRows(id model.LeadID) []*model.Delivery {
	var out []*model.Delivery
	for _, d := range f.deliveries(id) {
		if d.Destination == model.DestinationGoogle {
			out = append(out, d)
		}
	}
	return out
}

// A clean lead's qualified event gets its Google twin in the same
// transaction, with Google's deadline; the raw lead event does not; a
// grey lead gets none; a stage with a value carries it.
func TestGoogleRowsBesideMeta(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.googleSite()
	in := realLead()
	in.GClid = "Cj0-gclid"
	l := f.submit(in)
	rows := f.googleRows(l.ID)
	if len(rows) != 1 || rows[0].Kind != model.KindQualified || rows[0].EventID != google.TransactionID(l.ID, model.KindQualified) ||
		!rows[0].DeadlineAt.Equal(l.SubmittedAt.Add(model.GoogleMaxEventAge)) || rows[0].PixelID != "1234567890" {
		t.Fatalf("google rows %+v", rows)
	}
	var e google.Event
	json.Unmarshal(rows[0].Payload, &e)
	if e.AdIdentifiers.GClid != "Cj0-gclid" || e.UserData.UserIdentifiers[0].EmailAddress != google.Hash("ayseyilmaz@gmail.com") {
		t.Errorf("payload %s", rows[0].Payload)
	}
	v := 6000.0
	if _, err := f.svc.AddLeadEvent(context.Background(), f.site, l.ID, &app.LeadEventInput{Type: app.TypeStage, Stage: "won",
		Value: &v, Currency: "EUR"}); err != nil {
		t.Fatal(err)
	}
	rows = f.googleRows(l.ID)
	if len(rows) != 2 {
		t.Fatalf("after won: %d rows", len(rows))
	}
	won := rows[0]
	if won.Kind != "stage:won" {
		won = rows[1]
	}
	e = google.Event{}
	json.Unmarshal(won.Payload, &e)
	if won.Kind != "stage:won" || e.ConversionValue != 6000 || e.Currency != "EUR" || e.DestinationReferences[0] != "666" {
		t.Errorf("won: %s", won.Payload)
	}
	grey := f.submit(greyLead())
	if rows := f.googleRows(grey.ID); len(rows) != 0 {
		t.Errorf("a grey lead has %d google rows", len(rows))
	}
}

// Forgetting a person cancels their Google rows and removes the click id
// and the address from the payload; the hashed e-mail stays as Meta's
// hashed keys do.
func TestForgetGoogleRows(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.googleSite()
	in := realLead()
	in.GClid = "Cj0-gclid-forget"
	in.Fields = map[string]string{"postal_code": "34710"}
	l := f.submit(in)
	if rows := f.googleRows(l.ID); len(rows) != 1 || !strings.Contains(string(rows[0].Payload), "34710") {
		t.Fatalf("before: %+v", rows)
	}
	if _, err := f.svc.Forget(context.Background(), app.ForgetInput{Email: "ayse.yilmaz@gmail.com"}); err != nil {
		t.Fatal(err)
	}
	d := f.googleRows(l.ID)[0]
	if strings.Contains(string(d.Payload), "Cj0-gclid-forget") || strings.Contains(string(d.Payload), "34710") ||
		!strings.Contains(string(d.Payload), "transactionId") || d.State == model.DeliveryPending {
		t.Errorf("after forget: %s %s", d.State, d.Payload)
	}
}

// A deal won more than 7 days after the click is too old for Meta but not
// for Google, which takes click conversions for 90 days: the stage is
// recorded and goes to Google alone; past Google's window too it is
// refused as before. An owner's junk holds it back, and changing the word
// releases it to Google.
func TestLateStageGoesToGoogleOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	f.googleSite()
	in := realLead()
	in.GClid = "Cj0-gclid-late"
	l := f.submit(in)
	f.clk.Add(20 * 24 * time.Hour)
	v := 6000.0
	wonAt := f.clk.Now().Add(-9 * 24 * time.Hour).Format(time.RFC3339)
	got, err := f.svc.AddLeadEvent(ctx, f.site, l.ID, &app.LeadEventInput{Type: app.TypeStage, Stage: "won", At: wonAt,
		Value: &v, Currency: "EUR"})
	if err != nil {
		t.Fatalf("a stage Google still takes was refused: %v", err)
	}
	var won *model.Delivery
	for _, d := range f.googleRows(l.ID) {
		if d.Kind == "stage:won" {
			won = d
		}
	}
	if won == nil || won.State != model.DeliveryPending {
		t.Fatalf("no pending google row for the late stage: %+v", f.googleRows(l.ID))
	}
	for _, d := range f.deliveries(l.ID) {
		if d.Destination != model.DestinationGoogle && d.Kind == "stage:won" {
			t.Errorf("the late stage was queued for Meta too: %+v", d)
		}
	}
	var e google.Event
	json.Unmarshal(won.Payload, &e)
	if e.ConversionValue != 6000 || e.EventTimestamp != wonAt {
		t.Errorf("late won: %s", won.Payload)
	}
	h := f.history(got.ID)
	if last := h[len(h)-1]; last.Kind != model.HistoryStage || !strings.Contains(fmt.Sprint(last.Data["note"]), "sent to Google Ads only") {
		t.Errorf("the story does not say Meta was left out: %+v", last.Data)
	}

	// A lead the owner called junk holds the late stage; changing the word
	// sends it to Google.
	l2 := f.submit(realLeadFrom("ayse.kaya@gmail.com", "+905324128720", "Cj0-gclid-late-2"))
	f.evidence(l2.ID, qualify.Evidence{Type: qualify.EvidenceJunk})
	f.clk.Add(10 * 24 * time.Hour)
	if _, err := f.svc.AddLeadEvent(ctx, f.site, l2.ID, &app.LeadEventInput{Type: app.TypeStage, Stage: "won",
		At: f.clk.Now().Add(-8 * 24 * time.Hour).Format(time.RFC3339), Value: &v, Currency: "EUR"}); err != nil {
		t.Fatal(err)
	}
	if rows := f.googleRows(l2.ID); hasKind(rows, "stage:won") {
		t.Errorf("an owner-junk lead's late stage was queued: %+v", rows)
	}
	f.evidence(l2.ID, qualify.Evidence{Type: qualify.EvidenceCustomer})
	if rows := f.googleRows(l2.ID); !hasKind(rows, "stage:won") {
		t.Errorf("changing the word did not release the late stage to Google: %+v", rows)
	}

	// Past Google's 90 days as well: refused.
	f.clk.Add(80 * 24 * time.Hour)
	l3 := f.submit(realLeadFrom("ayse.demir@gmail.com", "+905324128721", "Cj0-gclid-late-3"))
	f.clk.Add(95 * 24 * time.Hour)
	if _, err := f.svc.AddLeadEvent(ctx, f.site, l3.ID, &app.LeadEventInput{Type: app.TypeStage, Stage: "won",
		At: f.clk.Now().Add(-8 * 24 * time.Hour).Format(time.RFC3339)}); err == nil {
		t.Error("a stage past both windows was accepted")
	}
}

func hasKind(ds []*model.Delivery, kind string) bool {
	for _, d := range ds {
		if d.Kind == kind {
			return true
		}
	}
	return false
}

// realLeadFrom is realLead from another person with its own Google click.
func realLeadFrom(email, phone, gclid string) *app.LeadInput {
	in := realLead()
	in.Email, in.Phone, in.GClid = email, phone, gclid
	return in
}

// A lead the rules called junk and the owner calls a real customer after a
// week: too late for Meta's qualified event, not for Google's.
func TestLateQualifiedGoesToGoogleOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.googleSite()
	in := realLeadFrom("ayse.sahin@gmail.com", "+905324128722", "Cj0-gclid-late-q")
	in.Honeypot = "http://spam.example"
	l := f.submit(in)
	if l.Verdict != model.VerdictJunk || len(f.googleRows(l.ID)) != 0 {
		t.Fatalf("want a rules-junk lead with nothing queued: %s %+v", l.Verdict, f.googleRows(l.ID))
	}
	f.clk.Add(10 * 24 * time.Hour)
	got := f.evidence(l.ID, qualify.Evidence{Type: qualify.EvidenceCustomer})
	if got.Verdict != model.VerdictClean {
		t.Fatalf("after the owner's word: %s", got.Verdict)
	}
	rows := f.googleRows(l.ID)
	if !hasKind(rows, model.KindQualified) {
		t.Fatalf("no Google qualified row: %+v", rows)
	}
	for _, d := range f.deliveries(l.ID) {
		if d.Destination != model.DestinationGoogle && d.Kind == model.KindQualified {
			t.Errorf("a qualified event too old for Meta was queued for it: %+v", d)
		}
	}
	var e google.Event
	json.Unmarshal(rows[0].Payload, &e)
	if e.EventTimestamp != l.SubmittedAt.UTC().Format(time.RFC3339) {
		t.Errorf("the qualified event's time is %s, want the submit time %s", e.EventTimestamp, l.SubmittedAt)
	}
}
