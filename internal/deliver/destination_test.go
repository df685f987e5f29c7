package deliver_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/model"
)

// downDestination refuses every row, as a platform in an outage would:
// it retries them after a backoff and holds its share until then.
type downDestination struct {
	mu    sync.Mutex
	calls int
	seen  []model.Share
}

func (d *downDestination) Deliver(ctx context.Context, sh *deliver.Claim) (deliver.Stats, time.Time) {
	d.mu.Lock()
	d.calls++
	d.seen = append(d.seen, model.Share{Site: sh.Site, Destination: sh.Destination})
	d.mu.Unlock()
	next := sh.Now().Add(sh.Backoff(1, 0))
	for _, r := range sh.Rows {
		r.State, r.NextAt, r.LastError = model.DeliveryRetry, next, "down"
		r.Attempts++
	}
	sh.Record(ctx, sh.Rows)
	return deliver.Stats{Retry: len(sh.Rows)}, next
}

// TestDestinationsAreHeldApart: rows of another destination go to its own
// handler, and its outage (a hold) never holds Meta's rows of the same
// site, nor Meta's outage its rows.
func TestDestinationsAreHeldApart(t *testing.T) {
	t.Parallel()
	f := newFixture(t, model.ModeLive)
	down := &downDestination{}
	client := capi.NewClient(capi.ClientOptions{BaseURL: f.g.URL, HTTP: f.g.Client(), Now: f.clk.Now})
	r := deliver.New(deliver.Options{Store: f.db, Sender: client, Now: f.clk.Now, Node: "node-a",
		Jitter: func() float64 { return 0.5 }, Handlers: map[string]deliver.Handler{"meta_leadgen": down}})
	other := f.queue(t, f.site, 2, func(i int, d *model.Delivery, _ *capi.Event) { d.Destination = model.DestinationMetaLeadgen })
	f.queue(t, f.site, 3, func(i int, d *model.Delivery, e *capi.Event) {
		d.LeadID += "_meta"
		d.EventID += "-meta"
		e.EventID += "-meta"
	})
	st, err := r.RunOnce(f.ctx)
	if err != nil || st.Sent != 3 || st.Retry != 2 || down.calls != 1 || down.seen[0] != (model.Share{Site: "dent", Destination: "meta_leadgen"}) {
		t.Fatalf("first round %+v %v, destination called %d times for %v", st, err, down.calls, down.seen)
	}
	// Meta goes down too, a little later: its new row waits for a
	// backoff of its own.
	f.clk.Add(10 * time.Second)
	f.g.FailFor(time.Hour, graphtest.FaultServerError)
	f.queue(t, f.site, 1, func(i int, d *model.Delivery, e *capi.Event) {
		d.LeadID += "_later"
		d.EventID += "-later"
		e.EventID += "-later"
	})
	if st, err := r.RunOnce(f.ctx); err != nil || st.Retry != 1 || down.calls != 1 {
		t.Fatalf("second round %+v %v, destination called %d times", st, err, down.calls)
	}
	// The other destination's backoff ends first: its rows are tried
	// again while Meta's row waits out Meta's backoff.
	f.clk.Add(deliver.DefaultMinBackoff*3/4 - 10*time.Second)
	if st, err := r.RunOnce(f.ctx); err != nil || down.calls != 2 || st.Retry != 2 || st.Claimed != 2 {
		t.Fatalf("third round %+v %v, destination called %d times", st, err, down.calls)
	}
	for _, d := range f.reload(t, other) {
		if d.Destination != model.DestinationMetaLeadgen || d.State != model.DeliveryRetry || d.Attempts != 2 {
			t.Errorf("other destination's row %+v", d)
		}
	}
}
