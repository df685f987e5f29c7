package deliver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// fixture is a fresh database with site "dent" in test mode, a Graph
// stand-in, and a runner on a fake clock.
type fixture struct {
	ctx    context.Context
	db     *store.DB
	g      *graphtest.Server
	clk    *testkit.Clock // the runner, the client and the stand-in share it
	site   *model.Site
	runner *deliver.Runner
	svc    *app.Service
}

const testCode = "TEST4711"

func newFixture(t *testing.T, mode string) *fixture {
	t.Helper()
	f := &fixture{ctx: context.Background(), db: storetest.New(t), g: graphtest.New(t),
		clk: testkit.NewClock(time.Now().UTC().Truncate(time.Second))}
	f.g.SetNow(f.clk.Now)
	f.site = testkit.AddSite(t, f.db, testkit.Site(testkit.WithMeta("111222333", mode), func(s *model.Site) {
		s.AccessToken = graphtest.Token
		s.Settings.Meta.TestEventCode = testCode
		s.Settings.Meta.CustomData = map[string]string{"lead_event_source": "CleanAds"}
	}), f.clk.Now())
	client := capi.NewClient(capi.ClientOptions{BaseURL: f.g.URL, HTTP: f.g.Client(), Now: f.clk.Now})
	f.runner = deliver.New(deliver.Options{Store: f.db, Sender: client, Now: f.clk.Now, Node: "node-a",
		Jitter: func() float64 { return 0.5 }})
	f.svc = app.New(app.Options{Store: f.db, Now: f.clk.Now, Graph: client})
	return f
}

