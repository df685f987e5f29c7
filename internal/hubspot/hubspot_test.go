package hubspot_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/hubspot"
	"github.com/cleanads/cleanads/internal/hubspot/hubspottest"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/source"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
	"github.com/cleanads/cleanads/internal/web"
)

const email = "ayse.yilmaz@gmail.com"

// fixture is a database with site "dent" (Meta live, stages meeting and
// won, HubSpot connected to the stand-in), the Graph and HubSpot
// stand-ins, the use cases, a runner with the HubSpot worker, and the
// HTTP server with the webhook, all on one fake clock.
type fixture struct {
	t      *testing.T
	ctx    context.Context
	db     *store.DB
	g      *graphtest.Server
	hs     *hubspottest.Server
	clk    *testkit.Clock
	site   *model.Site
	svc    *app.Service
	src    source.Worker
	runner *deliver.Runner
	srv    *httptest.Server
	lead   *model.Lead
}

func newFixture(t *testing.T, publicURL string) *fixture {
	t.Helper()
	f := &fixture{t: t, ctx: context.Background(), db: storetest.New(t), g: graphtest.New(t), hs: hubspottest.New(t),
		clk: testkit.NewClock(time.Now().UTC().Truncate(time.Second))}
	f.g.SetNow(f.clk.Now)
	doc, _ := json.Marshal(hubspot.Settings{
		DealStages:      map[string]string{"appointmentscheduled": "meeting", "closedwon": "won"},
		LifecycleStages: map[string]string{"salesqualifiedlead": "meeting"}, LeadIDProperty: "cleanads_lead_id"})
	f.site = testkit.AddSite(t, f.db, testkit.Site(testkit.WithMeta("111222333", model.ModeLive), func(s *model.Site) {
		s.AccessToken = graphtest.Token
		s.Settings.Meta.Stages = map[string]model.StageEvent{"meeting": {Event: "Schedule"}, "won": {Event: "Purchase"}}
		s.Settings.Platforms = map[string]json.RawMessage{hubspot.Name: doc}
		s.Secrets = map[string]string{
			platform.SecretName(hubspot.Name, hubspot.SecretAccessToken):  hubspottest.Token,
			platform.SecretName(hubspot.Name, hubspot.SecretClientSecret): hubspottest.ClientSecret}
	}), f.clk.Now())
	client := capi.NewClient(capi.ClientOptions{BaseURL: f.g.URL, HTTP: f.g.Client(), Now: f.clk.Now})
	f.svc = app.New(app.Options{Store: f.db, Now: f.clk.Now, Graph: client})
	f.src = hubspot.New(source.Deps{Deps: platform.Deps{Endpoints: map[string]string{hubspot.Name: f.hs.URL}, Now: f.clk.Now},
		App: f.svc, Sites: f.db, Pauses: f.db, PublicURL: publicURL}).(source.Worker)
	f.runner = deliver.New(deliver.Options{Store: f.db, Sender: client, Now: f.clk.Now, Node: "node-a",
		Jitter: func() float64 { return 0.5 }, Handlers: map[string]deliver.Handler{hubspot.Name: f.src.Handler()}})
	f.srv = httptest.NewServer(web.New(web.Options{App: f.svc, Store: f.db, Now: f.clk.Now,
		Sources: []source.Source{f.src}}).Handler())
	t.Cleanup(f.srv.Close)
	// The lead, an hour ago, and its HubSpot contact and deal.
	lead, _, err := f.svc.Submit(f.ctx, f.site, &app.LeadInput{EventID: "browser-1", Email: email, Phone: "05324128719",
		Name: "Ayşe Yılmaz", Message: "Implant tedavisi için randevu almak istiyorum, hafta içi akşam uygunum.",
		PageURL: testkit.Origin + "/implant", UserAgent: "Mozilla/5.0", ClientIP: "203.0.113.1"})
	if err != nil {
		t.Fatal(err)
	}
	f.lead = lead
	f.hs.AddContact(hubspottest.Contact{ID: "501", Email: " Ayse.Yilmaz@Gmail.com ", Phone: "+90 532 412 87 19"})
	f.hs.AddDeal(hubspottest.Deal{ID: "9001", Stage: "appointmentscheduled", Amount: "12500.50", Currency: "TRY",
		Contacts: []string{"501"}})
	return f
}

