package deliver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// leanGraph accepts every request of events, as Meta does when all is
// well, doing as little as it can so that the runner is what is measured.
type leanGraph struct{ events atomic.Int64 }

func (g *leanGraph) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Data) == 0 || len(body.Data) > capi.MaxBatch {
		http.Error(w, `{"error":{"message":"Invalid parameter","type":"OAuthException","code":100}}`, http.StatusBadRequest)
		return
	}
	g.events.Add(int64(len(body.Data)))
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"events_received":%d,"messages":[],"fbtrace_id":"Abench"}`, len(body.Data))
}

// BenchmarkDrain100k queues 100,000 events over 8 sites and measures the
// running runner (the one serve starts) draining them into a local Graph
// stand-in over HTTP: events/s, and the peak Go heap while it does, which
// should not grow with the queue (claims of at most Claim events). A probe
// beside it writes as an intake request would, every 2 ms: its p99 and
// longest wait are what a visit or lead waits for the writer while a
// backlog drains; grown_B/event what the drain added to the database and
// stored_B/event what it holds after. The events are lead events in the outbox, or PageViews
// in their queue. cpu_ms is this process's CPU time for the drain. On
// SQLite, commits is how many the one writer made during the drain, sync_ms
// the mean time of a log fsync and writer_busy the share of the drain's
// wall time the writer spent running transactions (near 1: the writer is
// what holds the drain). On the engine under test (CLEANADS_TEST_ENGINE).
func BenchmarkDrain100k(b *testing.B) {
	b.Run("outbox", func(b *testing.B) { drain(b, false) })
	b.Run("pageviews", func(b *testing.B) { drain(b, true) })
}

// enqueuePageViews puts n PageViews of site in the PageView queue, as
// Collect would, in one transaction.
func (f *fixture) enqueuePageViews(t testing.TB, site *model.Site, from, n int) {
	t.Helper()
	now := f.clk.Now()
	err := f.db.InTx(f.ctx, func(tx *store.Tx) error {
		for i := from; i < from+n; i++ {
			e := capi.Event{EventName: model.PageViewEvent, EventTime: now.Unix(), EventID: fmt.Sprintf("pv-%s-%06d", site.ID, i),
				ActionSource: capi.SourceWebsite, EventSourceURL: "https://www.istanbuldis.example/",
				UserData: capi.UserData{ClientIPAddress: "203.0.113.9", ClientUserAgent: "Mozilla/5.0", FBP: "fb.1.1700000000000.123456789"}}
			payload, err := json.Marshal(e)
			if err != nil {
				return err
			}
			d := &model.Delivery{SiteID: site.ID, EventID: e.EventID, PixelID: site.Settings.Meta.PixelID, Payload: payload, CreatedAt: now}
			if _, err := tx.PageViewEnqueue(f.ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// dbBytes is the size of every table of db with its indexes.
func dbBytes(b *testing.B, db *store.DB) int64 {
	sizes, err := db.TableSizes(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, v := range sizes {
		n += v
	}
	return n
}

func drain(b *testing.B, pageViews bool) {
	const sites, perSite = 8, 12500
	for range b.N {
		b.StopTimer()
		dsn := storetest.MigratedDSN(b) // the engine under test: CLEANADS_TEST_ENGINE
		db := storetest.Open(b, dsn)
		backends := openBackends(b, db, dsn)
		ctx := context.Background()
		clk := testkit.NewClock(time.Now().UTC())
		g := &leanGraph{}
		srv := httptest.NewServer(g)
		f := &fixture{ctx: ctx, db: db, clk: clk}
		for i := range sites {
			site := &model.Site{ID: model.SiteID(fmt.Sprintf("site%d", i)), Name: "S", AccessToken: "token",
				Settings: model.SiteSettings{Country: "TR", Meta: model.MetaSettings{PixelID: fmt.Sprint(1000 + i), Mode: model.ModeLive}}}
			if err := db.SiteUpsert(ctx, site, clk.Now()); err != nil {
				b.Fatal(err)
			}
			for part := 0; part < perSite; part += 2500 {
				f.site = site
				if pageViews {
					f.enqueuePageViews(b, site, part, 2500)
					continue
				}
				f.queue(b, site, 2500, func(j int, d *model.Delivery, e *capi.Event) {
					d.ID = fmt.Sprintf("dl_%s_%06d", site.ID, part+j)
					e.EventID = fmt.Sprintf("ev-%s-%d", site.ID, part+j)
					d.EventID = e.EventID
				})
			}
		}
		runtime.GC()
		r := deliver.New(deliver.Options{Store: db, Now: clk.Now, Workers: 4,
			Sender: capi.NewClient(capi.ClientOptions{BaseURL: srv.URL, HTTP: srv.Client(), Now: clk.Now})})
		var peak uint64
		stopSampling := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			var ms runtime.MemStats
			for {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
				select {
				case <-stopSampling:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
		stopProbe := make(chan struct{})
		probed := make(chan []time.Duration)
		go func() {
			var waits []time.Duration
			defer func() { probed <- waits }()
			for {
				select {
				case <-stopProbe:
					return
				case <-time.After(2 * time.Millisecond):
				}
				t0 := time.Now()
				if err := db.InTx(ctx, func(*store.Tx) error { return nil }); err != nil {
					b.Error(err)
					return
				}
				waits = append(waits, time.Since(t0))
			}
		}()
		sizes0 := dbBytes(b, db)
		w0 := db.WriterStats()
		b.StartTimer()
		start := time.Now()
		cpu0, cpuOK := processCPU()
		server0 := backends.cpu()
		if err := r.Start(ctx); err != nil {
			b.Fatal(err)
		}
		for g.events.Load() < sites*perSite {
			time.Sleep(5 * time.Millisecond)
		}
		// Stop waits for the last outcomes to be recorded: part of the drain.
		r.Stop(ctx)
		elapsed := time.Since(start)
		cpu1, _ := processCPU()
		server1 := backends.cpu()
		b.StopTimer()
		close(stopSampling)
		<-sampled
		close(stopProbe)
		waits := <-probed
		srv.Close()
		sizes1 := dbBytes(b, db)
		counts, err := db.DeliveryCounts(ctx, "")
		if err != nil || counts[model.DeliverySent] != sites*perSite {
			b.Fatalf("after the drain: %v %v", counts, err)
		}
		b.ReportMetric(float64(sites*perSite)/elapsed.Seconds(), "events/s")
		b.ReportMetric(float64(peak)/(1<<20), "peak_heap_MB")
		if w1 := db.WriterStats(); w1.Commits > w0.Commits {
			// SQLite's single writer: its commits during the drain, and
			// how long a log fsync took (every commit waits for one).
			b.ReportMetric(float64(w1.Commits-w0.Commits), "commits")
			b.ReportMetric((w1.LogSyncSeconds-w0.LogSyncSeconds)*1e3/float64(max(1, w1.LogSyncs-w0.LogSyncs)), "sync_ms")
			b.ReportMetric((w1.BusySeconds-w0.BusySeconds)/elapsed.Seconds(), "writer_busy")
		}
		// What the drain added to the database (on PostgreSQL the row
		// versions its claims and outcomes left behind until vacuumed), and
		// what the sent events take, per event.
		b.ReportMetric(float64(sizes1-sizes0)/float64(sites*perSite), "grown_B/event")
		b.ReportMetric(float64(sizes1)/float64(sites*perSite), "stored_B/event")
		if cpuOK {
			// The machine is shared: CPU time spent per drain says more
			// than wall time (on PostgreSQL the server's CPU is not in it).
			b.ReportMetric(float64(cpu1-cpu0)/1e6, "cpu_ms")
		}
		if backends != nil {
			b.ReportMetric(float64(server1-server0)/1e6, "server_cpu_ms")
		}
		if len(waits) > 0 {
			slices.Sort(waits)
			b.ReportMetric(float64(waits[len(waits)*99/100])/1e6, "probe_p99_ms")
			b.ReportMetric(float64(waits[len(waits)-1])/1e6, "probe_max_ms")
		}
	}
}
