package deliver_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/model"
)

// visits records n page views through the service and returns their
// PageView event ids.
func (f *fixture) visits(t *testing.T, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		res, err := f.svc.Collect(f.ctx, f.site, &app.CollectInput{
			PageURL:  fmt.Sprintf("https://www.istanbuldis.example/p%d?fbclid=IwAR%d", i, i),
			ClientIP: "203.0.113.9", UserAgent: "Mozilla/5.0 (test)"})
		if err != nil || !res.PageViewQueued {
			t.Fatalf("collect %d: %+v %v", i, res, err)
		}
		ids = append(ids, res.EventID)
	}
	return ids
}

// PageViews wait in their queue, go to Meta with the site's pixel and leave
// the queue; a failed request moves them into the outbox as retries, sent
// after the backoff like any event; one too old for Meta expires there.
func TestQueuedPageViews(t *testing.T) {
	t.Parallel()
	f := newFixture(t, model.ModeLive)
	ids := f.visits(t, 5)
	if c := f.counts(t); c[model.DeliveryPending] != 5 || len(c) != 1 {
		t.Fatalf("queued: %v", c)
	}
	if st := f.run(t); st.Sent != 5 || st.Requests != 1 {
		t.Fatalf("stats %+v", st)
	}
	var got []string
	for _, e := range f.g.Events() {
		if e.EventName != model.PageViewEvent || e.PixelID != "111222333" || e.TestEventCode != "" || e.ActionSource != "website" {
			t.Errorf("sent %+v", e)
		}
		got = append(got, e.EventID)
	}
	// The queue is in event_id order: by time, in any order within a
	// millisecond (the fake clock stands still).
	slices.Sort(got)
	if fmt.Sprint(got) != fmt.Sprint(slices.Sorted(slices.Values(ids))) {
		t.Errorf("sent %v, want %v", got, ids)
	}
	if c := f.counts(t); c[model.DeliverySent] != 5 || len(c) != 1 {
		t.Errorf("after sending: %v", c)
	}
	if _, err := f.db.VisitPageView(f.ctx, f.site.ID, ids[0]); !errors.Is(err, model.ErrNotFound) {
		t.Errorf("a sent PageView stays: %v", err)
	}
	if st := f.run(t); st.Claimed != 0 {
		t.Errorf("claimed again: %+v", st)
	}

	retry := f.visits(t, 2)
	f.g.FailNext(1, graphtest.FaultServerError)
	if st := f.run(t); st.Retry != 2 {
		t.Fatalf("stats %+v", st)
	}
	for _, id := range retry {
		d, err := f.db.VisitPageView(f.ctx, f.site.ID, id)
		if err != nil || d.Queued || d.State != model.DeliveryRetry || d.Attempts != 1 || d.Mode != model.ModeLive {
			t.Fatalf("after the fault: %+v %v", d, err)
		}
	}
	f.clk.Add(deliver.DefaultMinBackoff * 3 / 4)
	if st := f.run(t); st.Sent != 2 {
		t.Fatalf("retry: %+v", st)
	}
	for _, id := range retry {
		if d, err := f.db.VisitPageView(f.ctx, f.site.ID, id); err != nil || d.State != model.DeliverySent || d.Attempts != 2 {
			t.Errorf("after the retry: %+v %v", d, err)
		}
	}

	old := f.visits(t, 1)
	f.clk.Add(model.MaxEventAge)
	if st := f.run(t); st.Expired != 1 || st.Requests != 0 {
		t.Fatalf("stats %+v", st)
	}
	if d, err := f.db.VisitPageView(f.ctx, f.site.ID, old[0]); err != nil || d.State != model.DeliveryExpired {
		t.Errorf("too old: %+v %v", d, err)
	}
	if c := f.counts(t); c[model.DeliverySent] != 7 || c[model.DeliveryExpired] != 1 || len(c) != 2 {
		t.Errorf("in the end: %v", c)
	}
}

// A site in test mode sends its queued PageViews with the test event code.
func TestQueuedPageViewsInTestMode(t *testing.T) {
	t.Parallel()
	f := newFixture(t, model.ModeTest)
	f.visits(t, 2)
	if st := f.run(t); st.Sent != 2 {
		t.Fatalf("stats %+v", st)
	}
	for _, e := range f.g.Events() {
		if e.TestEventCode != testCode {
			t.Errorf("sent %+v", e)
		}
	}
}

// A queued PageView is not checked again before it is sent (it was checked
// when queued); should Meta refuse one anyway, the request is halved until
// it is alone, the others are sent, and it moves into the outbox as dead
// with Meta's message.
func TestQueuedPageViewMetaRefuses(t *testing.T) {
	t.Parallel()
	f := newFixture(t, model.ModeLive)
	ids := f.visits(t, 3)
	bad := &model.Delivery{SiteID: f.site.ID, EventID: "pv-bad", PixelID: f.site.Settings.Meta.PixelID, CreatedAt: f.clk.Now(),
		Payload: fmt.Appendf(nil, `{"event_name":"PageView","event_time":%d,"event_id":"pv-bad","action_source":"website",`+
			`"event_source_url":"https://www.istanbuldis.example/","user_data":{"client_ip_address":"203.0.113.9"}}`, f.clk.Now().Unix())}
	if ok, err := f.db.PageViewEnqueue(f.ctx, bad); err != nil || !ok {
		t.Fatal(ok, err)
	}
	st := f.run(t)
	if st.Sent != 3 || st.Dead != 1 {
		t.Fatalf("stats %+v", st)
	}
	d, err := f.db.VisitPageView(f.ctx, f.site.ID, "pv-bad")
	if err != nil || d.Queued || d.State != model.DeliveryDead || d.LastError == "" {
		t.Fatalf("refused: %+v %v", d, err)
	}
	for _, id := range ids {
		if _, err := f.db.VisitPageView(f.ctx, f.site.ID, id); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("%s: %v", id, err)
		}
	}
}

// A restarted server (a new node name) sends the queue at once: the last
// outcome of the old runner ended its lease on the site's queue.
func TestQueuedPageViewsAfterARestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t, model.ModeLive)
	f.visits(t, 2)
	if st := f.run(t); st.Sent != 2 {
		t.Fatalf("stats %+v", st)
	}
	f.visits(t, 3)
	client := capi.NewClient(capi.ClientOptions{BaseURL: f.g.URL, HTTP: f.g.Client(), Now: f.clk.Now})
	restarted := deliver.New(deliver.Options{Store: f.db, Sender: client, Now: f.clk.Now, Node: "node-a-restarted"})
	if st, err := restarted.RunOnce(f.ctx); err != nil || st.Sent != 3 {
		t.Fatalf("after the restart: %+v %v", st, err)
	}
}
