package deliver_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/model"
)

// TestMetaDown: Meta fails for two hours (5xx, hanging requests, dropped
// connections, throttling with Retry-After) while events wait and new ones
// arrive. On a fake clock the runner is driven every 10 seconds, as a busy
// loop would be: the requests it makes during the outage stay a handful
// (backoff is honoured, and a failing site is retried as one, not once per
// new event), nothing is lost, the event that passes its 7-day deadline
// during the outage ends expired and is never sent, and after recovery
// everything else reaches Meta once, oldest first.
func TestMetaDown(t *testing.T) {
	t.Parallel()
	const outage = 2 * time.Hour
	faults := []struct {
		name       string
		fault      graphtest.Fault
		retryAfter time.Duration
	}{
		{"server error", graphtest.FaultServerError, 0},
		{"hanging requests", graphtest.FaultHang, 0},
		{"dropped connections", graphtest.FaultDrop, 0},
		{"throttled with Retry-After", graphtest.FaultThrottle613, 20 * time.Minute},
		{"throttled", graphtest.FaultThrottle80004, 0},
	}
	for _, tt := range faults {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, model.ModeLive)
			// A hanging request ends at the client's timeout, in real time;
			// the fake clock does not move meanwhile.
			client := capi.NewClient(capi.ClientOptions{BaseURL: f.g.URL, HTTP: f.g.Client(), Now: f.clk.Now,
				Timeout: 100 * time.Millisecond})
			f.runner = deliver.New(deliver.Options{Store: f.db, Sender: client, Now: f.clk.Now, Node: "node-a",
				Jitter: func() float64 { return 0.5 }})
			f.g.SetRetryAfter(tt.retryAfter)
			start := f.clk.Now()

			// Waiting events of mixed ages, queued out of age order; the
			// oldest is 7 days less 30 minutes old and will not survive
			// the outage.
			ages := []time.Duration{3 * time.Hour, 7*24*time.Hour - 30*time.Minute, time.Minute, 2 * 24 * time.Hour,
				10 * time.Minute, 6 * 24 * time.Hour, 5 * time.Hour, 20 * time.Second}
			old := f.queue(t, f.site, len(ages), func(i int, d *model.Delivery, e *capi.Event) {
				at := start.Add(-ages[i])
				e.EventTime = at.Unix()
				e.EventID = fmt.Sprintf("old-%d", i)
				d.EventID, d.LeadID = e.EventID, model.LeadID("ld_"+e.EventID)
				d.DeadlineAt = at.Add(model.MaxEventAge)
			})
			doomed := old[1]

			f.g.FailFor(outage, tt.fault)
			var fresh []*model.Delivery
			during := 0
			for step := 0; f.clk.Now().Before(start.Add(outage)); step++ {
				if step%60 == 30 { // a new lead every 10 minutes
					fresh = append(fresh, f.queue(t, f.site, 1, func(_ int, d *model.Delivery, e *capi.Event) {
						e.EventID = fmt.Sprintf("new-%d", step)
						d.EventID, d.LeadID = e.EventID, model.LeadID("ld_"+e.EventID)
					})...)
				}
				f.run(t)
				f.clk.Add(10 * time.Second)
			}
			during = f.g.Requests()
			if len(f.g.Events()) != 0 {
				t.Fatalf("events accepted during the outage: %d", len(f.g.Events()))
			}
			// 720 rounds in two hours; backoff from 30 s doubling to an
			// hour allows about ten tries, one per site, whatever arrives.
			if during > 12 {
				t.Errorf("%d requests during a two-hour outage: backoff not honoured", during)
			}
			if during == 0 {
				t.Fatal("no request during the outage: the fault was never met")
			}
			if d := f.reload(t, []*model.Delivery{doomed})[0]; d.State != model.DeliveryExpired {
				t.Errorf("the event that passed its deadline during the outage is %s", d.State)
			}

			// Recovery: keep driving until nothing is due, at most a day.
			for range 24 * 360 {
				if c := f.counts(t); c[model.DeliveryPending]+c[model.DeliveryRetry] == 0 {
					break
				}
				f.run(t)
				f.clk.Add(10 * time.Second)
			}
			all := append(append([]*model.Delivery{}, old...), fresh...)
			seen := map[string]int{}
			for _, ev := range f.g.Events() {
				seen[ev.EventName+"/"+ev.EventID]++
			}
			for _, d := range f.reload(t, all) {
				n := seen[d.EventName+"/"+d.EventID]
				switch {
				case d.ID == doomed.ID:
					if d.State != model.DeliveryExpired || n != 0 {
						t.Errorf("the expired event: %s, sent %d times", d.State, n)
					}
				case d.State != model.DeliverySent || n != 1:
					t.Errorf("event %s: %s, at Meta %d times (%q)", d.EventID, d.State, n, d.LastError)
				}
			}
			// Oldest first: Meta received the events in order of event_time.
			var prev int64
			for _, ev := range f.g.Events() {
				var e capi.Event
				mustUnmarshal(t, ev.JSON, &e)
				if e.EventTime < prev {
					t.Errorf("event %s (time %d) arrived after a younger one (%d)", ev.EventID, e.EventTime, prev)
				}
				prev = e.EventTime
			}
			// Nothing older than 7 days was sent: the stand-in judges age
			// on the shared fake clock and refuses such an event, which
			// would have left it dead above, not sent.
		})
	}
}

func mustUnmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}
