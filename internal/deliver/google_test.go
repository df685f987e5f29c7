package deliver_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/google"
	"github.com/cleanads/cleanads/internal/google/googletest"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// googleFixture is the fixture with the site sending to Google too and a
// runner that has the google destination.
type googleFix struct {
	*fixture
	googleHandler *deliver.Google
}

func googleFixture(t *testing.T) (*googleFix, *googletest.Server) {
	f := newFixture(t, model.ModeLive)
	gg := googletest.New(t)
	f.site.Settings.Google = &model.GoogleSettings{OperatingAccountID: "1234567890", QualifiedConversionAction: "555", Currency: "EUR"}
	if err := f.db.SiteUpsert(f.ctx, f.site, f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	tokens := google.NewTokens(nil)
	creds := google.Credentials{ClientID: googletest.ClientID, ClientSecret: googletest.ClientSecret,
		RefreshToken: googletest.RefreshToken, TokenURL: gg.TokenURL()}
	h := deliver.NewGoogle(deliver.GoogleOptions{Store: f.db, Sender: google.NewClient(google.ClientOptions{BaseURL: gg.URL}),
		Tokens: func(model.SiteID) (oauth2.TokenSource, error) { return tokens.Source(creds) }})
	client := capi.NewClient(capi.ClientOptions{BaseURL: f.g.URL, HTTP: f.g.Client(), Now: f.clk.Now})
	f.runner = deliver.New(deliver.Options{Store: f.db, Sender: client, Now: f.clk.Now, Node: "node-a",
		Jitter: func() float64 { return 0.5 }, Handlers: map[string]deliver.Handler{model.DestinationGoogle: h}})
	return &googleFix{f, h}, gg
}

func (f *fixture) googleRows(t *testing.T, leads []model.LeadID) map[model.DeliveryState]int {
	t.Helper()
	out := map[model.DeliveryState]int{}
	for _, id := range leads {
		ds, err := f.db.DeliveriesByLead(f.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if d.Destination == model.DestinationGoogle {
				out[d.State]++
			}
		}
	}
	return out
}

// TestGoogleOutageAndRevokedGrantLeaveMetaAlone: Google down retries its
// rows and holds only its own share; a revoked grant pauses them with the
// owner's next step; Meta's rows of the same leads go meanwhile, and
// nothing is lost once Google is back.
func TestGoogleOutageAndRevokedGrantLeaveMetaAlone(t *testing.T) {
	f, gg := googleFixture(t)
	var ids []model.LeadID
	submit := func(n int) {
		in := lead(n)
		in.GClid = "gclid-" + string(rune('a'+n))
		l, _, err := f.svc.Submit(f.ctx, f.site, in)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, l.ID)
	}
	gg.SetDown(googletest.FaultUnavailable)
	for i := 0; i < 3; i++ {
		submit(i)
	}
	f.run(t)
	if n := len(f.g.Events()); n != 6 {
		t.Fatalf("Meta got %d events during Google's outage, want 6", n)
	}
	if c := f.googleRows(t, ids); c[model.DeliveryRetry] != 3 || len(gg.Events()) != 0 {
		t.Fatalf("google rows %v", c)
	}
	gg.SetDown(googletest.FaultNone)
	f.clk.Add(deliver.DefaultMinBackoff * 2)
	f.run(t)
	if c := f.googleRows(t, ids); c[model.DeliverySent] != 3 || len(gg.Events()) != 3 {
		t.Fatalf("after the outage: %v, %d at Google", c, len(gg.Events()))
	}

	gg.RevokeGrant()
	submit(3)
	f.run(t)
	if n := len(f.g.Events()); n != 8 {
		t.Fatalf("Meta got %d events with Google's grant revoked, want 8", n)
	}
	if c := f.googleRows(t, ids); c[model.DeliveryPaused] != 1 {
		t.Fatalf("google rows with the grant revoked: %v", c)
	}
	reason, err := f.db.DestinationPauseReason(f.ctx, model.Share{Site: "dent", Destination: model.DestinationGoogle})
	if err != nil || !strings.Contains(strings.ToLower(reason), "authorise cleanads again") {
		t.Fatalf("pause reason %q %v", reason, err)
	}
	// The site saved unchanged (a restart) keeps the pause; the owner's
	// new refresh token (another credentials fingerprint) lifts it.
	if err := f.db.SiteUpsert(f.ctx, f.site, f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if r, _ := f.db.DestinationPauseReason(f.ctx, model.Share{Site: "dent", Destination: model.DestinationGoogle}); r == "" {
		t.Fatal("saving the site unchanged lifted the pause")
	}
	gg.RestoreGrant()
	f.site.Settings.Google.Credentials = "fingerprint-of-the-new-grant"
	if err := f.db.SiteUpsert(f.ctx, f.site, f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	f.clk.Add(deliver.DefaultPoll * 2)
	f.run(t)
	f.run(t)
	if c := f.googleRows(t, ids); c[model.DeliverySent] != 4 || len(gg.Events()) != 4 || len(f.g.Events()) != 8 {
		t.Fatalf("after the grant came back: %v, %d at Google, %d at Meta", c, len(gg.Events()), len(f.g.Events()))
	}
}

// TestGoogleRequestStatus: a request Google is still processing is
// followed up and its per-destination result recorded on the rows; a
// request Google fails when processing dead-letters its rows with
// Google's reason.
func TestGoogleRequestStatus(t *testing.T) {
	f, gg := googleFixture(t)
	h := f.googleHandler
	in := lead(0)
	in.GClid = "gclid-0"
	l, _, err := f.svc.Submit(f.ctx, f.site, in)
	if err != nil {
		t.Fatal(err)
	}
	gg.SetProcessing(1)
	f.run(t)
	row := func() *model.Delivery {
		ds, _ := f.db.DeliveriesByLead(f.ctx, l.ID)
		for _, d := range ds {
			if d.Destination == model.DestinationGoogle {
				return d
			}
		}
		t.Fatal("no google row")
		return nil
	}
	if d := row(); d.State != model.DeliverySent || !strings.Contains(string(d.Response), `"awaiting":true`) ||
		!strings.Contains(string(d.Response), "PROCESSING") {
		t.Fatalf("after the send: %s %s", d.State, d.Response)
	}
	if n, err := h.Follow(f.ctx); err != nil || n != 1 {
		t.Fatalf("follow: %d %v", n, err)
	}
	if d := row(); d.State != model.DeliverySent || strings.Contains(string(d.Response), "awaiting") ||
		!strings.Contains(string(d.Response), `"requestStatus":"SUCCESS"`) {
		t.Fatalf("after the follow-up: %s %s", d.State, d.Response)
	}
	if n, _ := h.Follow(f.ctx); n != 0 {
		t.Errorf("a second follow-up found %d", n)
	}

	gg.SetProcessingFailure("INVALID_EVENT")
	in = lead(1)
	in.GClid = "gclid-1"
	l, _, err = f.svc.Submit(f.ctx, f.site, in)
	if err != nil {
		t.Fatal(err)
	}
	f.run(t)
	if d := row(); d.State != model.DeliveryDead || !strings.Contains(d.LastError, "INVALID_EVENT") || d.SentAt != nil {
		t.Fatalf("failed when processed: %s %q %v", d.State, d.LastError, d.SentAt)
	}
}

// TestGoogleRefusedEventIsDeadLettered: Google refuses the whole batch for
// one event its local checks could not see (older than Google's window);
// that event is dead-lettered with Google's reason and the others are
// sent in the next request.
func TestGoogleRefusedEventIsDeadLettered(t *testing.T) {
	f, gg := googleFixture(t)
	now := f.clk.Now()
	var ids []string
	err := f.db.InTx(f.ctx, func(tx *store.Tx) error {
		for i := 0; i < 5; i++ {
			at := now.Add(-time.Hour)
			if i == 2 {
				at = now.Add(-100 * 24 * time.Hour)
			}
			l := &model.Lead{ID: model.LeadID(fmt.Sprintf("ld_g%d", i)), Email: fmt.Sprintf("p%d@gmail.com", i), SubmittedAt: at}
			e, err := google.BuildEvent(google.Params{Settings: f.site.Settings.Google, Country: "TR", Lead: l, Kind: model.KindQualified})
			if err != nil {
				return err
			}
			p, _ := json.Marshal(e)
			d := &model.Delivery{ID: fmt.Sprintf("dg_%d", i), SiteID: "dent", LeadID: l.ID, Destination: model.DestinationGoogle,
				Kind: model.KindQualified, EventName: "QualifiedLead", EventID: e.TransactionID, Payload: p,
				State: model.DeliveryPending, NextAt: now, DeadlineAt: now.Add(time.Hour), CreatedAt: now, UpdatedAt: now}
			ids = append(ids, d.ID)
			if _, err := tx.DeliveryInsert(f.ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st := f.run(t)
	if st.Sent != 4 || st.Dead != 1 || st.Requests != 1 { // one batch; the platform split it
		t.Fatalf("round %+v", st)
	}
	for i, id := range ids {
		d, err := f.db.DeliveryByID(f.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			if d.State != model.DeliveryDead || !strings.Contains(d.LastError, "events[2].event_timestamp") ||
				!strings.Contains(d.LastError, "INVALID_EVENT") {
				t.Errorf("the refused event: %s %q", d.State, d.LastError)
			}
			continue
		}
		if d.State != model.DeliverySent {
			t.Errorf("event %d: %s %q", i, d.State, d.LastError)
		}
	}
	if len(gg.Events()) != 4 {
		t.Errorf("%d at Google", len(gg.Events()))
	}
}

// TestGooglePartialSuccess: Google processes a request only in part and
// counts the failures without naming the events: the rows stay sent and
// each says how many of its request's events failed, and why.
func TestGooglePartialSuccess(t *testing.T) {
	f, gg := googleFixture(t)
	gg.SetPartialFailure("INVALID_EMAIL_FORMAT", 1)
	var leads []model.LeadID
	for i := range 3 {
		in := lead(i)
		in.GClid = fmt.Sprintf("gclid-%d", i)
		l, _, err := f.svc.Submit(f.ctx, f.site, in)
		if err != nil {
			t.Fatal(err)
		}
		leads = append(leads, l.ID)
	}
	f.run(t)
	if got := f.googleRows(t, leads); got[model.DeliverySent] != 3 {
		t.Fatalf("google rows: %v", got)
	}
	for _, id := range leads {
		ds, _ := f.db.DeliveriesByLead(f.ctx, id)
		for _, d := range ds {
			if d.Destination != model.DestinationGoogle {
				continue
			}
			if !strings.Contains(d.LastError, "only in part: 1 of 3 events failed: INVALID_EMAIL_FORMAT (1)") ||
				!strings.Contains(string(d.Response), "PARTIAL_SUCCESS") {
				t.Errorf("row %s: %q %s", d.ID, d.LastError, d.Response)
			}
		}
	}
}