// url is the site's webhook on the test server.
func (f *fixture) url() string { return f.srv.URL + "/v1/webhooks/hubspot/dent" }

// post posts events signed as HubSpot signs them, now.
func (f *fixture) post(events ...hubspot.Event) (int, string) {
	f.t.Helper()
	return hubspottest.Post(f.t, f.url(), f.url(), hubspottest.ClientSecret, hubspottest.Body(events...), f.clk.Now())
}

// run runs the runner until nothing is due, moving the clock past each
// backoff, at most n rounds.
func (f *fixture) run(n int) {
	f.t.Helper()
	for range n {
		if _, err := f.runner.RunOnce(f.ctx); err != nil {
			f.t.Fatal(err)
		}
		f.clk.Add(10 * time.Minute)
	}
	f.clk.Add(-time.Duration(n) * 10 * time.Minute)
}

// sent are the Meta events of name the Graph stand-in took.
func (f *fixture) sent(name string) []graphtest.Received {
	var out []graphtest.Received
	for _, e := range f.g.Events() {
		if e.EventName == name {
			out = append(out, e)
		}
	}
	return out
}

// hubspotRows are the site's outbox rows of the HubSpot worker.
func (f *fixture) hubspotRows() []*model.Delivery {
	f.t.Helper()
	all, err := f.db.DeliveryList(f.ctx, store.DeliveryFilter{Site: f.site.ID, Limit: 1000})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []*model.Delivery
	for _, d := range all {
		if d.Destination == hubspot.Name {
			out = append(out, d)
		}
	}
	return out
}

