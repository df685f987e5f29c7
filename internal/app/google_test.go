package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/google"
	"github.com/cleanads/cleanads/internal/model"
)

// googleSite makes the fixture's site send to Google too.
func (f *fixture) googleSite() {
	f.t.Helper()
	f.site.Settings.Google = &model.GoogleSettings{OperatingAccountID: "1234567890", QualifiedConversionAction: "555",
		Stages: map[string]string{"won": "666"}, Currency: "EUR"}
	f.site.Settings.Meta.Stages = map[string]model.StageEvent{"won": {Event: "Purchase"}}
	if err := f.db.SiteUpsert(context.Background(), f.site, f.clk.t); err != nil {
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
