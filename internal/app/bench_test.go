package app_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/loadmix"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

// The intake benchmarks measure what a visit and a lead cost the server
// below HTTP: Service.Collect and Service.Submit with their store work, on
// the engine under test (SQLite, or PostgreSQL with CLEANADS_TEST_ENGINE=
// postgres and CLEANADS_TEST_POSTGRES), through the public API so that they
// keep measuring while the functions behind it change. benchCallers
// goroutines call at once, as scripts/bench.sh's 256 connections do, so
// SQLite's group commit shares one fsync among many calls as it does in the
// server and the figure is the work, not the disk's latency. The input
// follows cmd/cleanads-load's traffic: new and returning visitors, a quarter
// of landings with an fbclid; leads clean, grey and junk, each with the form
// token and visitor of an earlier visit.
//
//	go test -run '^$' -bench Intake -benchtime 20000x ./internal/app
//	CLEANADS_TEST_ENGINE=postgres CLEANADS_TEST_POSTGRES=... go test -run '^$' -bench Intake ./internal/app

// benchCallers is how many calls are in flight at once.
const benchCallers = 256

// benchClock is the services' time: real time, shifted back while the
// visits whose form tokens the leads use are made, so that those tokens
// are minutes old when the leads arrive, as a person's would be.
type benchClock struct{ shift atomic.Int64 }

func (c *benchClock) now() time.Time { return time.Now().Add(time.Duration(c.shift.Load())) }

// benchService returns a service on a fresh database of the engine under
// test, with the site scripts/bench.sh configures (live Meta mode:
// PageViews go to their queue, lead events to the outbox).
func benchService(b *testing.B) (*app.Service, *model.Site, *benchClock, *store.DB) {
	b.Helper()
	ctx := context.Background()
	db := storetest.New(b)
	site := &model.Site{ID: "dent", Name: "Istanbul Dental", AccessToken: "bench-token", Settings: model.SiteSettings{
		Origins: []string{"https://www.istanbuldis.example"}, Country: "TR",
		Meta: model.MetaSettings{PixelID: "123456789012345", Mode: model.ModeLive}}}
	if err := db.SiteUpsert(ctx, site, time.Now()); err != nil {
		b.Fatal(err)
	}
	site, err := db.SiteByID(ctx, site.ID)
	if err != nil {
		b.Fatal(err)
	}
	clk := &benchClock{}
	svc := app.New(app.Options{Store: db, Now: clk.now, SecretKey: "bench-only-secret-key-0123456789abcdef"})
	return svc, site, clk, db
}

// parallel runs body b.N times over benchCallers goroutines, each with its
// own random source.
func parallel(b *testing.B, body func(rng *rand.Rand)) {
	b.SetParallelism((benchCallers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	var seq atomic.Uint64
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), seq.Add(1)))
		for pb.Next() {
			body(rng)
		}
	})
}

// counters are what perOp compares with after the timed part.
type counters struct {
	writer model.WriterStats
	cpu    time.Duration
}

// start resets the timer and takes the counters.
func start(b *testing.B, db *store.DB) counters {
	b.ReportAllocs()
	cpu, _ := processCPU()
	c := counters{writer: db.WriterStats(), cpu: cpu}
	b.ResetTimer()
	return c
}

// perOp reports per call, in microseconds: the wall time under name (with
// benchCallers calls in flight, what one costs the machine) and this
// process's CPU time under "cpu_"+name (the steadier figure on a shared
// machine; on PostgreSQL the server's own CPU is not in it); and, on
// SQLite, how many calls shared a commit (the fsync's share).
func perOp(b *testing.B, name string, db *store.DB, before counters) {
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), name)
	if cpu, ok := processCPU(); ok {
		b.ReportMetric(float64((cpu-before.cpu).Microseconds())/float64(b.N), "cpu_"+name)
	}
	if st := db.WriterStats(); st.Commits > before.writer.Commits {
		b.ReportMetric(float64(st.Calls-before.writer.Calls)/float64(st.Commits-before.writer.Commits), "calls/commit")
	}
}

// visitMix makes visits as cmd/cleanads-load's collect traffic does.
type visitMix struct {
	mu    sync.Mutex
	known []string // visitor ids seen, for returning visitors
}

