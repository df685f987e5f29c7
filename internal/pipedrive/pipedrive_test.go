package pipedrive_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/pipedrive"
	"github.com/cleanads/cleanads/internal/pipedrive/pipedrivetest"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/source"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
	"github.com/cleanads/cleanads/internal/web"
)

const (
	hookUser = "cleanads-hook"
	hookPass = "a-long-webhook-password-42"
	// meetingStage is the Pipedrive stage id the site maps to "meeting".
	meetingStage = 7
)

// fixture is a real store and app on one fake clock, Meta's stand-in, the
// Pipedrive stand-in with two persons and their deals, the Pipedrive
// source mounted in the web server, and a runner with Meta's rows and the
// source's worker.
type fixture struct {
	ctx    context.Context
	db     *store.DB
	g      *graphtest.Server
	pd     *pipedrivetest.Server
	clk    *testkit.Clock
	site   *model.Site
	svc    *app.Service
	src    *pipedrive.Source
	runner *deliver.Runner
	url    string
	ayse   *model.Lead // person 1's lead: found by e-mail
	mehmet *model.Lead // person 2's lead: found by phone
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{ctx: context.Background(), db: storetest.New(t), g: graphtest.New(t), pd: pipedrivetest.New(t),
		clk: testkit.NewClock(time.Now().UTC().Truncate(time.Second))}
	f.g.SetNow(f.clk.Now)
	f.pd.SetNow(f.clk.Now)
	doc, _ := json.Marshal(pipedrive.Settings{Stages: map[string]string{"7": "meeting"}, Won: "won", User: hookUser})
	f.site = testkit.AddSite(t, f.db, testkit.Site(testkit.WithMeta("111222333", model.ModeLive), func(s *model.Site) {
		s.AccessToken = graphtest.Token
		s.Settings.Meta.Stages = map[string]model.StageEvent{"meeting": {Event: "Schedule"}, "won": {Event: "Purchase"}}
		s.Settings.Platforms = map[string]json.RawMessage{pipedrive.Name: doc}
		s.Secrets = map[string]string{"pipedrive.api_token": pipedrivetest.Token, "pipedrive.webhook_password": hookPass}
	}), f.clk.Now())
	client := capi.NewClient(capi.ClientOptions{BaseURL: f.g.URL, HTTP: f.g.Client(), Now: f.clk.Now})
	f.svc = app.New(app.Options{Store: f.db, Now: f.clk.Now, Graph: client})
	f.src = pipedrive.New(source.Deps{Deps: platform.Deps{Now: f.clk.Now, Endpoints: map[string]string{pipedrive.Name: f.pd.URL}},
		App: f.svc, Sites: f.db, Pauses: f.db}).(*pipedrive.Source)
	f.runner = deliver.New(deliver.Options{Store: f.db, Sender: client, Now: f.clk.Now, Node: "node-a",
		Jitter: func() float64 { return 0.5 }, Handlers: map[string]deliver.Handler{pipedrive.Name: f.src.Handler()}})
	srv := httptest.NewServer(web.New(web.Options{App: f.svc, Store: f.db, Now: f.clk.Now, Sources: []source.Source{f.src}}).Handler())
	t.Cleanup(srv.Close)
	f.url = srv.URL + "/v1/webhooks/pipedrive/dent"

	f.ayse = f.submit(t, "ayse.yilmaz@gmail.com", "+905324120001")
	f.mehmet = f.submit(t, "mehmet.kaya@gmail.com", "+905324120002")
	f.run(t) // the leads' own events
	f.pd.AddPerson(pipedrivetest.Person{ID: 1, Name: "Ayşe Yılmaz", Emails: []string{" Ayse.Yilmaz@Gmail.com"}})
	f.pd.AddPerson(pipedrivetest.Person{ID: 2, Name: "Mehmet Kaya", Phones: []string{"0532 412 00 02"}})
	f.pd.AddPerson(pipedrivetest.Person{ID: 3, Name: "Stranger", Emails: []string{"stranger@example.com"}})
	f.pd.AddDeal(pipedrivetest.Deal{ID: 10, Title: "Implant", PersonID: 1, StageID: 1, Value: 900, Currency: "TRY"})
	f.pd.AddDeal(pipedrivetest.Deal{ID: 11, Title: "Whitening", PersonID: 2, StageID: 1, Value: 0, Currency: "TRY"})
	f.pd.AddDeal(pipedrivetest.Deal{ID: 12, Title: "Unknown", PersonID: 3, StageID: 1})
	return f
}

