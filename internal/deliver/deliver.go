// Package deliver owns the outbox runner: it claims due rows under a lease
// and hands each share (one site's rows of one destination) to that
// destination's Handler. Every ad platform's rows (Meta, Google, TikTok)
// and a lead source's worker's go through PlatformHandler, which expires,
// checks, batches and sends them through the platform's Send and records
// its answer per row, retrying, dead-lettering or pausing the share as the
// failure's class says; a destination with work of its own (the Lead Ads
// fetch) brings its own Handler. It reaches the database and the platforms
// only through the Store, PauseStore, Batches and Handler interfaces it
// declares here.
package deliver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
)

// Store is the outbox and the sites, as the runner needs them.
type Store interface {
	DeliveryClaimFor(ctx context.Context, p model.ClaimParams) ([]*model.Delivery, error)
	DeliveryRecord(ctx context.Context, owner string, ds []*model.Delivery, now time.Time) (lost int, err error)
	DeliverySweep(ctx context.Context, now time.Time) (expired, resumed int, err error)
	DeliveryNextDue(ctx context.Context, now time.Time) (time.Time, bool, error)
	SiteByID(ctx context.Context, id model.SiteID) (*model.Site, error)
	DestinationPauseSet(ctx context.Context, sh model.Share, reason string, now time.Time) error
	DestinationPauseReason(ctx context.Context, sh model.Share) (string, error)
}

// Sender posts one request of events to a pixel; *capi.Client is one
// (see Options.Sender).
type Sender interface {
	Send(ctx context.Context, req capi.SendRequest) (*capi.Response, error)
}

// Handler delivers one destination's rows (a destination is a name, such
// as model.DestinationMeta; its Handler is the code that sends there). The
// runner claims the rows and hands each Claim (a share's claimed rows: one
// site's rows of the destination) to Deliver, at most one claim of a site
// and destination at a time. Deliver settles every row it is handed and
// records it with Claim.Record (as it goes: a crash then loses little):
// sent, retry at NextAt, dead, expired, paused, or back unchanged. It
// returns what it did and, when the share must wait (a backoff after a
// failure that would meet every row alike), until when: the runner claims
// none of the share's rows before then, so one destination's outage never
// holds another's. Batching, error classes, backoff and pause (on a
// refused token) are the handler's own; a pause is kept in the store as
// the share's, and its rows are parked with state paused until it is
// lifted.
type Handler interface {
	Deliver(ctx context.Context, sh *Claim) (Stats, time.Time)
}

// Claim is one share's claimed rows (one site's rows of one destination,
// the share model.Share names), with what a Handler needs of the runner.
type Claim struct {
	Site        model.SiteID
	Destination string
	Rows        []*model.Delivery
	// LeaseEnd is when the claim runs out, Lease after it was made: rows
	// not settled by half of it should be recorded back unchanged.
	LeaseEnd time.Time
	Lease    time.Duration
	r        *Runner
}

// Now is the runner's clock.
func (sh *Claim) Now() time.Time { return sh.r.o.Now() }

// Record writes the rows' outcomes, even when ctx was cancelled.
func (sh *Claim) Record(ctx context.Context, ds []*model.Delivery) { sh.r.record(ctx, ds) }

// Backoff is the runner's retry delay for a row's attempt-th failure,
// never sooner than retryAfter.
func (sh *Claim) Backoff(attempt int, retryAfter time.Duration) time.Duration {
	return sh.r.backoff(attempt, retryAfter)
}

// Logger is the runner's logger.
func (sh *Claim) Logger() *slog.Logger { return sh.r.log }

// batchSize is a platform's batch size, within the runner's cap.
func (sh *Claim) batchSize(platform int) int {
	if c := sh.r.o.Batch; c > 0 && c < platform {
		return c
	}
	return max(platform, 1)
}

// Defaults of Options.
const (
	DefaultWorkers    = 4
	DefaultLease      = 10 * time.Minute
	DefaultPoll       = 30 * time.Second
	DefaultClaim      = 5000
	DefaultGap        = 100 * time.Millisecond
	DefaultMinBackoff = 30 * time.Second
	DefaultMaxBackoff = time.Hour
)

// deadlineMargin keeps the last retry clear of a row's deadline, so an
// event never ages out while it is in flight.
const deadlineMargin = time.Minute

// recordTimeout bounds writing outcomes after the send context is gone.
const recordTimeout = 30 * time.Second