func (f *fixture) run(t *testing.T) deliver.Stats {
	t.Helper()
	st, err := f.runner.RunOnce(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// phones are distinct real-looking numbers: the same person twice in a
// week is judged a duplicate.
var phones = []string{"0532 412 87 19", "0533 218 44 90", "0535 611 27 43", "0542 774 19 02"}

// lead is a complete website lead that the rules judge clean.
func lead(n int) *app.LeadInput {
	fill := int64(8400)
	return &app.LeadInput{
		EventID: fmt.Sprintf("browser-%d", n), Email: fmt.Sprintf(" Ayse.Yilmaz%d@Gmail.com ", n),
		Phone: phones[n%len(phones)], Name: "Ayşe Yılmaz", Message: "Implant tedavisi için randevu almak istiyorum, hafta içi akşam uygunum.",
		FillMS: &fill, PageURL: "https://www.istanbuldis.example/implant",
		FBClid: "IwAR2xYz", ClientIP: "203.0.113.9", UserAgent: "Mozilla/5.0 (test)",
	}
}

// queue puts n events for site straight into the outbox, each a valid
// website lead event with its own id, made at the clock's time.
func (f *fixture) queue(t testing.TB, site *model.Site, n int, edit func(i int, d *model.Delivery, e *capi.Event)) []*model.Delivery {
	t.Helper()
	now := f.clk.Now()
	out := make([]*model.Delivery, n)
	for i := range n {
		l := &model.Lead{ID: model.LeadID(fmt.Sprintf("ld_%s_%d", site.ID, i)), SiteID: site.ID,
			EventID: fmt.Sprintf("ev-%s-%d", site.ID, i), Email: fmt.Sprintf("p%d@example.com", i),
			PageURL: "https://www.istanbuldis.example/", UserAgent: "Mozilla/5.0", SubmittedAt: now}
		e, err := capi.BuildLeadEvent(capi.BuildParams{Site: site, Lead: l})
		if err != nil {
			t.Fatal(err)
		}
		d := &model.Delivery{ID: model.NewID("dl_", now), SiteID: site.ID, LeadID: l.ID, Kind: model.KindLead,
			EventName: e.EventName, EventID: e.EventID, PixelID: site.Settings.Meta.PixelID,
			State: model.DeliveryPending, NextAt: now, DeadlineAt: now.Add(model.MaxEventAge - time.Minute),
			CreatedAt: now, UpdatedAt: now}
		if edit != nil {
			edit(i, d, &e)
		}
		if d.Payload, err = json.Marshal(e); err != nil {
			t.Fatal(err)
		}
		out[i] = d
	}
	// One transaction: thousands of single commits would dominate the tests.
	err := f.db.InTx(context.Background(), func(tx *store.Tx) error {
		for i, d := range out {
			if ok, err := tx.DeliveryInsert(context.Background(), d); err != nil || !ok {
				return fmt.Errorf("insert %d: %v %w", i, ok, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// byID reads back the deliveries of the given ids, in that order.
func (f *fixture) reload(t testing.TB, ds []*model.Delivery) []*model.Delivery {
	t.Helper()
	out := make([]*model.Delivery, len(ds))
	for i, d := range ds {
		list, err := f.db.DeliveriesByLead(context.Background(), d.LeadID)
		if err != nil || len(list) != 1 {
			t.Fatalf("deliveries of %s: %v %v", d.LeadID, list, err)
		}
		out[i] = list[0]
	}
	return out
}

func (f *fixture) counts(t *testing.T) map[model.DeliveryState]int {
	t.Helper()
	c, err := f.db.DeliveryCounts(f.ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCleanLeadArrivesRawAndQualified(t *testing.T) {
	t.Parallel()
	f := newFixture(t, model.ModeTest)
	l, created, err := f.svc.Submit(f.ctx, f.site, lead(1))
	if err != nil || !created || l.Verdict != model.VerdictClean {
		t.Fatal(created, err, l.Decision)
	}
	// A replay of the same post queues nothing more.
	if _, created, err := f.svc.Submit(f.ctx, f.site, lead(1)); err != nil || created {
		t.Fatal(created, err)
	}
	st := f.run(t)
	if st.Sent != 2 || st.Requests != 1 {
		t.Fatalf("stats %+v", st)
	}
	got := f.g.Events()
	if len(got) != 2 {
		t.Fatalf("Meta received %d events", len(got))
	}
	want := map[string]string{"Lead": l.EventID, "QualifiedLead": capi.QualifiedEventID(l.ID, model.KindQualified)}
	for _, r := range got {
		if r.TestEventCode != testCode || r.PixelID != "111222333" || r.ActionSource != "website" {
			t.Errorf("received %+v", r)
		}
		if want[r.EventName] != r.EventID {
			t.Errorf("%s has event_id %q, want %q", r.EventName, r.EventID, want[r.EventName])
		}
		var e capi.Event
		if err := json.Unmarshal(r.JSON, &e); err != nil {
			t.Fatal(err)
		}
		u := e.UserData
		if u.Email[0] != capi.Hash("ayse.yilmaz1@gmail.com") || u.Phone[0] != capi.Hash("905332184490") ||
			u.FirstName[0] != capi.Hash("ayşe") || u.Country[0] != capi.Hash("tr") {
			t.Errorf("hashes %+v", u)
		}
		if u.FBC != capi.MintFBC("IwAR2xYz", l.SubmittedAt) || u.ClientUserAgent != "Mozilla/5.0 (test)" ||
			e.EventTime != l.SubmittedAt.Unix() || e.EventSourceURL != "https://www.istanbuldis.example/implant" {
			t.Errorf("event %+v", e)
		}
		if e.CustomData["lead_event_source"] != "CleanAds" {
			t.Errorf("custom_data %v", e.CustomData)
		}
	}
	ds, err := f.db.DeliveriesByLead(f.ctx, l.ID)
	if err != nil || len(ds) != 2 {
		t.Fatal(ds, err)
	}
	for _, d := range ds {
		var answer struct {
			EventsReceived int    `json:"events_received"`
			FBTraceID      string `json:"fbtrace_id"`
		}
		json.Unmarshal(d.Response, &answer)
		if d.State != model.DeliverySent || d.Attempts != 1 || d.SentAt == nil || d.Mode != model.ModeTest ||
			answer.EventsReceived != 2 || answer.FBTraceID == "" {
			t.Errorf("delivery %+v, answer %s", d, d.Response)
		}
	}
	// Nothing is sent twice.
	if st := f.run(t); st.Claimed != 0 || f.g.Requests() != 1 {
		t.Errorf("second round %+v, requests %d", st, f.g.Requests())
	}
}

func TestLiveModeHasNoTestCode(t *testing.T) {
	t.Parallel()
	f := newFixture(t, model.ModeLive)
	f.queue(t, f.site, 3, nil)
	f.run(t)
	for _, r := range f.g.Events() {
		if r.TestEventCode != "" {
			t.Errorf("live event carried test_event_code %q", r.TestEventCode)
		}
	}
	if len(f.g.Events()) != 3 {
		t.Errorf("received %d", len(f.g.Events()))
	}
}

func TestBatchesOfAThousand(t *testing.T) {
	t.Parallel()
	f := newFixture(t, model.ModeLive)
	f.queue(t, f.site, 2500, nil)
	st := f.run(t)
	if st.Sent != 2500 || st.Requests != 3 || f.g.Requests() != 3 {
		t.Fatalf("stats %+v, requests %d", st, f.g.Requests())
	}
	perRequest := map[int]int{}
	ids := map[string]bool{}
	for _, r := range f.g.Events() {
		perRequest[r.Request]++
		ids[r.EventID] = true
	}
	if perRequest[1] != 1000 || perRequest[2] != 1000 || perRequest[3] != 500 || len(ids) != 2500 {
		t.Errorf("per request %v, distinct ids %d", perRequest, len(ids))
	}
	if c := f.counts(t); c[model.DeliverySent] != 2500 || len(c) != 1 {
		t.Errorf("counts %v", c)
	}
}

func TestRetryableErrors(t *testing.T) {
	t.Parallel()
	const minBackoff = deliver.DefaultMinBackoff
	tests := []struct {
		name       string
		fault      graphtest.Fault
		retryAfter time.Duration
		wantInErr  string
		wantWait   time.Duration // next_at - now, with Jitter 0.5
	}{
		{"server error", graphtest.FaultServerError, 0, "code 2", minBackoff * 3 / 4},
		{"throttle 17", graphtest.FaultThrottle17, 0, "code 17", minBackoff * 3 / 4},
		{"throttle 613 with Retry-After", graphtest.FaultThrottle613, 10 * time.Minute, "code 613", 10 * time.Minute},
		{"throttle 80004", graphtest.FaultThrottle80004, 0, "code 80004", minBackoff * 3 / 4},
		{"dropped connection", graphtest.FaultDrop, 0, "EOF", minBackoff * 3 / 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, model.ModeLive)
			f.g.SetRetryAfter(tt.retryAfter)
			ds := f.queue(t, f.site, 3, nil)
			f.g.FailNext(1, tt.fault)
			start := f.clk.Now()
			st := f.run(t)
			if st.Retry != 3 || st.Sent != 0 {
				t.Fatalf("stats %+v", st)
			}
			for _, d := range f.reload(t, ds) {
				if d.State != model.DeliveryRetry || d.Attempts != 1 || !strings.Contains(d.LastError, tt.wantInErr) ||
					d.NextAt.Sub(start) != tt.wantWait || !strings.Contains(string(d.Response), `"error"`) {
					t.Errorf("after the fault: %s attempts %d next in %s err %q response %s", d.State, d.Attempts,
						d.NextAt.Sub(start), d.LastError, d.Response)
				}
			}
			// Not due yet: nothing is sent, no busy loop of requests.
			if st := f.run(t); st.Claimed != 0 || f.g.Requests() != 1 {
				t.Fatalf("retried early: %+v", st)
			}
			f.clk.Add(tt.wantWait)
			if st := f.run(t); st.Sent != 3 {
				t.Fatalf("retry: %+v", st)
			}
			for _, d := range f.reload(t, ds) {
				if d.State != model.DeliverySent || d.Attempts != 2 || d.LastError != "" {
					t.Errorf("after the retry: %+v", d)
				}
			}
		})
	}
}

func TestBackoffGrowsAndStopsAtTheDeadline(t *testing.T) {
	t.Parallel()
	f := newFixture(t, model.ModeLive)
	ds := f.queue(t, f.site, 1, nil)
	f.g.FailFor(30*24*time.Hour, graphtest.FaultServerError)
	var waits []time.Duration
	for range 1000 {
		before := f.clk.Now()
		f.run(t)
		d := f.reload(t, ds)[0]
		if d.State != model.DeliveryRetry {
			if d.State != model.DeliveryExpired || !strings.Contains(d.LastError, "deadline") {
				t.Fatalf("ended %s: %q", d.State, d.LastError)
			}
			break
		}
		if d.NextAt.After(d.DeadlineAt) {
			t.Fatalf("next_at %s after the deadline %s", d.NextAt, d.DeadlineAt)
		}
		waits = append(waits, d.NextAt.Sub(before))
		f.clk.Add(d.NextAt.Sub(before))
	}
	if d := f.reload(t, ds)[0]; d.State != model.DeliveryExpired {
		t.Fatalf("never expired: %+v", d)
	}
	if len(waits) < 3 || waits[1] != 2*waits[0] || waits[2] != 4*waits[0] {
		t.Errorf("backoff %v does not double", waits)
	}
	for _, w := range waits {
		if w > deliver.DefaultMaxBackoff {
			t.Errorf("wait %s over the cap", w)
		}
	}
}

func TestHangingRequestTimesOut(t *testing.T) {
	t.Parallel()
	f := newFixture(t, model.ModeLive)
	client := capi.NewClient(capi.ClientOptions{BaseURL: f.g.URL, HTTP: f.g.Client(), Timeout: 50 * time.Millisecond})
	r := deliver.New(deliver.Options{Store: f.db, Sender: client, Now: f.clk.Now})
	ds := f.queue(t, f.site, 2, nil)
	f.g.FailNext(1, graphtest.FaultHang)
	if st, err := r.RunOnce(f.ctx); err != nil || st.Retry != 2 {
		t.Fatalf("%+v %v", st, err)
	}
	if d := f.reload(t, ds)[0]; d.State != model.DeliveryRetry || !strings.Contains(d.LastError, "deadline exceeded") {
		t.Errorf("%s %q", d.State, d.LastError)
	}
}

func TestRejectedEventIsIsolated(t *testing.T) {
	t.Parallel()
	f := newFixture(t, model.ModeLive)
	// Meta's clock runs two days ahead of ours: an event five and a half
	// days old passes our pre-check, and Meta refuses it as too old. Only
	// Meta can find it, so the batch is split.
	f.g.SetNow(func() time.Time { return f.clk.Now().Add(48 * time.Hour) })
	ds := f.queue(t, f.site, 9, func(i int, d *model.Delivery, e *capi.Event) {
		if i == 6 {
			e.EventTime = f.clk.Now().Add(-132 * time.Hour).Unix()
		}
	})
	st := f.run(t)
	if st.Sent != 8 || st.Dead != 1 {
		t.Fatalf("stats %+v", st)
	}
	for i, d := range f.reload(t, ds) {
		if i == 6 {
			var r struct {
				Error struct {
					Code    int    `json:"code"`
					Subcode int    `json:"error_subcode"`
					Message string `json:"message"`
					Trace   string `json:"fbtrace_id"`
				} `json:"error"`
			}
			json.Unmarshal(d.Response, &r)
			if d.State != model.DeliveryDead || !strings.Contains(d.LastError, "more than 7 days") ||
				r.Error.Code != 100 || r.Error.Subcode != graphtest.SubcodeTooOld || r.Error.Trace == "" {
				t.Errorf("bad event: %s %q %s", d.State, d.LastError, d.Response)
			}
			continue
		}
		if d.State != model.DeliverySent {
			t.Errorf("event %d: %s %q", i, d.State, d.LastError)
		}
	}
	if n := len(f.g.Events()); n != 8 {
		t.Errorf("Meta has %d events", n)
	}
	// Halving finds one bad event among 9 in a handful of requests.
	if st.Requests > 9 {
		t.Errorf("%d requests to isolate one event", st.Requests)
	}
	// Dead is final.
	f.clk.Add(time.Hour)
	if st := f.run(t); st.Claimed != 0 {
		t.Errorf("dead event claimed again: %+v", st)
	}
}

func TestExpiredAndFailingEventsNeverPoisonABatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t, model.ModeLive)
	now := f.clk.Now()
	ds := f.queue(t, f.site, 6, func(i int, d *model.Delivery, e *capi.Event) {
		switch i {
		case 1: // its deadline has passed
			e.EventTime = now.Add(-7*24*time.Hour - time.Hour).Unix()
			d.DeadlineAt = now.Add(-time.Hour)
		case 2: // deadline still ahead, but the event is older than Meta takes
			e.EventTime = now.Add(-8 * 24 * time.Hour).Unix()
		case 3: // a website event without a user agent
			e.UserData.ClientUserAgent = ""
		case 4: // an fbc with a creation time in seconds
			e.UserData.FBC = "fb.1.1716200000.IwAR"
		}
	})
	st := f.run(t)
	if st.Sent != 2 || st.Expired != 2 || st.Dead != 2 || st.Requests != 1 || f.g.Requests() != 1 {
		t.Fatalf("stats %+v, Meta saw %d requests", st, f.g.Requests())
	}
	want := []model.DeliveryState{model.DeliverySent, model.DeliveryExpired, model.DeliveryExpired,
		model.DeliveryDead, model.DeliveryDead, model.DeliverySent}
	wantErr := []string{"", "deadline", "event_time_too_old", "website_requires_client_user_agent", "fbc_format", ""}
	for i, d := range f.reload(t, ds) {
		if d.State != want[i] || !strings.Contains(d.LastError, wantErr[i]) {
			t.Errorf("event %d: %s %q, want %s %q", i, d.State, d.LastError, want[i], wantErr[i])
		}
		if d.State == model.DeliveryDead && !strings.Contains(string(d.Response), `"precheck"`) {
			t.Errorf("event %d response %s", i, d.Response)
		}
	}
}

func TestSweepExpiresWaitingEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t, model.ModeLive)
	ds := f.queue(t, f.site, 1, nil)
	// The token is refused, so the event waits paused; a week later it is
	// expired, not kept forever.
	f.g.SetTokens("another")
	f.run(t)
	if d := f.reload(t, ds)[0]; d.State != model.DeliveryPaused {
		t.Fatalf("%+v", d)
	}
	f.clk.Add(model.MaxEventAge)
	if st := f.run(t); st.Claimed != 0 {
		t.Errorf("%+v", st)
	}
	if d := f.reload(t, ds)[0]; d.State != model.DeliveryExpired {
		t.Errorf("after a week: %s %q", d.State, d.LastError)
	}
}

func TestAuthErrorPausesTheSiteUntilTheTokenChanges(t *testing.T) {
	t.Parallel()
	f := newFixture(t, model.ModeLive)
	ds := f.queue(t, f.site, 1500, nil)
	f.g.FailNext(1, graphtest.FaultAuth)
	st := f.run(t)
	if st.Paused != 1500 || st.Requests != 1 {
		t.Fatalf("stats %+v", st)
	}
	s, err := f.db.SiteByID(f.ctx, "dent")
	if err != nil || !strings.Contains(s.PausedReason, "code 190") || s.PausedAt.IsZero() {
		t.Fatalf("site %+v %v", s, err)
	}
	// The first batch was refused (one attempt, Meta's answer kept); the
	// second was never sent, so no attempt is counted for it.
	attempts := map[int]int{}
	for _, d := range f.reload(t, ds) {
		attempts[d.Attempts]++
		if d.State != model.DeliveryPaused || (d.Attempts == 1) != strings.Contains(string(d.Response), `"code":190`) {
			t.Fatalf("event %s: %s attempts %d response %s", d.ID, d.State, d.Attempts, d.Response)
		}
	}
	if attempts[1] != 1000 || attempts[0] != 500 {
		t.Errorf("attempts %v", attempts)
	}
	// New events of the paused site wait too, without a request.
	more := f.queue(t, f.site, 1, func(i int, d *model.Delivery, e *capi.Event) {
		d.LeadID, d.EventID, e.EventID = "ld_more", "ev-more", "ev-more"
	})
	f.clk.Add(time.Hour)
	if st := f.run(t); st.Paused != 1 || st.Requests != 0 || f.g.Requests() != 1 {
		t.Fatalf("paused site sent: %+v", st)
	}
	// The same token again changes nothing.
	if err := f.db.SiteUpsert(f.ctx, f.site, f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if st := f.run(t); st.Resumed != 0 || st.Sent != 0 {
		t.Fatalf("resumed without a new token: %+v", st)
	}
	// A new token resumes everything.
	f.g.SetTokens("new-token")
	f.site.AccessToken = "new-token"
	if err := f.db.SiteUpsert(f.ctx, f.site, f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	st = f.run(t)
	if st.Resumed != 1501 || st.Sent != 1501 || st.Requests != 2 {
		t.Fatalf("after the new token: %+v", st)
	}
	if d := f.reload(t, more)[0]; d.State != model.DeliverySent || d.LastError != "" {
		t.Errorf("%+v", d)
	}
	if c := f.counts(t); c[model.DeliverySent] != 1501 {
		t.Errorf("counts %v", c)
	}
}

func TestDryRunNeverSends(t *testing.T) {
	t.Parallel()
	f := newFixture(t, model.ModeDryRun)
	l, _, err := f.svc.Submit(f.ctx, f.site, lead(1))
	if err != nil {
		t.Fatal(err)
	}
	bad := lead(2)
	bad.UserAgent = ""
	if _, _, err := f.svc.Submit(f.ctx, f.site, bad); err != nil {
		t.Fatal(err)
	}
	st := f.run(t)
	if st.DryRun != 2 || st.Dead != 2 || f.g.Requests() != 0 {
		t.Fatalf("stats %+v, requests %d", st, f.g.Requests())
	}
	ds, _ := f.db.DeliveriesByLead(f.ctx, l.ID)
	for _, d := range ds {
		var e capi.Event
		if d.State != model.DeliveryDryRun || d.SentAt != nil || d.Mode != model.ModeDryRun ||
			json.Unmarshal(d.Payload, &e) != nil || e.UserData.Email[0] != capi.Hash("ayse.yilmaz1@gmail.com") {
			t.Errorf("%+v", d)
		}
	}
}

func TestCrashedNodesLeaseRunsOut(t *testing.T) {
	t.Parallel()
	f := newFixture(t, model.ModeLive)
	f.queue(t, f.site, 3, nil)
	now := f.clk.Now()
	// Node b claims and dies.
	claimed, err := f.db.DeliveryClaim(f.ctx, "node-b", now, now.Add(deliver.DefaultLease), 10, nil)
	if err != nil || len(claimed) != 3 {
		t.Fatal(claimed, err)
	}
	if st := f.run(t); st.Claimed != 0 {
		t.Fatalf("claimed leased events: %+v", st)
	}
	f.clk.Add(deliver.DefaultLease)
	if st := f.run(t); st.Sent != 3 {
		t.Fatalf("after the lease: %+v", st)
	}
	// Node b's late record of its lost lease changes nothing.
	claimed[0].State = model.DeliveryDead
	if lost, err := f.db.DeliveryRecord(f.ctx, "node-b", claimed[:1], f.clk.Now()); err != nil || lost != 1 {
		t.Fatalf("lost %d %v", lost, err)
	}
	if c := f.counts(t); c[model.DeliverySent] != 3 {
		t.Errorf("counts %v", c)
	}
}

// pixelRouter sends each pixel's requests to its own stand-in.
type pixelRouter map[string]deliver.Sender

func (p pixelRouter) Send(ctx context.Context, req capi.SendRequest) (*capi.Response, error) {
	return p[req.PixelID].Send(ctx, req)
}

func TestHangingSiteDoesNotDelayAnother(t *testing.T) {
	t.Parallel()
	f := newFixture(t, model.ModeLive)
	slow := f.g
	fast := graphtest.New(t)
	other := &model.Site{ID: "kuafor", Name: "Kuaför", Settings: model.SiteSettings{Country: "TR",
		Meta: model.MetaSettings{PixelID: "999", Mode: model.ModeLive}}, AccessToken: graphtest.Token}
	if err := f.db.SiteUpsert(f.ctx, other, f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	slow.FailFor(time.Hour, graphtest.FaultHang)
	router := pixelRouter{
		"111222333": capi.NewClient(capi.ClientOptions{BaseURL: slow.URL, HTTP: slow.Client(), Timeout: time.Hour}),
		"999":       capi.NewClient(capi.ClientOptions{BaseURL: fast.URL, HTTP: fast.Client(), Timeout: time.Hour}),
	}
	// Poll is an hour: only Wake starts a round.
	r := deliver.New(deliver.Options{Store: f.db, Sender: router, Poll: time.Hour})
	slowDs := f.queue(t, f.site, 2, nil)
	if err := r.Start(f.ctx); err != nil {
		t.Fatal(err)
	}
	r.Start(f.ctx) // harmless
	// The hanging request is in flight before the other site's events come.
	testkit.WaitFor(t, "the slow site's request", func() bool { return slow.Requests() == 1 })
	f.queue(t, other, 2, nil)
	r.Wake()
	testkit.WaitFor(t, "the fast site's two events", func() bool { return len(fast.Events()) == 2 })
	if d := f.reload(t, slowDs)[0]; d.State != model.DeliveryPending {
		t.Errorf("slow site's event: %+v", d)
	}
	// Stop gives up on the hanging request; its events are recorded for a
	// retry.
	ctx, cancel := context.WithTimeout(f.ctx, 100*time.Millisecond)
	defer cancel()
	if err := r.Stop(ctx); err == nil {
		t.Error("Stop reported no cut-short send")
	}
	if err := r.Stop(f.ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	for _, d := range f.reload(t, slowDs) {
		if d.State != model.DeliveryRetry || d.Attempts != 1 {
			t.Errorf("slow site's event after Stop: %s attempts %d %q", d.State, d.Attempts, d.LastError)
		}
	}
}

func TestSubmitWakesTheRunner(t *testing.T) {
	t.Parallel()
	f := newFixture(t, model.ModeTest)
	client := capi.NewClient(capi.ClientOptions{BaseURL: f.g.URL, HTTP: f.g.Client()})
	r := deliver.New(deliver.Options{Store: f.db, Sender: client, Poll: time.Hour})
	svc := app.New(app.Options{Store: f.db, Notifier: r})
	f.g.SetNow(time.Now)
	if err := r.Start(f.ctx); err != nil {
		t.Fatal(err)
	}
	defer r.Stop(f.ctx)
	if _, _, err := svc.Submit(f.ctx, f.site, lead(7)); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "two events at Meta", func() bool { return len(f.g.Events()) == 2 })
}

// BenchmarkDeliver measures the whole path, from claim to record, against
// the stand-in over real HTTP: events per second.
func BenchmarkDeliver(b *testing.B) {
	const perRound = 5000
	db := storetest.SQLite(b)
	g := graphtest.New(b)
	ctx := context.Background()
	clk := testkit.NewClock(time.Now().UTC())
	g.SetNow(clk.Now)
	site := &model.Site{ID: "dent", Name: "Dent", Settings: model.SiteSettings{Country: "TR",
		Meta: model.MetaSettings{PixelID: "1", Mode: model.ModeLive}}, AccessToken: graphtest.Token}
	if err := db.SiteUpsert(ctx, site, clk.Now()); err != nil {
		b.Fatal(err)
	}
	f := &fixture{ctx: ctx, db: db, g: g, clk: clk, site: site}
	r := deliver.New(deliver.Options{Store: db, Sender: capi.NewClient(capi.ClientOptions{BaseURL: g.URL, HTTP: g.Client()}),
		Now: clk.Now})
	sent := 0
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		site.ID = model.SiteID(fmt.Sprintf("dent%d", i))
		if err := db.SiteUpsert(ctx, site, clk.Now()); err != nil {
			b.Fatal(err)
		}
		f.queue(b, site, perRound, nil)
		b.StartTimer()
		start := time.Now()
		st, err := r.RunOnce(ctx)
		elapsed += time.Since(start)
		if err != nil || st.Sent != perRound {
			b.Fatalf("%+v %v", st, err)
		}
		sent += st.Sent
	}
	b.ReportMetric(float64(sent)/elapsed.Seconds(), "events/s")
}

// tokenSwap replaces the site's token while the first request, with the
// old one, is on its way.
type tokenSwap struct {
	f     *fixture
	t     *testing.T
	inner deliver.Sender
	done  bool
}

func (s *tokenSwap) Send(ctx context.Context, req capi.SendRequest) (*capi.Response, error) {
	if !s.done {
		s.done = true
		s.f.g.SetTokens("fresh")
		s.f.site.AccessToken = "fresh"
		if err := s.f.db.SiteUpsert(ctx, s.f.site, s.f.clk.Now()); err != nil {
			s.t.Error(err)
		}
	}
	return s.inner.Send(ctx, req)
}

func TestTokenChangedInFlightDoesNotPause(t *testing.T) {
	t.Parallel()
	f := newFixture(t, model.ModeLive)
	sw := &tokenSwap{f: f, t: t, inner: capi.NewClient(capi.ClientOptions{BaseURL: f.g.URL, HTTP: f.g.Client(), Now: f.clk.Now})}
	r := deliver.New(deliver.Options{Store: f.db, Sender: sw, Now: f.clk.Now})
	ds := f.queue(t, f.site, 2, nil)
	if st, err := r.RunOnce(f.ctx); err != nil || st.Paused != 0 || st.Requests != 1 {
		t.Fatalf("%+v %v", st, err)
	}
	if s, _ := f.db.SiteByID(f.ctx, f.site.ID); s.PausedReason != "" {
		t.Fatalf("paused with a fresh token: %q", s.PausedReason)
	}
	if st, err := r.RunOnce(f.ctx); err != nil || st.Sent != 2 {
		t.Fatalf("%+v %v", st, err)
	}
	if d := f.reload(t, ds)[0]; d.Attempts != 2 || d.State != model.DeliverySent {
		t.Errorf("%+v", d)
	}
}

// Rounds that do not fill their claim are at least Gap apart: a wake
// inside the gap waits for it. Stop does not wait the gap out.
func TestGapBetweenRounds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, model.ModeTest)
	client := capi.NewClient(capi.ClientOptions{BaseURL: f.g.URL, HTTP: f.g.Client()})
	r := deliver.New(deliver.Options{Store: f.db, Sender: client, Poll: time.Hour, Gap: time.Hour})
	svc := app.New(app.Options{Store: f.db, Notifier: r})
	f.g.SetNow(time.Now)
	// A lead queued before the start: the first round sends its two
	// events and, not filling its claim, begins the gap.
	if _, _, err := svc.Submit(f.ctx, f.site, lead(6)); err != nil {
		t.Fatal(err)
	}
	if err := r.Start(f.ctx); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the first round's two events", func() bool { return len(f.g.Events()) >= 2 })
	// A lead inside the gap wakes the runner, which waits the gap out.
	if _, _, err := svc.Submit(f.ctx, f.site, lead(7)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(f.g.Events()); n != 2 {
		t.Errorf("%d events sent inside the gap", n-2)
	}
	ctx, cancel := context.WithTimeout(f.ctx, 10*time.Second)
	defer cancel()
	if err := r.Stop(ctx); err != nil {
		t.Fatalf("stop inside the gap: %v", err)
	}
}
