package metrics_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/google"
	"github.com/cleanads/cleanads/internal/google/googletest"
	"github.com/cleanads/cleanads/internal/metrics"
)

func TestGoogleSenderCounts(t *testing.T) {
	g := googletest.New(t)
	m := metrics.New(metrics.Options{})
	s := m.GoogleSender(google.NewClient(google.ClientOptions{BaseURL: g.URL}))
	m.GoogleSender(google.NewClient(google.ClientOptions{BaseURL: g.URL})) // a second wrap shares the counters
	ts, err := google.NewTokens(nil).Source(google.Credentials{ClientID: googletest.ClientID,
		ClientSecret: googletest.ClientSecret, RefreshToken: googletest.RefreshToken, TokenURL: g.TokenURL()})
	if err != nil {
		t.Fatal(err)
	}
	ev := func(tx, email string) google.Event {
		return google.Event{TransactionID: tx, EventTimestamp: time.Now().UTC().Format(time.RFC3339),
			DestinationReferences: []string{"1"}, UserData: &google.UserData{UserIdentifiers: []google.UserIdentifier{{EmailAddress: email}}}}
	}
	tg := google.Target{OperatingAccountID: "1234567890"}
	s.IngestAll(context.Background(), ts, tg, []google.Event{ev("a", google.Hash("a")), ev("b", "bad")})
	g.FailNext(1, googletest.FaultUnavailable)
	s.IngestAll(context.Background(), ts, tg, []google.Event{ev("c", google.Hash("c"))})
	body := scrape(t, m)
	for _, want := range []string{
		`cleanads_google_requests_total{outcome="ok"} 1`,
		`cleanads_google_requests_total{outcome="transient"} 1`,
		`cleanads_google_events_total{outcome="ok"} 1`,
		`cleanads_google_events_total{outcome="invalid"} 1`,
		`cleanads_google_events_total{outcome="transient"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %s in\n%s", want, body)
		}
	}
}