// Options configure a Runner; zero values mean the defaults.
type Options struct {
	Store Store
	// Sender is Meta's client, for a runner set up in one line: when it is
	// set and Handlers has none for model.DestinationMeta, Meta's rows go
	// through NewPlatformHandler(capi.NewMeta(Sender, ...), Store).
	Sender Sender
	Logger *slog.Logger
	Now    func() time.Time
	// Node names this process in leases; default host name and a random
	// suffix.
	Node string
	// Workers is how many sites are sent to at once.
	Workers int
	// Lease is how long claimed events stay with this node; it must exceed
	// the time a site's requests take (client timeout times requests).
	Lease time.Duration
	// Poll is the longest sleep when nothing is due.
	Poll time.Duration
	// Claim is how many events one round claims.
	Claim int
	// Gap is the least time from one round to the next when the first did
	// not fill its claim; default DefaultGap, negative for none. Events
	// that trickle in (a PageView per request) are then claimed and
	// recorded a gap's worth at a time, not each in two transactions of
	// their own that queue for the one SQLite writer with the requests.
	Gap time.Duration
	// Batch, when set, caps every platform's BatchSize: the most events
	// per request.
	Batch int
	// MinBackoff and MaxBackoff bound the retry delay, which doubles with
	// each attempt.
	MinBackoff, MaxBackoff time.Duration
	// Handlers are the destinations' handlers, by destination name: each
	// platform's and each source worker's (the Lead Ads fetch's among
	// them), NewPlatformHandler. The runner claims rows of these
	// destinations only.
	Handlers map[string]Handler
	// Jitter returns a number in [0, 1); default math/rand/v2.
	Jitter func() float64
}

// Stats counts what one round did.
type Stats struct {
	Claimed, Sent, Retry, Dead, Expired, Paused, DryRun, Requests, Resumed int
}

func (s *Stats) add(o Stats) {
	s.Claimed += o.Claimed
	s.Sent += o.Sent
	s.Retry += o.Retry
	s.Dead += o.Dead
	s.Expired += o.Expired
	s.Paused += o.Paused
	s.DryRun += o.DryRun
	s.Requests += o.Requests
	s.Resumed += o.Resumed
}

// Runner sends the outbox to the destinations' handlers. Start runs it in
// the background; RunOnce runs one round in the caller.
type Runner struct {
	o    Options
	log  *slog.Logger
	wake chan struct{}

	mu        sync.Mutex
	started   bool
	stopped   bool
	stop      chan struct{} // closed by Stop: no new rounds
	done      chan struct{} // closed when the loop has returned
	cancel    context.CancelFunc
	busy      map[model.Share]bool      // shares with a send in flight
	hold      map[model.Share]time.Time // shares backing off after a retryable failure, until
	lastSweep time.Time
	dests     map[string]Handler
	destNames []string

	sem      chan struct{}
	inflight sync.WaitGroup
}

// New returns a Runner with o.
func New(o Options) *Runner {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Node == "" {
		o.Node = nodeName()
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Claim <= 0 {
		o.Claim = DefaultClaim
	}
	if o.Gap == 0 {
		o.Gap = DefaultGap
	}
	o.Batch = max(o.Batch, 0)
	if o.MinBackoff <= 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = max(DefaultMaxBackoff, o.MinBackoff)
	}
	if o.Jitter == nil {
		o.Jitter = mrand.Float64
	}
	r := &Runner{
		o:     o,
		log:   o.Logger.With("component", "deliver"),
		wake:  make(chan struct{}, 1),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
		busy:  map[model.Share]bool{},
		hold:  map[model.Share]time.Time{},
		sem:   make(chan struct{}, o.Workers),
		dests: map[string]Handler{},
	}
	for name, d := range o.Handlers {
		if d != nil {
			r.dests[name] = d
		}
	}
	if o.Sender != nil && r.dests[model.DestinationMeta] == nil {
		meta := capi.NewMeta(o.Sender, platform.Deps{Logger: o.Logger, Now: o.Now})
		r.dests[model.DestinationMeta] = NewPlatformHandler(meta, o.Store)
	}
	// Claimed in model's order, so a round's shares are handed out alike
	// on every node.
	for _, name := range model.Destinations() {
		if r.dests[name] != nil {
			r.destNames = append(r.destNames, name)
		}
	}
	for name := range r.dests {
		if !slices.Contains(r.destNames, name) {
			r.destNames = append(r.destNames, name)
		}
	}
	return r
}

