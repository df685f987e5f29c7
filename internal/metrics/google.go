package metrics

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/oauth2"

	"github.com/cleanads/cleanads/internal/google"
)

// GoogleSender is the Data Manager API as the google destination uses it;
// *google.Client is one.
type GoogleSender interface {
	IngestAll(ctx context.Context, ts oauth2.TokenSource, t google.Target, events []google.Event) ([]google.Outcome, int, error)
	Status(ctx context.Context, ts oauth2.TokenSource, requestID string) (*google.StatusResponse, error)
}

// GoogleSender wraps the Data Manager client so that its requests and
// events are counted: cleanads_google_requests_total by the outcome of
// each send (ok, or the error class: transient, invalid, pause) and
// cleanads_google_events_total by each event's outcome (ok, invalid for an
// event Google refused, or the class of the failure that left it unsent).
func (m *Metrics) GoogleSender(next GoogleSender) GoogleSender {
	c := &countingGoogle{next: next,
		requests: register(m.reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cleanads_google_requests_total",
			Help: "Sends to Google's Data Manager API (events:ingest, with their splits) by outcome: ok or the error class.",
		}, []string{"outcome"})),
		events: register(m.reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cleanads_google_events_total", Help: "Events sent to Google by outcome: ok, invalid, or the error class.",
		}, []string{"outcome"})),
	}
	return c
}

// register registers v, or returns the one registered before it.
func register(reg *prometheus.Registry, v *prometheus.CounterVec) *prometheus.CounterVec {
	if err := reg.Register(v); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			return are.ExistingCollector.(*prometheus.CounterVec)
		}
		panic(err)
	}
	return v
}

type countingGoogle struct {
	next             GoogleSender
	requests, events *prometheus.CounterVec
}

func (c *countingGoogle) IngestAll(ctx context.Context, ts oauth2.TokenSource, t google.Target, events []google.Event) ([]google.Outcome, int, error) {
	out, n, err := c.next.IngestAll(ctx, ts, t, events)
	outcome := "ok"
	if err != nil {
		outcome = google.Classify(err).String()
	}
	c.requests.WithLabelValues(outcome).Inc()
	for _, o := range out {
		switch {
		case o.Accepted:
			c.events.WithLabelValues("ok").Inc()
		case o.Err != nil:
			c.events.WithLabelValues(google.ClassInvalid.String()).Inc()
		default:
			c.events.WithLabelValues(outcome).Inc()
		}
	}
	return out, n, err
}

func (c *countingGoogle) Status(ctx context.Context, ts oauth2.TokenSource, requestID string) (*google.StatusResponse, error) {
	return c.next.Status(ctx, ts, requestID)
}