func (f *fixture) stages() []model.LeadStage {
	f.t.Helper()
	st, err := f.db.LeadStagesByLead(f.ctx, f.lead.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	return st
}

func customData(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var ev struct {
		CustomData map[string]any `json:"custom_data"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	return ev.CustomData
}

// TestDealStagesReachMeta: a deal moved to the meeting stage in HubSpot
// reaches Meta as the site's meeting event of the lead found by the
// contact's e-mail, at the change's time; the deal won reaches it as
// Purchase with the deal's amount and currency.
func TestDealStagesReachMeta(t *testing.T) {
	f := newFixture(t, "")
	met := f.clk.Now().Add(-20 * time.Minute)
	if code, body := f.post(hubspottest.DealStage(1001, "9001", "appointmentscheduled", met)); code != 200 || !strings.Contains(body, `"queued":1`) {
		t.Fatalf("webhook: %d %s", code, body)
	}
	f.run(3)
	got := f.sent("Schedule")
	if len(got) != 1 {
		t.Fatalf("Meta got %d Schedule events, want 1 (all: %+v)", len(got), f.g.Events())
	}
	st := f.stages()
	if len(st) != 1 || st[0].Stage != "meeting" || !st[0].At.Equal(met) || got[0].EventID != st[0].EventID {
		t.Fatalf("stages %+v, Meta event id %s", st, got[0].EventID)
	}

	f.hs.AddDeal(hubspottest.Deal{ID: "9001", Stage: "closedwon", Amount: "12500.50", Currency: "try", Contacts: []string{"501"}})
	if code, body := f.post(hubspottest.DealStage(1002, "9001", "closedwon", f.clk.Now().Add(-time.Minute))); code != 200 {
		t.Fatalf("webhook: %d %s", code, body)
	}
	f.run(3)
	won := f.sent("Purchase")
	if len(won) != 1 {
		t.Fatalf("Meta got %d Purchase events, want 1", len(won))
	}
	cd := customData(t, won[0].JSON)
	if cd["value"] != 12500.5 || cd["currency"] != "TRY" {
		t.Errorf("Purchase custom_data %v: want value 12500.5 TRY", cd)
	}
	for _, d := range f.hubspotRows() {
		if d.State != model.DeliverySent {
			t.Errorf("row %s is %s (%s), want sent", d.EventID, d.State, d.LastError)
		}
	}
}

// TestLifecycleStageFoundByLeadID: a contact's lifecycle stage finds its
// lead by the lead id property, whatever its e-mail.
func TestLifecycleStageFoundByLeadID(t *testing.T) {
	f := newFixture(t, "")
	f.hs.AddContact(hubspottest.Contact{ID: "777", Email: "someone.else@example.com",
		Props: map[string]string{"cleanads_lead_id": string(f.lead.ID)}})
	if code, body := f.post(hubspottest.Lifecycle(2001, "777", "salesqualifiedlead", f.clk.Now().Add(-time.Minute))); code != 200 {
		t.Fatalf("webhook: %d %s", code, body)
	}
	f.run(3)
	if st := f.stages(); len(st) != 1 || st[0].Stage != "meeting" {
		t.Fatalf("stages %+v, want meeting", st)
	}
}

// TestUnsignedPostsStoreNothing: a wrong signature, a missing one, a
// correct signature over an old timestamp (a replay) and one over another
// address are refused, and nothing is queued.
func TestUnsignedPostsStoreNothing(t *testing.T) {
	f := newFixture(t, "")
	body := hubspottest.Body(hubspottest.DealStage(1001, "9001", "appointmentscheduled", f.clk.Now()))
	cases := []struct {
		name              string
		signed, secret    string
		at                time.Time
		noSignature, want bool
	}{
		{name: "wrong secret", signed: f.url(), secret: "another-secret", at: f.clk.Now()},
		{name: "replay", signed: f.url(), secret: hubspottest.ClientSecret, at: f.clk.Now().Add(-6 * time.Minute)},
		{name: "other address", signed: "https://evil.example/v1/webhooks/hubspot/dent", secret: hubspottest.ClientSecret, at: f.clk.Now()},
		{name: "other site", signed: f.srv.URL + "/v1/webhooks/hubspot/other", secret: hubspottest.ClientSecret, at: f.clk.Now()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, answer := hubspottest.Post(t, f.url(), c.signed, c.secret, body, c.at)
			if code != http.StatusUnauthorized {
				t.Errorf("answered %d %s, want 401", code, answer)
			}
		})
	}
	resp, err := http.Post(f.url(), "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("unsigned post answered %d, want 401", resp.StatusCode)
	}
	if rows := f.hubspotRows(); len(rows) != 0 {
		t.Errorf("%d rows queued from refused posts", len(rows))
	}
	// The same body, signed, is taken: the refusals were the signature's.
	if code, _ := f.post(hubspottest.DealStage(1001, "9001", "appointmentscheduled", f.clk.Now())); code != 200 {
		t.Errorf("signed post answered %d", code)
	}
}

// TestPublicURL: behind a proxy HubSpot signs the public address, which
// the server rebuilds from public_url; without it such a post is refused.
func TestPublicURL(t *testing.T) {
	const public = "https://ads.example.com"
	for _, c := range []struct {
		name, publicURL string
		want            int
	}{{"public_url set", public, 200}, {"public_url unset", "", 401}} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.publicURL)
			body := hubspottest.Body(hubspottest.DealStage(1001, "9001", "appointmentscheduled", f.clk.Now()))
			code, answer := hubspottest.Post(t, f.url(), public+"/v1/webhooks/hubspot/dent", hubspottest.ClientSecret, body, f.clk.Now())
			if code != c.want {
				t.Errorf("answered %d %s, want %d", code, answer, c.want)
			}
		})
	}
}

// TestSameEventTwice: HubSpot's retry of an event (same eventId) records
// nothing more, and an ignored event is counted.
func TestSameEventTwice(t *testing.T) {
	f := newFixture(t, "")
	ev := hubspottest.DealStage(1001, "9001", "appointmentscheduled", f.clk.Now().Add(-time.Minute))
	other := hubspottest.DealStage(1003, "9001", "presentationscheduled", f.clk.Now())
	if code, body := f.post(ev, other); code != 200 || !strings.Contains(body, `"ignored":1`) {
		t.Fatalf("webhook: %d %s", code, body)
	}
	f.run(2)
	ev.AttemptNumber = 1
	if code, body := f.post(ev); code != 200 || !strings.Contains(body, `"duplicates":1`) {
		t.Fatalf("retry: %d %s", code, body)
	}
	f.run(3)
	if n := len(f.sent("Schedule")); n != 1 {
		t.Errorf("Meta got %d Schedule events, want 1", n)
	}
	if n := len(f.hubspotRows()); n != 1 {
		t.Errorf("%d HubSpot rows, want 1", n)
	}
}

// TestOutageRetried: while HubSpot answers 503 the change waits and is
// retried; it arrives once when HubSpot is back.
func TestOutageRetried(t *testing.T) {
	f := newFixture(t, "")
	f.hs.FailNext(3, http.StatusServiceUnavailable, 0)
	if code, _ := f.post(hubspottest.DealStage(1001, "9001", "appointmentscheduled", f.clk.Now().Add(-time.Minute))); code != 200 {
		t.Fatal(code)
	}
	if _, err := f.runner.RunOnce(f.ctx); err != nil {
		t.Fatal(err)
	}
	rows := f.hubspotRows()
	if len(rows) != 1 || rows[0].State != model.DeliveryRetry || !strings.Contains(rows[0].LastError, "HubSpot failed (503)") {
		t.Fatalf("after the first try: %+v", rows[0])
	}
	for i := 0; i < 10 && len(f.sent("Schedule")) == 0; i++ {
		f.clk.Add(30 * time.Minute)
		if _, err := f.runner.RunOnce(f.ctx); err != nil {
			t.Fatal(err)
		}
	}
	f.run(2)
	if f.hs.Failing() != 0 {
		t.Errorf("the outage was not waited out")
	}
	if n := len(f.sent("Schedule")); n != 1 {
		t.Errorf("Meta got %d Schedule events, want 1", n)
	}
}

// TestThrottledWaitsRetryAfter: a 429 holds the row at least Retry-After.
func TestThrottledWaitsRetryAfter(t *testing.T) {
	f := newFixture(t, "")
	f.hs.FailNext(1, http.StatusTooManyRequests, 600)
	f.post(hubspottest.DealStage(1001, "9001", "appointmentscheduled", f.clk.Now().Add(-time.Minute)))
	now := f.clk.Now()
	if _, err := f.runner.RunOnce(f.ctx); err != nil {
		t.Fatal(err)
	}
	d := f.hubspotRows()[0]
	if d.State != model.DeliveryRetry || d.NextAt.Before(now.Add(600*time.Second)) {
		t.Errorf("row %s next at %v, want retry no sooner than %v", d.State, d.NextAt, now.Add(600*time.Second))
	}
}

// TestRevokedTokenPauses: a 401 parks the site's HubSpot rows with plain
// words until the owner mends the token.
func TestRevokedTokenPauses(t *testing.T) {
	f := newFixture(t, "")
	f.hs.FailNext(1, http.StatusUnauthorized, 0)
	f.post(hubspottest.DealStage(1001, "9001", "appointmentscheduled", f.clk.Now().Add(-time.Minute)))
	if _, err := f.runner.RunOnce(f.ctx); err != nil {
		t.Fatal(err)
	}
	reason, err := f.db.DestinationPauseReason(f.ctx, model.Share{Site: f.site.ID, Destination: hubspot.Name})
	if err != nil || !strings.HasPrefix(reason, "HubSpot refused the access token: ") {
		t.Errorf("pause %q (%v)", reason, err)
	}
	if d := f.hubspotRows()[0]; d.State != model.DeliveryPaused {
		t.Errorf("row is %s, want paused", d.State)
	}
}

// TestNoLeadEnds: a contact no lead has ends its row with the reason, once.
func TestNoLeadEnds(t *testing.T) {
	f := newFixture(t, "")
	f.hs.AddContact(hubspottest.Contact{ID: "888", Email: "nobody@example.com", Phone: "+90 212 555 00 00"})
	f.post(hubspottest.Lifecycle(3001, "888", "salesqualifiedlead", f.clk.Now().Add(-time.Minute)))
	f.run(3)
	d := f.hubspotRows()[0]
	if d.State != model.DeliveryDead || d.LastError != "no lead of this site has the e-mail/phone of HubSpot contact 888" {
		t.Errorf("row %s: %q", d.State, d.LastError)
	}
}

// TestOutOfOrder: won arrives before the meeting that came first; each
// is recorded at its own time.
func TestOutOfOrder(t *testing.T) {
	f := newFixture(t, "")
	met, won := f.clk.Now().Add(-30*time.Minute), f.clk.Now().Add(-10*time.Minute)
	f.post(hubspottest.DealStage(1002, "9001", "closedwon", won))
	f.run(2)
	f.post(hubspottest.DealStage(1001, "9001", "appointmentscheduled", met))
	f.run(3)
	at := map[string]time.Time{}
	for _, s := range f.stages() {
		at[s.Stage] = s.At
	}
	if !at["meeting"].Equal(met) || !at["won"].Equal(won) {
		t.Errorf("stages at %v, want meeting %v and won %v", at, met, won)
	}
	if len(f.sent("Schedule")) != 1 || len(f.sent("Purchase")) != 1 {
		t.Errorf("Meta got %d Schedule and %d Purchase, want 1 each", len(f.sent("Schedule")), len(f.sent("Purchase")))
	}
}

// TestSendTest: the test reads a contact with the token; a refused token
// is said in plain words.
func TestSendTest(t *testing.T) {
	f := newFixture(t, "")
	c := f.src.(platform.Configurable)
	res, err := c.SendTest(f.ctx, f.site)
	if err != nil || !strings.Contains(string(res.Answer), "results") {
		t.Fatalf("SendTest: %v %+v", err, res)
	}
	bad := *f.site
	bad.Secrets = map[string]string{platform.SecretName(hubspot.Name, hubspot.SecretAccessToken): "pat-revoked"}
	if _, err := c.SendTest(f.ctx, &bad); err == nil || !strings.Contains(err.Error(), "HubSpot refused the access token") {
		t.Errorf("SendTest with a bad token: %v", err)
	}
}

// TestValidate: what the owner must give, each on its field.
func TestValidate(t *testing.T) {
	c := hubspot.New(source.Deps{}).(platform.Configurable)
	site := testkit.Site(func(s *model.Site) {
		s.Settings.Platforms = map[string]json.RawMessage{hubspot.Name: json.RawMessage(`{"lead_id_property":"Lead ID"}`)}
	})
	got := map[string]bool{}
	for _, e := range c.Validate(site) {
		got[e.Key] = true
	}
	for _, k := range []string{hubspot.SecretAccessToken, hubspot.SecretClientSecret, "deal_stages", "lead_id_property"} {
		if !got[k] {
			t.Errorf("no problem on %s: %v", k, got)
		}
	}
	if c.On(site) {
		t.Error("On without a token")
	}
	if errs := c.Validate(testkit.Site()); len(errs) != 0 {
		t.Errorf("a site without HubSpot has problems: %v", errs)
	}
}

// TestValidateStages: a mapping to a stage the site lacks is refused on
// its field when saved, not dead-lettered when a deal reaches it.
func TestValidateStages(t *testing.T) {
	f := newFixture(t, "")
	site := *f.site
	if errs := f.src.(platform.Configurable).Validate(&site); len(errs) != 0 {
		t.Fatalf("the fixture's mapping has problems: %v", errs)
	}
	doc, _ := json.Marshal(hubspot.Settings{DealStages: map[string]string{"closedwon": "wonn"}})
	site.Settings.Platforms = map[string]json.RawMessage{hubspot.Name: doc}
	errs := f.src.(platform.Configurable).Validate(&site)
	if len(errs) != 1 || errs[0].Key != "deal_stages" || errs[0].Message != source.UnknownStage {
		t.Errorf("a stage the site lacks: %v", errs)
	}
}