func nodeName() string {
	host, _ := os.Hostname()
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// Node is the name this runner leases events under.
func (r *Runner) Node() string { return r.o.Node }

// Wake tells the runner that events may be due now; it never blocks.
func (r *Runner) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Start runs the runner in the background until Stop. The runner outlives
// ctx's cancellation on purpose: serve stops HTTP first, then the runner,
// so in-flight sends finish. Calling Start again does nothing.
func (r *Runner) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started || r.stopped {
		return nil
	}
	r.started = true
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel = cancel
	go r.loop(runCtx)
	r.log.Info("delivery runner started", "node", r.o.Node, "workers", r.o.Workers)
	return nil
}

// Stop stops claiming, waits for the sends in flight until ctx ends, then
// cancels them (their events are recorded for a retry; Meta deduplicates a
// resend by event_id). Calling Stop again, or without Start, does nothing.
func (r *Runner) Stop(ctx context.Context) error {
	r.mu.Lock()
	if r.stopped || !r.started {
		r.stopped = true
		r.mu.Unlock()
		return nil
	}
	r.stopped = true
	close(r.stop)
	r.mu.Unlock()

	finished := make(chan struct{})
	go func() {
		<-r.done
		r.inflight.Wait()
		close(finished)
	}()
	var err error
	select {
	case <-finished:
	case <-ctx.Done():
		err = fmt.Errorf("deliver: stop: %w", ctx.Err())
		r.cancel()
		<-finished
	}
	r.cancel()
	r.log.Info("delivery runner stopped")
	return err
}

func (r *Runner) loop(ctx context.Context) {
	defer close(r.done)
	for {
		started := time.Now()
		st, err := r.round(ctx, false)
		if err != nil && ctx.Err() == nil {
			r.log.Error("delivery round", "err", err)
		}
		select {
		case <-r.stop:
			return
		default:
		}
		// A full claim means more may be due right now.
		if err == nil && st.Claimed >= r.o.Claim {
			continue
		}
		wait := r.o.Poll
		if err == nil {
			wait = r.sleepFor(ctx)
		}
		t := time.NewTimer(wait)
		select {
		case <-r.stop:
			t.Stop()
			return
		case <-r.wake:
		case <-t.C:
		}
		t.Stop()
		if !r.waitUntil(started.Add(r.o.Gap)) {
			return
		}
	}
}

// waitUntil waits until the given time; false when the runner is stopping.
func (r *Runner) waitUntil(until time.Time) bool {
	d := time.Until(until)
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.stop:
		return false
	case <-t.C:
		return true
	}
}

// sleepFor is how long to wait for the next due event, at most Poll. An
// event that is due but was not claimed belongs to a site with a send in
// flight, which wakes the runner when it ends.
func (r *Runner) sleepFor(ctx context.Context) time.Duration {
	now := r.o.Now()
	next, ok, err := r.o.Store.DeliveryNextDue(ctx, now)
	if err != nil || !ok {
		return r.o.Poll
	}
	d := next.Sub(now)
	if d <= 0 || d > r.o.Poll {
		d = r.o.Poll
	}
	// Due events of a site on hold wait for its hold to end.
	r.mu.Lock()
	for _, until := range r.hold {
		if h := until.Sub(now); h > 0 && h < d {
			d = h
		}
	}
	r.mu.Unlock()
	return d
}

// RunOnce runs one round in the caller: sweep, claim what is due, send it
// and record the outcomes. It is what the background loop does, without the
// waiting; tests drive it with a fake clock.
func (r *Runner) RunOnce(ctx context.Context) (Stats, error) {
	return r.round(ctx, true)
}

