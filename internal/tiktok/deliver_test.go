package tiktok_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/testkit"
	"github.com/cleanads/cleanads/internal/tiktok"
	"github.com/cleanads/cleanads/internal/tiktok/tiktoktest"
)

// outbox is an outbox in memory with one site: what the runner and the
// platform handler need of the store, kept as the store keeps it (claimed
// rows are copies; a record replaces them).
type outbox struct {
	mu     sync.Mutex
	site   *model.Site
	rows   map[string]*model.Delivery
	order  []string
	pauses map[model.Share]string
}

func newOutbox(site *model.Site, rows ...*model.Delivery) *outbox {
	o := &outbox{site: site, rows: map[string]*model.Delivery{}, pauses: map[model.Share]string{}}
	for _, d := range rows {
		c := *d
		o.rows[d.ID] = &c
		o.order = append(o.order, d.ID)
	}
	return o
}

func (o *outbox) DeliveryClaimFor(ctx context.Context, p model.ClaimParams) ([]*model.Delivery, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []*model.Delivery
	for _, id := range o.order {
		d := o.rows[id]
		due := (d.State == model.DeliveryPending || d.State == model.DeliveryRetry) && !d.NextAt.After(p.Now)
		if !due || !slices.Contains(p.Destinations, d.Destination) || len(out) == p.Limit {
			continue
		}
		skip := false
		for _, sh := range p.Skip {
			skip = skip || sh.Site == d.SiteID && (sh.Destination == "" || sh.Destination == d.Destination)
		}
		if !skip {
			c := *d
			out = append(out, &c)
		}
	}
	return out, nil
}

func (o *outbox) DeliveryRecord(ctx context.Context, owner string, ds []*model.Delivery, now time.Time) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, d := range ds {
		c := *d
		o.rows[d.ID] = &c
	}
	return 0, nil
}

// DeliverySweep expires rows past their deadline and gives the paused rows
// of a share whose pause was lifted back to the queue.
func (o *outbox) DeliverySweep(ctx context.Context, now time.Time) (int, int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	expired, resumed := 0, 0
	for _, d := range o.rows {
		switch {
		case (d.State == model.DeliveryPending || d.State == model.DeliveryRetry) && !d.DeadlineAt.IsZero() && !now.Before(d.DeadlineAt):
			d.State = model.DeliveryExpired
			expired++
		case d.State == model.DeliveryPaused && o.pauses[model.Share{Site: d.SiteID, Destination: d.Destination}] == "":
			d.State, d.NextAt = model.DeliveryPending, now
			resumed++
		}
	}
	return expired, resumed, nil
}

func (o *outbox) DeliveryNextDue(ctx context.Context, now time.Time) (time.Time, bool, error) {
	return time.Time{}, false, nil
}

func (o *outbox) SiteByID(ctx context.Context, id model.SiteID) (*model.Site, error) {
	if id != o.site.ID {
		return nil, model.ErrNotFound
	}
	return o.site, nil
}

func (o *outbox) SitePause(ctx context.Context, id model.SiteID, reason string, now time.Time) error {
	return nil
}

func (o *outbox) DestinationPauseSet(ctx context.Context, sh model.Share, reason string, now time.Time) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.pauses[sh] = reason
	return nil
}

func (o *outbox) DestinationPauseReason(ctx context.Context, sh model.Share) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.pauses[sh], nil
}

func (o *outbox) lift(sh model.Share) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.pauses, sh)
}

// states returns each row's state by event id.
func (o *outbox) states() map[string]model.DeliveryState {
	o.mu.Lock()
	defer o.mu.Unlock()
	m := map[string]model.DeliveryState{}
	for _, d := range o.rows {
		m[d.EventID] = d.State
	}
	return m
}

func (o *outbox) row(eventID string) model.Delivery {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, d := range o.rows {
		if d.EventID == eventID {
			return *d
		}
	}
	return model.Delivery{}
}

// runner is the outbox runner with TikTok's rows handed to
// deliver.PlatformHandler, on the test's clock and without jitter.
func runner(o *outbox, p platform.Platform, clock *testkit.Clock) *deliver.Runner {
	return deliver.New(deliver.Options{Store: o, Now: clock.Now, Node: "test", Jitter: func() float64 { return 0 },
		Handlers: map[string]deliver.Handler{tiktok.Name: deliver.NewPlatformHandler(p, o)}})
}

// leadEvents are the rows the app layer queues for a lead that was
// submitted, qualified and won: a web event and two CRM events.
func leadEvents(t testing.TB, p platform.Platform, site *model.Site, id model.LeadID) []*model.Delivery {
	l := webLead(id)
	value := 900.0
	var rows []*model.Delivery
	for _, in := range []platform.Input{
		{Kind: model.KindLead, At: at},
		{Kind: model.KindQualified, At: at.Add(time.Minute)},
		{Kind: "stage:won", At: at.Add(2 * time.Minute), Value: &value, Currency: "TRY"},
	} {
		in.Site, in.Lead = site, l
		rows = append(rows, row(site, l, in.Kind, build(t, p, in)))
	}
	return rows
}

