// Package metrics owns CleanAds' Prometheus metrics: HTTP requests by route
// pattern and status, their latency, delivery requests to Meta by outcome
// and error class, and, read from the store at scrape time, leads by
// verdict, deliveries by state, the oldest due event's wait and paused
// sites, and the SQLite writer's commits and log fsyncs. Labels are route
// patterns, site ids, verdicts, states and error classes: bounded sets,
// never paths or personal data.
package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
)

// Source is the store as metrics read it at scrape time.
type Source interface {
	Stats(ctx context.Context, now time.Time) (*model.Stats, error)
}

// Sender posts one request of events to Meta; *capi.Client is one.
type Sender interface {
	Send(ctx context.Context, req capi.SendRequest) (*capi.Response, error)
}

// Options are the dependencies of Metrics.
type Options struct {
	Source Source
	Logger *slog.Logger
	Now    func() time.Time
	// ScrapeTimeout bounds the store queries of one scrape (default 5s).
	ScrapeTimeout time.Duration
	// Writer, when set, reports the SQLite writer's counters.
	Writer func() model.WriterStats
	// Build, when set, is exported as the labels of cleanads_build_info
	// (always 1): version, revision, goversion.
	Build map[string]string
}

// Metrics is one registry with CleanAds' metrics.
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	sends    *prometheus.CounterVec
	events   *prometheus.CounterVec
}

// New returns Metrics registered in a registry of their own, with the Go
// runtime and process collectors.
func New(o Options) *Metrics {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ScrapeTimeout <= 0 {
		o.ScrapeTimeout = 5 * time.Second
	}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cleanads_http_requests_total", Help: "HTTP requests by route pattern and status.",
		}, []string{"route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "cleanads_http_request_duration_seconds", Help: "HTTP request latency by route pattern.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route"}),
		sends: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cleanads_delivery_requests_total",
			Help: "Requests to Meta's Conversions API by outcome: ok, or the error class (transient, throttled, rejected, auth).",
		}, []string{"outcome"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cleanads_delivery_events_total", Help: "Events in requests to Meta by outcome: ok or the error class.",
		}, []string{"outcome"}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.sends, m.events,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&storeCollector{src: o.Source, now: o.Now, log: o.Logger, timeout: o.ScrapeTimeout})
	if o.Writer != nil {
		m.reg.MustRegister(writerCollector{o.Writer})
	}
	if o.Build != nil {
		info := prometheus.NewGauge(prometheus.GaugeOpts{Name: "cleanads_build_info",
			Help: "Always 1; the labels say what the running binary was built from.", ConstLabels: o.Build})
		info.Set(1)
		m.reg.MustRegister(info)
	}
	return m
}

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// ObserveRequest counts one answered request; route is the mux pattern.
func (m *Metrics) ObserveRequest(route string, status int, took time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route).Observe(took.Seconds())
}

// Sender wraps the Meta client so that every request is counted by its
// outcome, the failed ones by error class.
func (m *Metrics) Sender(s Sender) Sender { return &countingSender{next: s, m: m} }

type countingSender struct {
	next Sender
	m    *Metrics
}

func (c *countingSender) Send(ctx context.Context, req capi.SendRequest) (*capi.Response, error) {
	resp, err := c.next.Send(ctx, req)
	outcome := "ok"
	if err != nil {
		outcome = capi.Classify(err).String()
	}
	c.m.sends.WithLabelValues(outcome).Inc()
	c.m.events.WithLabelValues(outcome).Add(float64(len(req.Events)))
	return resp, err
}

