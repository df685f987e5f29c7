package google_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/google"
	"github.com/cleanads/cleanads/internal/google/googletest"
)

func oauthCreds(g *googletest.Server) google.Credentials {
	return google.Credentials{ClientID: googletest.ClientID, ClientSecret: googletest.ClientSecret,
		RefreshToken: googletest.RefreshToken, TokenURL: g.TokenURL()}
}

func event(i int, action string) google.Event {
	return google.Event{TransactionID: "tx" + string(rune('a'+i%26)) + strings.Repeat("0", i/26),
		EventTimestamp: time.Now().UTC().Add(-time.Hour).Format(time.RFC3339), DestinationReferences: []string{action},
		AdIdentifiers: &google.AdIdentifiers{GClid: "gclid"},
		UserData:      &google.UserData{UserIdentifiers: []google.UserIdentifier{{EmailAddress: google.Hash("a@example.com")}}}}
}

var target = google.Target{OperatingAccountID: "1234567890"}

func TestIngestAndStatus(t *testing.T) {
	for name, creds := range map[string]func(*googletest.Server) google.Credentials{
		"refresh token": oauthCreds,
		"service account": func(g *googletest.Server) google.Credentials {
			return google.Credentials{ServiceAccountKey: g.ServiceAccountKey()}
		},
	} {
		t.Run(name, func(t *testing.T) {
			g := googletest.New(t)
			ts, err := google.NewTokens(nil).Source(creds(g))
			if err != nil {
				t.Fatal(err)
			}
			c := google.NewClient(google.ClientOptions{BaseURL: g.URL})
			out, n, err := c.IngestAll(context.Background(), ts, target, []google.Event{event(0, "111"), event(1, "222")})
			if err != nil || n != 1 || !out[0].Accepted || out[0].RequestID == "" || out[1].RequestID != out[0].RequestID {
				t.Fatalf("ingest: %+v %d %v", out, n, err)
			}
			got := g.Events()
			if len(got) != 2 || got[0].Destinations[0] != "111" || got[1].Destinations[0] != "222" {
				t.Fatalf("received: %+v", got)
			}
			g.SetProcessing(1)
			st, err := c.Status(context.Background(), ts, out[0].RequestID)
			if err != nil || st.Done() || st.PerDestination[0].RequestStatus != google.StatusProcessing {
				t.Fatalf("first status: %+v %v", st, err)
			}
			st, err = c.Status(context.Background(), ts, out[0].RequestID)
			if err != nil || !st.Done() || len(st.PerDestination) != 2 || st.PerDestination[0].RequestStatus != google.StatusSuccess ||
				st.PerDestination[0].EventsIngestionStatus.RecordCount != "1" {
				t.Fatalf("status: %+v %v", st, err)
			}
			if g.Grants() != 1 {
				t.Errorf("%d tokens for three calls, want 1", g.Grants())
			}
		})
	}
}

func TestValidateOnlyRecordsNothing(t *testing.T) {
	g := googletest.New(t)
	ts, _ := google.NewTokens(nil).Source(oauthCreds(g))
	c := google.NewClient(google.ClientOptions{BaseURL: g.URL})
	tg := target
	tg.ValidateOnly = true
	out, _, err := c.IngestAll(context.Background(), ts, tg, []google.Event{event(0, "111")})
	if err != nil || !out[0].Accepted || len(g.Events()) != 0 || g.Validations() != 1 {
		t.Fatalf("validate only: %+v %v, %d events", out, err, len(g.Events()))
	}
}