// next is one page view: about a third from a returning visitor once some
// are known, a quarter of landings from an ad click (fbclid and UTM tags).
func (m *visitMix) next(rng *rand.Rand) *app.CollectInput {
	in := &app.CollectInput{PageURL: loadmix.LandingURL(rng), Referrer: loadmix.Pick(rng, loadmix.Referrers),
		ClientIP: loadmix.IP(rng), UserAgent: loadmix.Pick(rng, loadmix.UserAgents)}
	if rng.IntN(3) == 0 {
		m.mu.Lock()
		if len(m.known) > 0 {
			in.VisitorID = m.known[rng.IntN(len(m.known))]
		}
		m.mu.Unlock()
	}
	return in
}

// seen remembers a new visitor for later visits (the first 5,000).
func (m *visitMix) seen(in *app.CollectInput, res *app.CollectResult) {
	if in.VisitorID != "" || res.Visitor == nil {
		return
	}
	m.mu.Lock()
	if len(m.known) < 5000 {
		m.known = append(m.known, res.Visitor.ID)
	}
	m.mu.Unlock()
}

// BenchmarkIntakeCollect is one visit: the visitor looked up or created,
// the visit stored, its PageView queued, a form token signed.
func BenchmarkIntakeCollect(b *testing.B) {
	svc, site, _, db := benchService(b)
	ctx := context.Background()
	mix := &visitMix{}
	before := start(b, db)
	parallel(b, func(rng *rand.Rand) {
		in := mix.next(rng)
		res, err := svc.Collect(ctx, site, in)
		if err != nil {
			b.Error(err)
			return
		}
		mix.seen(in, res)
	})
	perOp(b, "us/visit", db, before)
}

// formVisit is a visitor and the form token its visit got.
type formVisit struct{ visitor, token string }

// leadMix makes leads as cmd/cleanads-load's leads traffic does
// (loadmix.Leads), each with the form token and visitor of a visit.
type leadMix struct {
	mu     sync.Mutex
	visits []formVisit // each used once
	leads  loadmix.Leads
}

func (m *leadMix) next(rng *rand.Rand) *app.LeadInput {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.leads.Next(rng)
	yes := true
	in := &app.LeadInput{
		EventID: loadmix.UUID(rng), FirstName: l.FirstName, LastName: l.LastName, Email: l.Email, Phone: l.Phone,
		Message: l.Message, Honeypot: l.Honeypot, FillMS: i64(l.FillMS), PageURL: l.PageURL, Consent: &yes,
		ClientIP: loadmix.IP(rng), UserAgent: loadmix.Pick(rng, loadmix.UserAgents),
	}
	if n := len(m.visits); n > 0 {
		in.VisitorID, in.FormToken = m.visits[n-1].visitor, m.visits[n-1].token
		m.visits = m.visits[:n-1]
	}
	return in
}

// BenchmarkIntakeSubmit is one lead: the replay look-up, the form token
// checked and spent, the visitor linked, the lead judged, stored with its
// history and its events queued. The visits that give the leads their form
// tokens are made first, before the timer, with the clock set back ten
// minutes (the time a person takes to fill the form); the verdicts are
// reported as shares of the leads, to show the mix.
func BenchmarkIntakeSubmit(b *testing.B) {
	svc, site, clk, db := benchService(b)
	ctx := context.Background()
	mix := &leadMix{}
	visits := &visitMix{}
	clk.shift.Store(int64(-10 * time.Minute))
	var made atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
			for made.Add(1) <= int64(b.N) {
				in := visits.next(rng)
				res, err := svc.Collect(ctx, site, in)
				if err != nil {
					b.Error(err)
					return
				}
				visits.seen(in, res)
				if res.Visitor != nil && res.FormToken != "" {
					mix.mu.Lock()
					mix.visits = append(mix.visits, formVisit{res.Visitor.ID, res.FormToken})
					mix.mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	clk.shift.Store(0)
	var verdicts [3]atomic.Int64 // clean, review, junk
	before := start(b, db)
	parallel(b, func(rng *rand.Rand) {
		l, _, err := svc.Submit(ctx, site, mix.next(rng))
		if err != nil {
			b.Error(err)
			return
		}
		switch l.Verdict {
		case model.VerdictClean:
			verdicts[0].Add(1)
		case model.VerdictReview:
			verdicts[1].Add(1)
		default:
			verdicts[2].Add(1)
		}
	})
	perOp(b, "us/lead", db, before)
	b.ReportMetric(100*float64(verdicts[0].Load())/float64(b.N), "clean_pct")
	b.ReportMetric(100*float64(verdicts[2].Load())/float64(b.N), "junk_pct")
}