func (f *fixture) submit(t *testing.T, email, phone string) *model.Lead {
	t.Helper()
	l, _, err := f.svc.Submit(f.ctx, f.site, &app.LeadInput{Email: email, Phone: phone, Name: "Test Lead",
		Message: "Implant tedavisi için randevu almak istiyorum, hafta içi akşam uygunum.", Confirmed: true})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func (f *fixture) run(t *testing.T) deliver.Stats {
	t.Helper()
	st, err := f.runner.RunOnce(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// post posts the webhook with the site's credentials and wants 200.
func (f *fixture) post(t *testing.T, w pipedrivetest.Webhook) pipedrive.Answer {
	t.Helper()
	code, body, err := pipedrivetest.Post(f.url, hookUser, hookPass, w)
	if err != nil || code != 200 {
		t.Fatalf("webhook: %d %s %v", code, body, err)
	}
	var a pipedrive.Answer
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// rows are the site's deliveries of destination.
func (f *fixture) rows(t *testing.T, destination string) []*model.Delivery {
	t.Helper()
	all, err := f.db.DeliveryList(f.ctx, store.DeliveryFilter{Site: "dent", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var out []*model.Delivery
	for _, d := range all {
		if d.Destination == destination || destination == model.DestinationMeta && d.Destination == "" {
			out = append(out, d)
		}
	}
	return out
}

// metaStage is the Meta row of the lead's stage, and the events Meta took
// with its id.
func (f *fixture) metaStage(t *testing.T, lead *model.Lead, stage string) (*model.Delivery, []graphtest.Received) {
	t.Helper()
	var row *model.Delivery
	for _, d := range f.rows(t, model.DestinationMeta) {
		if d.LeadID == lead.ID && d.Kind == model.KindStage+":"+stage {
			if row != nil {
				t.Fatalf("two Meta rows of %s's stage %s", lead.ID, stage)
			}
			row = d
		}
	}
	if row == nil {
		return nil, nil
	}
	var got []graphtest.Received
	for _, r := range f.g.Events() {
		if r.EventID == row.EventID {
			got = append(got, r)
		}
	}
	return row, got
}

func TestDealStagesReachMeta(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if a := f.post(t, f.pd.Move(10, meetingStage)); a.Queued != 1 {
		t.Fatalf("move: %+v, want 1 queued", a)
	}
	if a := f.post(t, f.pd.Win(11, 1500, "TRY")); a.Queued != 1 {
		t.Fatalf("win: %+v, want 1 queued", a)
	}
	f.run(t) // the worker records the stages
	f.run(t) // Meta's rows are sent
	row, got := f.metaStage(t, f.ayse, "meeting")
	if row == nil || len(got) != 1 || got[0].EventName != "Schedule" {
		t.Fatalf("meeting of the lead found by e-mail: row %+v, Meta got %+v", row, got)
	}
	row, got = f.metaStage(t, f.mehmet, "won")
	if row == nil || len(got) != 1 || got[0].EventName != "Purchase" {
		t.Fatalf("won of the lead found by phone: row %+v, Meta got %+v", row, got)
	}
	var ev capi.Event
	if err := json.Unmarshal(got[0].JSON, &ev); err != nil {
		t.Fatal(err)
	}
	if v, _ := ev.CustomData["value"].(float64); v != 1500 || ev.CustomData["currency"] != "TRY" {
		t.Errorf("won event's custom data %+v, want 1500 TRY", ev.CustomData)
	}
	for _, d := range f.rows(t, pipedrive.Name) {
		if d.State != model.DeliverySent {
			t.Errorf("job %s: %s %s", d.Kind, d.State, d.LastError)
		}
	}
	// The other lead got no stage.
	if row, _ := f.metaStage(t, f.mehmet, "meeting"); row != nil {
		t.Errorf("meeting recorded on the wrong lead")
	}
}

func TestWrongCredentialsStoreNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	w := f.pd.Move(10, meetingStage)
	for _, c := range []struct{ user, pass string }{
		{"", ""}, {hookUser, "wrong-password-wrong"}, {"someone", hookPass}, {hookUser, hookPass + "x"}, {hookUser, ""},
	} {
		code, body, err := pipedrivetest.Post(f.url, c.user, c.pass, w)
		if err != nil || code != 401 {
			t.Errorf("%q/%q: %d %s %v, want 401", c.user, c.pass, code, body, err)
		}
	}
	// Not even a malformed body is read without the credentials.
	code, _, _ := pipedrivetest.Post(f.url, "x", "y", pipedrivetest.Webhook{Body: []byte("{not json")})
	if code != 401 {
		t.Errorf("malformed body without credentials: %d, want 401", code)
	}
	if rows := f.rows(t, pipedrive.Name); len(rows) != 0 {
		t.Errorf("%d jobs stored from refused webhooks", len(rows))
	}
	// Another site's URL with these credentials is not found.
	code, _, _ = pipedrivetest.Post(strings.Replace(f.url, "/dent", "/other", 1), hookUser, hookPass, w)
	if code != 404 {
		t.Errorf("unknown site: %d, want 404", code)
	}
}

func TestOutageIsRetriedAndArrivesOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.pd.FailNext(1, 503)
	f.post(t, f.pd.Move(10, meetingStage))
	st := f.run(t)
	if st.Retry != 1 {
		t.Fatalf("during the outage: %+v, want 1 retried", st)
	}
	if row, _ := f.metaStage(t, f.ayse, "meeting"); row != nil {
		t.Fatal("stage recorded during the outage")
	}
	f.pd.FailNext(1, 429)
	f.clk.Add(time.Hour)
	if st := f.run(t); st.Retry != 1 {
		t.Fatalf("throttled: %+v, want 1 retried", st)
	}
	f.clk.Add(time.Hour)
	f.run(t)
	f.run(t)
	f.clk.Add(time.Hour)
	f.run(t)
	if _, got := f.metaStage(t, f.ayse, "meeting"); len(got) != 1 {
		t.Fatalf("Meta got the meeting %d times, want once", len(got))
	}
}

func TestRevokedTokenPauses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.pd.FailNext(1, 401)
	f.post(t, f.pd.Move(10, meetingStage))
	if st := f.run(t); st.Paused != 1 {
		t.Fatalf("%+v, want 1 paused", st)
	}
	reason, err := f.db.DestinationPauseReason(f.ctx, model.Share{Site: "dent", Destination: pipedrive.Name})
	if err != nil || !strings.Contains(reason, "API token") {
		t.Errorf("pause %q %v, want words about the API token", reason, err)
	}
}

func TestDuplicatePostRecordsOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	w := f.pd.Move(10, meetingStage)
	f.post(t, w)
	if a := f.post(t, w); a.Queued != 0 {
		t.Errorf("redelivery: %+v, want nothing queued", a)
	}
	f.run(t)
	f.run(t)
	if _, got := f.metaStage(t, f.ayse, "meeting"); len(got) != 1 {
		t.Fatalf("Meta got the meeting %d times, want once", len(got))
	}
	if n := len(f.rows(t, pipedrive.Name)); n != 1 {
		t.Errorf("%d jobs, want 1", n)
	}
}

func TestNoLeadEndsWithANote(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.post(t, f.pd.Move(12, meetingStage))
	f.run(t)
	rows := f.rows(t, pipedrive.Name)
	if len(rows) != 1 || rows[0].State != model.DeliveryDead || !strings.Contains(rows[0].LastError, "no lead") {
		t.Fatalf("job %+v, want dead with a note saying no lead matched", rows[0])
	}
}

func TestIgnoredAndRefusedBodies(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// A stage no one mapped, a renamed deal, a person: answered 200 and
	// counted as ignored.
	for _, body := range []string{
		`{"meta":{"action":"change","entity":"deal","version":"2.0","id":"e1","timestamp":"2026-01-01T00:00:00Z"},"data":{"id":10,"stage_id":99,"status":"open"},"previous":{"stage_id":1}}`,
		`{"meta":{"action":"change","entity":"deal","version":"2.0","id":"e2"},"data":{"id":10,"stage_id":7,"status":"open","title":"New"},"previous":{"title":"Old"}}`,
		`{"meta":{"action":"change","entity":"person","version":"2.0","id":"e3"},"data":{"id":1},"previous":{"name":"x"}}`,
		`{"meta":{"action":"delete","entity":"deal","version":"2.0","id":"e4"},"data":null,"previous":{"id":10}}`,
	} {
		a := f.post(t, pipedrivetest.Webhook{Body: []byte(body)})
		if a.Queued != 0 || a.Ignored != 1 || a.Note == "" {
			t.Errorf("%s: %+v, want ignored with a note", body, a)
		}
	}
	// A webhooks v1 body is refused with words that say what to do.
	v1 := `{"v":1,"event":"updated.deal","meta":{"v":1,"action":"updated","object":"deal","id":10},"current":{"id":10,"stage_id":7},"previous":{"id":10,"stage_id":1}}`
	code, body, _ := pipedrivetest.Post(f.url, hookUser, hookPass, pipedrivetest.Webhook{Body: []byte(v1)})
	if code != 400 || !strings.Contains(body, "version 2.0") {
		t.Errorf("v1 body: %d %s, want 400 asking for version 2.0", code, body)
	}
	if n := len(f.rows(t, pipedrive.Name)); n != 0 {
		t.Errorf("%d jobs, want none", n)
	}
}

func TestSettings(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if !f.src.On(f.site) {
		t.Fatal("a complete site is not on")
	}
	if errs := f.src.Validate(f.site); len(errs) != 0 {
		t.Errorf("valid settings refused: %v", errs)
	}
	res, err := f.src.SendTest(f.ctx, f.site)
	if err != nil || !strings.Contains(string(res.Answer), "Test Owner") {
		t.Errorf("test: %+v %v", res, err)
	}
	bad := *f.site
	bad.Secrets = map[string]string{"pipedrive.api_token": "revoked", "pipedrive.webhook_password": "short"}
	doc, _ := json.Marshal(pipedrive.Settings{Stages: map[string]string{"meeting": "7"}, User: hookUser, Domain: "Acme.pipedrive.com"})
	bad.Settings.Platforms = map[string]json.RawMessage{pipedrive.Name: doc}
	keys := map[string]bool{}
	for _, e := range f.src.Validate(&bad) {
		keys[e.Key] = true
	}
	for _, k := range []string{pipedrive.KeyStages, pipedrive.KeyDomain, pipedrive.KeyPassword} {
		if !keys[k] {
			t.Errorf("no problem named for %s: %v", k, keys)
		}
	}
	bad.Settings.Platforms = f.site.Settings.Platforms
	if _, err := f.src.SendTest(f.ctx, &bad); platform.Classify(err).Class != platform.Paused {
		t.Errorf("revoked token's test: %v, want a pause", err)
	}
}