func TestDeliverThroughPlatformHandler(t *testing.T) {
	srv := tiktoktest.New(t)
	clock := testkit.NewClock(at.Add(time.Hour))
	p := newPlatform(srv, clock)
	site := tiktokSite(t, full())
	rows := append(leadEvents(t, p, site, "A"), leadEvents(t, p, site, "B")...)
	o := newOutbox(site, rows...)
	st, err := runner(o, p, clock).RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Sent != 6 || st.Requests != 2 {
		t.Errorf("stats %+v, want 6 sent in 2 requests (the pixel's and the event set's)", st)
	}
	for id, s := range o.states() {
		if s != model.DeliverySent {
			t.Errorf("%s: %s", id, s)
		}
	}
	got := srv.AcceptedIDs()
	slices.Sort(got)
	want := []string{"ev-A", "ev-A:qualified", "ev-A:stage:won", "ev-B", "ev-B:qualified", "ev-B:stage:won"}
	if !slices.Equal(got, want) {
		t.Errorf("TikTok has %v, want %v", got, want)
	}
	if d := o.row("ev-A:qualified"); d.Mode != model.ModeLive || d.SentAt == nil || !strings.Contains(string(d.Response), "request_id") {
		t.Errorf("sent row %+v", d)
	}
}

// A revoked token pauses the site's TikTok rows with words for the owner;
// once the pause is lifted they go.
func TestDeliverPauseAndResume(t *testing.T) {
	srv := tiktoktest.New(t)
	clock := testkit.NewClock(at.Add(time.Hour))
	p := newPlatform(srv, clock)
	site := tiktokSite(t, full())
	o := newOutbox(site, leadEvents(t, p, site, "A")...)
	r := runner(o, p, clock)
	srv.Pause()
	if _, err := r.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	share := model.Share{Site: site.ID, Destination: tiktok.Name}
	reason, _ := o.DestinationPauseReason(context.Background(), share)
	if !strings.Contains(reason, "access token") || !strings.Contains(reason, "Events Manager") {
		t.Errorf("pause reason %q, want what the owner must do", reason)
	}
	for id, s := range o.states() {
		if s != model.DeliveryPaused {
			t.Errorf("%s: %s, want paused", id, s)
		}
	}
	// The owner pastes a new token: the pause is lifted.
	srv.Resume()
	o.lift(share)
	clock.Add(time.Minute)
	if _, err := r.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st, err := r.RunOnce(context.Background()); err != nil || st.Sent != 0 {
		t.Fatalf("%+v %v", st, err)
	}
	for id, s := range o.states() {
		if s != model.DeliverySent {
			t.Errorf("%s after the resume: %s", id, s)
		}
	}
	if n := len(srv.Accepted()); n != 3 {
		t.Errorf("TikTok has %d events, want 3", n)
	}
}

// A refused event is dead with TikTok's words; the rest of its batch goes.
func TestDeliverRefusedEvent(t *testing.T) {
	srv := tiktoktest.New(t)
	clock := testkit.NewClock(at.Add(time.Hour))
	p := newPlatform(srv, clock)
	site := tiktokSite(t, full())
	rows := append(leadEvents(t, p, site, "A"), leadEvents(t, p, site, "B")...)
	srv.Refuse("ev-B:qualified", "lead.lead_id is not a TikTok lead")
	o := newOutbox(site, rows...)
	st, err := runner(o, p, clock).RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Sent != 5 || st.Dead != 1 {
		t.Errorf("stats %+v, want 5 sent and 1 dead", st)
	}
	if d := o.row("ev-B:qualified"); d.State != model.DeliveryDead || !strings.Contains(d.LastError, "lead.lead_id is not a TikTok lead") {
		t.Errorf("refused row: %s %q", d.State, d.LastError)
	}
}

// An outage or a throttle retries every row after a backoff (never sooner
// than TikTok asked), and they go when TikTok is back.
func TestDeliverRetryAfterOutageAndThrottle(t *testing.T) {
	srv := tiktoktest.New(t)
	clock := testkit.NewClock(at.Add(time.Hour))
	p := newPlatform(srv, clock)
	site := tiktokSite(t, tiktok.Settings{PixelCode: tiktoktest.PixelCode})
	o := newOutbox(site, leadRows(t, p, site, 3)...)
	r := runner(o, p, clock)

	srv.FailNext(1, tiktoktest.CodeTooFrequent, "3600")
	st, err := r.RunOnce(context.Background())
	if err != nil || st.Retry != 3 {
		t.Fatalf("throttled: %+v %v", st, err)
	}
	d := o.row("ev-L00")
	if d.State != model.DeliveryRetry || d.NextAt.Before(clock.Now().Add(time.Hour)) || d.Attempts != 1 {
		t.Errorf("throttled row: %s next %v (now %v) attempts %d; want a retry an hour on", d.State, d.NextAt, clock.Now(), d.Attempts)
	}
	clock.Set(d.NextAt)
	srv.FailNext(1, tiktoktest.CodeSystemError, "")
	if st, err = r.RunOnce(context.Background()); err != nil || st.Retry != 3 {
		t.Fatalf("system error: %+v %v", st, err)
	}
	clock.Set(o.row("ev-L00").NextAt)
	if st, err = r.RunOnce(context.Background()); err != nil || st.Sent != 3 {
		t.Fatalf("back: %+v %v", st, err)
	}
	if d := o.row("ev-L02"); d.State != model.DeliverySent || d.Attempts != 3 {
		t.Errorf("row after two failures: %s attempts %d", d.State, d.Attempts)
	}
}

// A web event whose 7 days pass while TikTok is down expires unsent.
func TestDeliverExpires(t *testing.T) {
	srv := tiktoktest.New(t)
	clock := testkit.NewClock(at.Add(time.Hour))
	p := newPlatform(srv, clock)
	site := tiktokSite(t, full())
	o := newOutbox(site, leadEvents(t, p, site, "A")...)
	clock.Set(at.Add(tiktok.WebMaxAge))
	st, err := runner(o, p, clock).RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	states := o.states()
	if states["ev-A"] != model.DeliveryExpired || states["ev-A:qualified"] != model.DeliverySent {
		t.Errorf("states %v (stats %+v): want the web event expired and the CRM events, 28 days long, sent", states, st)
	}
}
