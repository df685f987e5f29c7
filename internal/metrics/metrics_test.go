package metrics_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/metrics"
	"github.com/cleanads/cleanads/internal/model"
)

type source struct {
	st  *model.Stats
	err error
}

func (s *source) Stats(context.Context, time.Time) (*model.Stats, error) { return s.st, s.err }

type sender struct{ err error }

func (s sender) Send(context.Context, capi.SendRequest) (*capi.Response, error) {
	if s.err != nil {
		return nil, s.err
	}
	return &capi.Response{EventsReceived: 1}, nil
}

func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func TestMetrics(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	src := &source{st: &model.Stats{
		Leads:      map[model.SiteID]map[model.Verdict]int{"dent": {"clean": 3, "junk": 1}},
		Deliveries: map[model.SiteID]map[model.DeliveryState]int{"dent": {"sent": 2, "retry": 1}},
		OldestDue:  now.Add(-90 * time.Second),
		Paused:     map[model.SiteID]bool{"dent": false, "kapali": true},
	}}
	m := metrics.New(metrics.Options{Source: src, Now: func() time.Time { return now },
		Writer: func() model.WriterStats {
			return model.WriterStats{Commits: 40, Calls: 900, Rebuilds: 3, LogSyncs: 38,
				LogSyncBuckets: []int64{10, 30, 35, 36, 36, 37, 37, 37, 38, 38, 38}, LogSyncSeconds: 0.125}
		}})
	m.ObserveRequest("POST /v1/leads", 202, 30*time.Millisecond)
	m.ObserveRequest("POST /v1/leads", 202, 40*time.Millisecond)
	m.ObserveRequest("unmatched", 404, time.Millisecond)
	s := m.Sender(sender{})
	s.Send(context.Background(), capi.SendRequest{Events: make([]json.RawMessage, 3)})
	m.Sender(sender{err: &capi.APIError{Status: 400, Code: 190}}).Send(context.Background(), capi.SendRequest{Events: make([]json.RawMessage, 2)})
	m.Sender(sender{err: errors.New("connection reset")}).Send(context.Background(), capi.SendRequest{Events: make([]json.RawMessage, 1)})
	out := scrape(t, m)
	for _, want := range []string{
		`cleanads_http_requests_total{route="POST /v1/leads",status="202"} 2`,
		`cleanads_http_requests_total{route="unmatched",status="404"} 1`,
		`cleanads_http_request_duration_seconds_count{route="POST /v1/leads"} 2`,
		`cleanads_leads{site="dent",verdict="clean"} 3`,
		`cleanads_leads{site="dent",verdict="junk"} 1`,
		`cleanads_deliveries{site="dent",state="retry"} 1`,
		`cleanads_outbox_oldest_due_seconds 90`,
		`cleanads_site_paused{site="kapali"} 1`,
		`cleanads_site_paused{site="dent"} 0`,
		`cleanads_delivery_requests_total{outcome="ok"} 1`,
		`cleanads_delivery_requests_total{outcome="auth"} 1`,
		`cleanads_delivery_requests_total{outcome="transient"} 1`,
		`cleanads_delivery_events_total{outcome="ok"} 3`,
		`cleanads_delivery_events_total{outcome="auth"} 2`,
		`cleanads_store_scrape_error 0`,
		`cleanads_store_commits_total 40`,
		`cleanads_store_commit_calls_total 900`,
		`cleanads_store_batch_rebuilds_total 3`,
		`cleanads_store_log_syncs_total 38`,
		`cleanads_store_log_sync_duration_seconds_bucket{le="0.0005"} 10`,
		`cleanads_store_log_sync_duration_seconds_bucket{le="0.005"} 36`,
		`cleanads_store_log_sync_duration_seconds_bucket{le="1"} 38`,
		`cleanads_store_log_sync_duration_seconds_sum 0.125`,
		`cleanads_store_log_sync_duration_seconds_count 38`,
		`go_goroutines`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s", want)
		}
	}
	src.err = errors.New("database is locked")
	if out := scrape(t, m); !strings.Contains(out, "cleanads_store_scrape_error 1") || strings.Contains(out, "cleanads_leads{") {
		t.Errorf("a failed store read:\n%s", out)
	}
}