var (
	leadsDesc = prometheus.NewDesc("cleanads_leads", "Leads stored, by site and current verdict.",
		[]string{"site", "verdict"}, nil)
	deliveriesDesc = prometheus.NewDesc("cleanads_deliveries", "Outbox events, by site and state.",
		[]string{"site", "state"}, nil)
	oldestDesc = prometheus.NewDesc("cleanads_outbox_oldest_due_seconds",
		"How long the longest-waiting due event (pending or retry) has been due; 0 when none is.", nil, nil)
	pausedDesc = prometheus.NewDesc("cleanads_site_paused",
		"1 while a site's delivery is paused (Meta refused its token), else 0.", []string{"site"}, nil)
	scrapeErrDesc = prometheus.NewDesc("cleanads_store_scrape_error",
		"1 when the store could not be read for this scrape.", nil, nil)
	commitsDesc = prometheus.NewDesc("cleanads_store_commits_total",
		"Transactions committed by SQLite's group committer (requests share them).", nil, nil)
	callsDesc = prometheus.NewDesc("cleanads_store_commit_calls_total",
		"Transactions of callers (requests, jobs) carried by those commits.", nil, nil)
	rebuildsDesc = prometheus.NewDesc("cleanads_store_batch_rebuilds_total",
		"Group commits rebuilt because one of their calls failed (rolled back, the others' writes run again).", nil, nil)
	syncsDesc = prometheus.NewDesc("cleanads_store_log_syncs_total",
		"fsyncs of SQLite's write-ahead log (commits share them).", nil, nil)
	syncSecondsDesc = prometheus.NewDesc("cleanads_store_log_sync_duration_seconds",
		"How long the fsyncs of SQLite's write-ahead log took: every write's answer waits for one.", nil, nil)
)

// writerCollector reports the SQLite writer's counters.
type writerCollector struct{ stats func() model.WriterStats }

func (c writerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- commitsDesc
	ch <- callsDesc
	ch <- rebuildsDesc
	ch <- syncsDesc
	ch <- syncSecondsDesc
}

func (c writerCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.stats()
	ch <- prometheus.MustNewConstMetric(commitsDesc, prometheus.CounterValue, float64(st.Commits))
	ch <- prometheus.MustNewConstMetric(callsDesc, prometheus.CounterValue, float64(st.Calls))
	ch <- prometheus.MustNewConstMetric(rebuildsDesc, prometheus.CounterValue, float64(st.Rebuilds))
	ch <- prometheus.MustNewConstMetric(syncsDesc, prometheus.CounterValue, float64(st.LogSyncs))
	if n := len(st.LogSyncBuckets); n == len(model.LogSyncBounds)+1 {
		buckets := make(map[float64]uint64, len(model.LogSyncBounds))
		for i, le := range model.LogSyncBounds {
			buckets[le] = uint64(st.LogSyncBuckets[i])
		}
		ch <- prometheus.MustNewConstHistogram(syncSecondsDesc, uint64(st.LogSyncBuckets[n-1]), st.LogSyncSeconds, buckets)
	}
}

// storeCollector reads the store at scrape time: the numbers are always
// current and nothing is kept in memory between scrapes.
type storeCollector struct {
	src     Source
	now     func() time.Time
	log     *slog.Logger
	timeout time.Duration
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{leadsDesc, deliveriesDesc, oldestDesc, pausedDesc, scrapeErrDesc} {
		ch <- d
	}
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	if c.src == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	now := c.now()
	st, err := c.src.Stats(ctx, now)
	if err != nil {
		c.log.Warn("metrics: reading the store", "err", err)
		ch <- prometheus.MustNewConstMetric(scrapeErrDesc, prometheus.GaugeValue, 1)
		return
	}
	ch <- prometheus.MustNewConstMetric(scrapeErrDesc, prometheus.GaugeValue, 0)
	for site, byVerdict := range st.Leads {
		for v, n := range byVerdict {
			ch <- prometheus.MustNewConstMetric(leadsDesc, prometheus.GaugeValue, float64(n), string(site), string(v))
		}
	}
	for site, byState := range st.Deliveries {
		for s, n := range byState {
			ch <- prometheus.MustNewConstMetric(deliveriesDesc, prometheus.GaugeValue, float64(n), string(site), string(s))
		}
	}
	var oldest float64
	if !st.OldestDue.IsZero() && now.After(st.OldestDue) {
		oldest = now.Sub(st.OldestDue).Seconds()
	}
	ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, oldest)
	for site, paused := range st.Paused {
		v := 0.0
		if paused {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(pausedDesc, prometheus.GaugeValue, v, string(site))
	}
}