// round claims due events and hands each share (a site's rows of one
// destination) to a worker, which gives it to the destination's handler.
// With wait it returns when every share is recorded; without, it returns
// once every share has a worker, and the loop claims again meanwhile
// (leaving out the busy shares), so a slow site or destination never holds
// the others back.
func (r *Runner) round(ctx context.Context, wait bool) (Stats, error) {
	var total Stats
	now := r.o.Now()
	expired, resumed, err := r.sweep(ctx, now, wait)
	if err != nil {
		return total, err
	}
	total.Expired, total.Resumed = expired, resumed
	r.mu.Lock()
	skip := make([]model.Share, 0, len(r.busy)+len(r.hold))
	for sh := range r.busy {
		skip = append(skip, sh)
	}
	// A share Meta (or another destination) failed for waits out its
	// backoff as one: events that came meanwhile wait with it, so an outage
	// costs one request per backoff step, not one per new event, and the
	// share's events go out together, oldest first, when it is tried
	// again. The site's other destinations go on meanwhile.
	for sh, until := range r.hold {
		switch {
		case !now.Before(until):
			delete(r.hold, sh)
		case !r.busy[sh]:
			skip = append(skip, sh)
		}
	}
	r.mu.Unlock()
	claimed, err := r.o.Store.DeliveryClaimFor(ctx, model.ClaimParams{Owner: r.o.Node, Now: now,
		LeaseUntil: now.Add(r.o.Lease), Limit: r.o.Claim, Destinations: r.destNames, Skip: skip})
	if err != nil {
		return total, err
	}
	total.Claimed = len(claimed)
	if len(claimed) == 0 {
		return total, nil
	}
	var order []model.Share
	byShare := map[model.Share][]*model.Delivery{}
	for _, d := range claimed {
		sh := model.Share{Site: d.SiteID, Destination: d.Destination}
		if sh.Destination == "" {
			sh.Destination = model.DestinationMeta
		}
		if _, ok := byShare[sh]; !ok {
			order = append(order, sh)
		}
		byShare[sh] = append(byShare[sh], d)
	}
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for i, sh := range order {
		select {
		case r.sem <- struct{}{}:
		case <-ctx.Done():
			r.release(ctx, order[i:], byShare)
			return total, ctx.Err()
		case <-r.stop:
			r.release(ctx, order[i:], byShare)
			return total, nil
		}
		r.mu.Lock()
		r.busy[sh] = true
		r.mu.Unlock()
		wg.Add(1)
		r.inflight.Add(1)
		go func(sh model.Share, ds []*model.Delivery) {
			defer func() {
				r.mu.Lock()
				delete(r.busy, sh)
				r.mu.Unlock()
				<-r.sem
				wg.Done()
				r.inflight.Done()
				// Events of this share that came meanwhile were skipped.
				r.Wake()
			}()
			st, until := r.dests[sh.Destination].Deliver(ctx, &Claim{Site: sh.Site, Destination: sh.Destination,
				Rows: ds, LeaseEnd: now.Add(r.o.Lease), Lease: r.o.Lease, r: r})
			if !until.IsZero() {
				r.mu.Lock()
				r.hold[sh] = until
				r.mu.Unlock()
			}
			mu.Lock()
			total.add(st)
			mu.Unlock()
		}(sh, byShare[sh])
	}
	if wait {
		wg.Wait()
	}
	mu.Lock()
	defer mu.Unlock()
	return total, nil
}

// sweep expires events past their deadline and resumes the paused events
// of sites whose pause was lifted; in the loop at most once per Poll.
func (r *Runner) sweep(ctx context.Context, now time.Time, always bool) (expired, resumed int, err error) {
	r.mu.Lock()
	due := always || now.Sub(r.lastSweep) >= r.o.Poll
	if due {
		r.lastSweep = now
	}
	r.mu.Unlock()
	if !due {
		return 0, 0, nil
	}
	expired, resumed, err = r.o.Store.DeliverySweep(ctx, now)
	if err != nil {
		return 0, 0, err
	}
	if expired > 0 {
		r.log.Warn("events expired unsent", "count", expired)
	}
	if resumed > 0 {
		r.log.Info("paused events resumed after a token change", "count", resumed)
	}
	return expired, resumed, nil
}

// backoff is MinBackoff doubled per attempt up to MaxBackoff, with jitter
// (a random half to full delay, so sites that failed together do not retry
// together), and never sooner than the platform's Retry-After.
func (r *Runner) backoff(attempt int, retryAfter time.Duration) time.Duration {
	d := r.o.MinBackoff
	for i := 1; i < attempt && d < r.o.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, r.o.MaxBackoff)
	d = d/2 + time.Duration(r.o.Jitter()*float64(d/2))
	return max(d, retryAfter)
}

// release gives claimed events back unchanged, so they need not wait for
// the lease to run out.
func (r *Runner) release(ctx context.Context, shares []model.Share, byShare map[model.Share][]*model.Delivery) {
	var ds []*model.Delivery
	for _, sh := range shares {
		ds = append(ds, byShare[sh]...)
	}
	r.record(ctx, ds)
}

// record writes outcomes even when ctx was cancelled: what Meta answered
// must not be lost to a shutdown.
func (r *Runner) record(ctx context.Context, ds []*model.Delivery) {
	if len(ds) == 0 {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	lost, err := r.o.Store.DeliveryRecord(rctx, r.o.Node, ds, r.o.Now())
	switch {
	case err != nil:
		// The lease runs out and the events are claimed again; a resend
		// carries the same event_id, so Meta counts it once.
		r.log.Error("recording deliveries", "count", len(ds), "err", err)
	case lost > 0:
		r.log.Warn("deliveries recorded after their lease passed to another node", "count", lost)
	}
}