// One token source per credential, refreshed once for all workers.
func TestTokensSharedByWorkers(t *testing.T) {
	g := googletest.New(t)
	tokens := google.NewTokens(nil)
	c := google.NewClient(google.ClientOptions{BaseURL: g.URL})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ts, err := tokens.Source(oauthCreds(g))
			if err != nil {
				t.Error(err)
				return
			}
			if _, _, err := c.IngestAll(context.Background(), ts, target, []google.Event{event(i, "111")}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if g.Grants() != 1 {
		t.Errorf("%d token grants for 8 workers, want 1", g.Grants())
	}
}

// Google refuses a batch whole; the events its violations name are taken
// out with Google's reason and the rest sent in one more request.
func TestFastFailIsolatesNamedEvents(t *testing.T) {
	g := googletest.New(t)
	ts, _ := google.NewTokens(nil).Source(oauthCreds(g))
	c := google.NewClient(google.ClientOptions{BaseURL: g.URL})
	evs := make([]google.Event, 10)
	for i := range evs {
		evs[i] = event(i, "111")
	}
	// Past the local checks, as a bug or a changed rule would be.
	evs[3].UserData.UserIdentifiers[0].EmailAddress = "not-hex"
	evs[7].AdIdentifiers.GBraid = "second click id"
	out, n, err := c.IngestAll(context.Background(), ts, target, evs)
	if err != nil || n != 2 {
		t.Fatalf("%d requests, %v; want 2, nil", n, err)
	}
	for i, o := range out {
		bad := i == 3 || i == 7
		if bad != (o.Err != nil) || bad == o.Accepted {
			t.Errorf("event %d: %+v", i, o)
		}
		if bad && google.Classify(o.Err) != google.ClassInvalid {
			t.Errorf("event %d: class %v", i, google.Classify(o.Err))
		}
	}
	if !strings.Contains(out[3].Err.Error(), "INVALID_SHA256_FORMAT") || !strings.Contains(out[7].Err.Error(), "gclid") {
		t.Errorf("reasons: %v / %v", out[3].Err, out[7].Err)
	}
	if len(g.Events()) != 8 {
		t.Errorf("%d accepted, want 8", len(g.Events()))
	}
}

// A refusal that names no event is halved until the culprit stands alone.
func TestFastFailBisectsWhenNoEventNamed(t *testing.T) {
	g := googletest.New(t)
	ts, _ := google.NewTokens(nil).Source(oauthCreds(g))
	evs := make([]google.Event, 8)
	for i := range evs {
		evs[i] = event(i, "111")
	}
	c2 := google.NewClient(google.ClientOptions{BaseURL: g.URL, HTTP: refuseWhen(t, func(body string) bool {
		return strings.Contains(body, `"transactionId":"txf"`)
	})})
	out, n, err := c2.IngestAll(context.Background(), ts, target, evs)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range out {
		if (i == 5) != (o.Err != nil) {
			t.Errorf("event %d: %+v", i, o)
		}
	}
	// 8 -> 4+4 -> (4 ok) 2+2 -> (2 ok) 1+1: 1 + 2 + 2 + 2 = 7 requests.
	if n != 7 || len(g.Events()) != 7 {
		t.Errorf("%d requests, %d accepted; want 7, 7", n, len(g.Events()))
	}
}

func TestErrorClasses(t *testing.T) {
	g := googletest.New(t)
	ts, _ := google.NewTokens(nil).Source(oauthCreds(g))
	c := google.NewClient(google.ClientOptions{BaseURL: g.URL})
	for _, tc := range []struct {
		f     googletest.Fault
		class google.Class
		words string
	}{
		{googletest.FaultUnavailable, google.ClassTransient, ""},
		{googletest.FaultResourceExhausted, google.ClassTransient, ""},
		{googletest.FaultDeadline, google.ClassTransient, ""},
		{googletest.FaultInternal, google.ClassTransient, ""},
		{googletest.FaultDrop, google.ClassTransient, ""},
		{googletest.FaultPermission, google.ClassPause, "access"},
		{googletest.FaultTerms, google.ClassPause, "terms"},
		{googletest.FaultLeadsOff, google.ClassPause, "enhanced conversions for leads"},
	} {
		g.FailNext(1, tc.f)
		out, _, err := c.IngestAll(context.Background(), ts, target, []google.Event{event(0, "111")})
		if google.Classify(err) != tc.class || out[0].Accepted {
			t.Errorf("fault %d: class %v (%v), want %v", tc.f, google.Classify(err), err, tc.class)
		}
		if tc.words != "" && !strings.Contains(google.PauseReason(err), tc.words) {
			t.Errorf("fault %d: reason %q", tc.f, google.PauseReason(err))
		}
		if tc.f == googletest.FaultResourceExhausted && google.RetryAfter(err) != 30*time.Second {
			t.Errorf("retry after %v", google.RetryAfter(err))
		}
	}
	g.SetConversionActions("111")
	_, _, err := c.IngestAll(context.Background(), ts, target, []google.Event{event(0, "999")})
	if google.Classify(err) != google.ClassPause || !strings.Contains(google.PauseReason(err), "conversion action") {
		t.Errorf("unknown conversion action: %v / %s", err, google.PauseReason(err))
	}
}

// A revoked grant pauses with words that ask the owner to authorise again;
// a key the token endpoint refuses does the same.
func TestInvalidGrantPauses(t *testing.T) {
	g := googletest.New(t)
	g.RevokeGrant()
	c := google.NewClient(google.ClientOptions{BaseURL: g.URL})
	for name, cr := range map[string]google.Credentials{
		"refresh token":   oauthCreds(g),
		"service account": {ServiceAccountKey: g.ServiceAccountKey()},
	} {
		ts, err := google.NewTokens(nil).Source(cr)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = c.IngestAll(context.Background(), ts, target, []google.Event{event(0, "111")})
		var ae *google.AuthError
		if !errors.As(err, &ae) || !ae.Grant || google.Classify(err) != google.ClassPause ||
			!strings.Contains(google.PauseReason(err), "Authorise CleanAds again") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if g.Requests() != 0 {
		t.Errorf("%d ingest requests without a token", g.Requests())
	}
	bad := oauthCreds(g)
	bad.ClientSecret = ""
	if _, err := google.NewTokens(nil).Source(bad); google.Classify(err) != google.ClassPause {
		t.Errorf("incomplete client: %v", err)
	}
}

// The stand-in's Refuse fails a request for one event as Google does, naming
// it (events[N]) with why; the event is taken out and the rest go. Its
// FaultInvalidArgument refuses every request naming no event: each event
// ends refused alone, none is accepted, and Allow takes the event again.
func TestStandInRefusals(t *testing.T) {
	g := googletest.New(t)
	ts, _ := google.NewTokens(nil).Source(oauthCreds(g))
	c := google.NewClient(google.ClientOptions{BaseURL: g.URL})
	evs := []google.Event{event(0, "111"), event(1, "111"), event(2, "111")}
	g.Refuse(evs[1].TransactionID, "the event is not allowed here")
	out, n, err := c.IngestAll(context.Background(), ts, target, evs)
	if err != nil || n != 2 {
		t.Fatalf("%d requests, %v; want 2, nil", n, err)
	}
	if !out[0].Accepted || !out[2].Accepted || out[1].Err == nil || !strings.Contains(out[1].Err.Error(), "events[1]: the event is not allowed here") {
		t.Fatalf("outcomes %+v", out)
	}
	g.SetDown(googletest.FaultInvalidArgument)
	out, _, err = c.IngestAll(context.Background(), ts, target, evs[:2])
	if err != nil || out[0].Err == nil || out[1].Err == nil || google.Classify(out[0].Err) != google.ClassInvalid {
		t.Fatalf("while refused: %+v %v", out, err)
	}
	g.SetDown(googletest.FaultNone)
	g.Allow(evs[1].TransactionID)
	if out, _, err = c.IngestAll(context.Background(), ts, target, evs[1:2]); err != nil || !out[0].Accepted {
		t.Fatalf("after Allow: %+v %v", out, err)
	}
	if len(g.Events()) != 3 {
		t.Errorf("%d accepted, want 3", len(g.Events()))
	}
}
