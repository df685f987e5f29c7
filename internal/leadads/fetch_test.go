package leadads_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// fetches are the site's fetch jobs, newest first.
func (f *fixture) fetches(t *testing.T) []*model.Delivery {
	t.Helper()
	ds, err := f.db.DeliveryList(f.ctx, store.DeliveryFilter{Site: "dent", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []*model.Delivery
	for _, d := range ds {
		if d.Destination == model.DestinationMetaLeadgen {
			out = append(out, d)
		}
	}
	return out
}

// tell posts one signed webhook of the leads.
func (f *fixture) tell(t *testing.T, leads ...graphtest.Lead) {
	t.Helper()
	var cs []change
	for _, l := range leads {
		cs = append(cs, change{leadgen: l.ID, form: formID, created: l.Created})
	}
	body := webhook(cs)
	if code, resp := f.post(t, body, sign(body, appSecret)); code != 200 {
		t.Fatalf("webhook: %d %s", code, resp)
	}
}

// TestFetchWithoutToken: leads told of before the site's Lead Ads token is
// set wait, paused with words that say so (never dead), and are fetched
// once a token is set.
func TestFetchWithoutToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.site.LeadAds.AccessToken = ""
	if err := f.db.SiteUpsert(f.ctx, f.site, f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	f.tell(t, f.lead("1200000000000101", 5, nil), f.lead("1200000000000102", 4, nil))
	if st := f.run(t); st.Paused != 2 || st.Dead != 0 || st.Sent != 0 {
		t.Fatalf("without a token: %+v", st)
	}
	p, err := f.db.DestinationPauseOf(f.ctx, model.Share{Site: "dent", Destination: model.DestinationMetaLeadgen})
	if err != nil || p.Reason != "no Lead Ads access token is set for the site" {
		t.Fatalf("pause %+v %v", p, err)
	}
	for _, d := range f.fetches(t) {
		if d.State != model.DeliveryPaused || d.LastError != p.Reason {
			t.Errorf("fetch %s: %s %q", d.EventID, d.State, d.LastError)
		}
	}
	if f.g.LeadReads() != 0 {
		t.Fatalf("%d lead reads without a token", f.g.LeadReads())
	}
	f.site.LeadAds.AccessToken = graphtest.Token
	if err := f.db.SiteUpsert(f.ctx, f.site, f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if st := f.run(t); st.Resumed != 2 || st.Sent != 2 || f.leadCount(t) != 2 {
		t.Fatalf("with a token: %+v, %d leads", st, f.leadCount(t))
	}
}

// TestFetchBatches: a burst is fetched in batches of ten, each recorded on
// its own (a crash loses at most ten outcomes, and those leads are found
// stored when fetched again); every row keeps the lead it became.
func TestFetchBatches(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var leads []graphtest.Lead
	for i := range 23 {
		leads = append(leads, f.lead(fmt.Sprintf("12000000000002%02d", i), 30-i, nil))
	}
	f.tell(t, leads...)
	if st := f.run(t); st.Sent != 23 || st.Requests != 3 {
		t.Fatalf("burst: %+v", st)
	}
	for _, d := range f.fetches(t) {
		if d.State != model.DeliverySent || d.Attempts != 1 || d.SentAt == nil ||
			!strings.Contains(string(d.Response), `"created":true`) || !strings.Contains(string(d.Response), `"lead":"`) {
			t.Errorf("fetch %s: %s %d %s", d.EventID, d.State, d.Attempts, d.Response)
		}
	}
}

// TestFetchThrottledAndExpired: Meta throttling keeps its Retry-After; a
// lead whose 90 days run out while Meta fails expires instead of retrying.
func TestFetchThrottledAndExpired(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.tell(t, f.lead("1200000000000301", 5, nil))
	f.g.SetRetryAfter(20 * time.Minute)
	f.g.FailNext(1, graphtest.FaultThrottle613)
	if st := f.run(t); st.Retry != 1 {
		t.Fatalf("throttled: %+v", st)
	}
	d := f.fetches(t)[0]
	if d.State != model.DeliveryRetry || d.Attempts != 1 || d.NextAt.Before(f.clk.Now().Add(20*time.Minute)) ||
		!strings.Contains(d.LastError, "613") || !strings.Contains(string(d.Response), `"class":"throttled"`) {
		t.Fatalf("throttled row: %s %d next in %s %q %s", d.State, d.Attempts, d.NextAt.Sub(f.clk.Now()), d.LastError, d.Response)
	}
	f.clk.Add(21 * time.Minute)
	if st := f.run(t); st.Sent != 1 {
		t.Fatalf("after the wait: %+v", st)
	}
	f.run(t) // the lead's events to Meta

	// Told of 90 days less a minute ago: Meta failing now leaves no time
	// to try again.
	old := f.lead("1200000000000302", 90*24*60-1, nil)
	f.tell(t, old)
	f.g.FailNext(1, graphtest.FaultServerError)
	if st := f.run(t); st.Expired != 1 {
		t.Fatalf("at the deadline: %+v", st)
	}
	for _, d := range f.fetches(t) {
		if d.EventID == old.ID && (d.State != model.DeliveryExpired || !strings.HasPrefix(d.LastError, "deadline passed while retrying: ")) {
			t.Fatalf("expired row: %s %q", d.State, d.LastError)
		}
	}
}
