package outhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/outhook"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// receiver is a CRM's endpoint written from docs/webhooks.md alone: it
// verifies the signature as the docs say, and keeps each event id once.
type receiver struct {
	t      *testing.T
	secret string
	now    func() time.Time
	mu     sync.Mutex
	// fail answers 503 to a post while it says so.
	fail  func(ev map[string]any) bool
	got   []map[string]any
	seen  map[string]int
	bad   int
	posts int
	srv   *httptest.Server
}

// verify is the docs' Go example, as a receiver would copy it.
func verify(secret, header string, body []byte, now time.Time) bool {
	var ts, sig string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || now.Sub(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	return hmac.Equal([]byte(sig), []byte(hex.EncodeToString(m.Sum(nil))))
}

func newReceiver(t *testing.T, now func() time.Time) *receiver {
	rc := &receiver{t: t, now: now, seen: map[string]int{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.posts++
		if !verify(rc.secret, r.Header.Get("CleanAds-Signature"), body, rc.now()) {
			rc.bad++
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var ev map[string]any
		if err := json.Unmarshal(body, &ev); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		if r.Header.Get("CleanAds-Event") != ev["type"] || r.Header.Get("CleanAds-Event-Id") != ev["id"] {
			http.Error(w, "headers do not match the body", http.StatusBadRequest)
			return
		}
		if rc.fail != nil && rc.fail(ev) {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		id := ev["id"].(string)
		rc.seen[id]++
		if rc.seen[id] == 1 {
			rc.got = append(rc.got, ev)
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) events() []map[string]any {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

type fixture struct {
	t      *testing.T
	ctx    context.Context
	db     *store.DB
	clk    *testkit.Clock
	svc    *app.Service
	runner *deliver.Runner
	site   *model.Site
	rc     *receiver
	ep     *model.WebhookEndpoint
}

func newFixture(t *testing.T, events ...string) *fixture {
	t.Helper()
	f := &fixture{t: t, ctx: context.Background(), db: storetest.New(t),
		clk: testkit.NewClock(time.Now().UTC().Truncate(time.Second))}
	f.site = testkit.AddSite(t, f.db, testkit.Site(func(s *model.Site) {
		s.Settings.Meta.Stages = map[string]model.StageEvent{"meeting": {Event: "Schedule"}, "won": {Event: "Purchase"}}
	}), f.clk.Now())
	f.svc = app.New(app.Options{Store: f.db, Now: f.clk.Now})
	f.runner = deliver.New(deliver.Options{Store: f.db, Now: f.clk.Now, Node: "node-a", Jitter: func() float64 { return 0.5 },
		Handlers: map[string]deliver.Handler{model.DestinationWebhook: outhook.NewWorker(f.svc, nil, nil)}})
	f.rc = newReceiver(t, f.clk.Now)
	if len(events) == 0 {
		events = model.HookEvents
	}
	ep, err := f.svc.WebhookAdd(f.ctx, f.site.ID, f.rc.srv.URL+"/hook", events)
	if err != nil {
		t.Fatal(err)
	}
	f.ep, f.rc.secret = ep, ep.Secret
	return f
}

// run runs the runner n rounds, moving the clock past each backoff.
func (f *fixture) run(n int) {
	f.t.Helper()
	for range n {
		if _, err := f.runner.RunOnce(f.ctx); err != nil {
			f.t.Fatal(err)
		}
		f.clk.Add(10 * time.Minute)
	}
}

func (f *fixture) lead(eventID, phone, message string) *model.Lead {
	f.t.Helper()
	fill := int64(40000)
	l, _, err := f.svc.Submit(f.ctx, f.site, &app.LeadInput{EventID: eventID, Email: eventID + "@example.com", Phone: phone,
		Name: "Ayşe Yılmaz", Message: message, PageURL: testkit.Origin + "/implant", UserAgent: "Mozilla/5.0",
		ClientIP: "203.0.113.1", FillMS: &fill})
	if err != nil {
		f.t.Fatal(err)
	}
	return l
}

func (f *fixture) event(id model.LeadID, in *app.LeadEventInput) {
	f.t.Helper()
	if _, err := f.svc.AddLeadEvent(f.ctx, f.site, id, in); err != nil {
		f.t.Fatal(err)
	}
}

func TestSignedPostVerifiesFromTheDocs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	l := f.lead("e1", "05324128719", "Implant tedavisi için randevu almak istiyorum, hafta içi akşam uygunum.")
	f.clk.Add(time.Minute)
	won := 12500.5
	f.event(l.ID, &app.LeadEventInput{Type: app.TypeStage, Stage: "won", Value: &won, Currency: "TRY"})
	f.run(2)
	got := f.rc.events()
	if f.rc.bad != 0 {
		t.Fatalf("%d posts failed the docs' verification", f.rc.bad)
	}
	var types []string
	for _, ev := range got {
		types = append(types, ev["type"].(string))
		lead := ev["lead"].(map[string]any)
		if lead["id"] != string(l.ID) || ev["site"] != "dent" || lead["email"] != "e1@example.com" {
			t.Errorf("event %v: wrong lead or site", ev)
		}
		if _, err := time.Parse(time.RFC3339, ev["occurred_at"].(string)); err != nil {
			t.Errorf("occurred_at: %v", err)
		}
	}
	first := got[0]["lead"].(map[string]any)
	if _, ok := first["reasons"].([]any); !ok || first["verdict"] == "" {
		t.Errorf("lead.received carries no verdict or reasons: %v", first)
	}
	stage := got[len(got)-1]["stage"].(map[string]any)
	if stage["name"] != "won" || stage["value"] != 12500.5 || stage["currency"] != "TRY" {
		t.Errorf("stage = %v", stage)
	}
	// The stage made a review lead clean: received, verdict, qualified, stage.
	want := []string{model.HookLeadReceived, model.HookVerdictChange, model.HookQualified, model.HookStage}
	if first["verdict"] == "clean" {
		want = []string{model.HookLeadReceived, model.HookQualified, model.HookStage}
	}
	if !slices.Equal(types, want) {
		t.Errorf("types = %v, want %v", types, want)
	}
	// Each post is listed with its answer.
	ds, err := f.svc.WebhookDeliveries(f.ctx, f.site.ID, 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.State != model.DeliverySent || !strings.Contains(string(d.Response), `"status":200`) {
			t.Errorf("delivery %s: %s %s", d.ID, d.State, d.Response)
		}
	}
	// A signature made with another secret, or over another body, fails.
	body := []byte(`{"id":"evt_x"}`)
	h := outhook.Sign(f.ep.Secret, f.clk.Now(), body)
	if !verify(f.ep.Secret, h, body, f.clk.Now()) || verify("whsec_other", h, body, f.clk.Now()) ||
		verify(f.ep.Secret, h, []byte(`{"id":"evt_y"}`), f.clk.Now()) || verify(f.ep.Secret, h, body, f.clk.Now().Add(10*time.Minute)) {
		t.Error("the docs' verification accepts what it must refuse")
	}
	if err := outhook.Verify(f.ep.Secret, h, body, f.clk.Now(), outhook.Tolerance); err != nil {
		t.Error(err)
	}
}

// A receiver down for a while gets every event once, and a lead's events
// in the order they happened, even when only that lead's first post fails.
func TestReceiverDownGetsEveryEventOnceInOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	down, again := true, 3
	var firstLead string
	f.rc.fail = func(ev map[string]any) bool {
		if down {
			return true
		}
		// Afterwards the first lead's first event fails a few more times
		// while the other leads' go through.
		lead, _ := ev["lead"].(map[string]any)
		if lead != nil && lead["id"] == firstLead && ev["type"] == model.HookLeadReceived && again > 0 {
			again--
			return true
		}
		return false
	}
	var leads []*model.Lead
	for i, phone := range []string{"05324128719", "05335550101", "05421234567"} {
		l := f.lead("e"+strconv.Itoa(i), phone, "Implant tedavisi için randevu almak istiyorum, hafta içi akşam uygunum.")
		leads = append(leads, l)
		f.run(1)
	}
	firstLead = string(leads[0].ID)
	for _, l := range leads {
		f.event(l.ID, &app.LeadEventInput{Type: "customer"})
		f.run(1)
		f.event(l.ID, &app.LeadEventInput{Type: app.TypeStage, Stage: "meeting"})
		f.run(1)
	}
	if n := len(f.rc.events()); n != 0 {
		t.Fatalf("the receiver took %d events while down", n)
	}
	down = false
	f.run(30)
	got := f.rc.events()
	queued, err := f.svc.WebhookDeliveries(f.ctx, f.site.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(queued) {
		t.Fatalf("received %d events, queued %d", len(got), len(queued))
	}
	for id, n := range f.rc.seen {
		if n != 1 {
			t.Errorf("event %s taken %d times", id, n)
		}
	}
	// Per lead, the order received is the order queued (oldest first).
	byLead := map[string][]string{}
	for _, ev := range got {
		lead := ev["lead"].(map[string]any)["id"].(string)
		byLead[lead] = append(byLead[lead], ev["id"].(string))
	}
	wantLead := map[string][]string{}
	for i := len(queued) - 1; i >= 0; i-- {
		d := queued[i]
		if d.State != model.DeliverySent {
			t.Errorf("post %s is %s: %s", d.ID, d.State, d.LastError)
		}
		id, _, _ := strings.Cut(d.EventID, ".")
		wantLead[string(d.LeadID)] = append(wantLead[string(d.LeadID)], id)
	}
	for lead, want := range wantLead {
		if !slices.Equal(byLead[lead], want) {
			t.Errorf("lead %s: received %v, queued %v", lead, byLead[lead], want)
		}
	}
	// The first lead's first event was refused again after the receiver
	// came back, and its later events still came after it (above).
	if again != 0 {
		t.Errorf("the first lead's first event was refused %d times fewer than planned", again)
	}
}

func TestBadURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ url, want string }{
		{"", "give the address"},
		{"example.com/hook", "full address"},
		{"http://example.com/hook", "must use https"},
		{"ftp://example.com/hook", "must start with https"},
		{"https://user:pw@example.com/hook", "user or password"},
		{"https://example.com/hook#x", "fragment"},
	} {
		_, err := app.CheckHookURL(tc.url)
		var inv *model.InputError
		if !errors.As(err, &inv) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an invalid url saying %q", tc.url, err, tc.want)
		}
	}
	for _, ok := range []string{"https://hooks.zapier.com/hooks/catch/1/abc/", "http://localhost:8080/x", "http://127.0.0.1/x", "http://[::1]:9/x"} {
		if _, err := app.CheckHookURL(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	f := newFixture(t)
	if _, err := f.svc.WebhookAdd(f.ctx, f.site.ID, "https://example.com/h", []string{"lead.nope"}); err == nil {
		t.Error("an unknown event was taken")
	}
	eps, _ := f.svc.Webhooks(f.ctx, f.site.ID)
	if len(eps) != 1 {
		t.Errorf("%d endpoints after the refusals, want the 1 there was", len(eps))
	}
}

// A test event and a replay post the same
// way; a removed endpoint's unsent posts end; erasing the person empties
// their posts.
func TestTestReplayRemoveForget(t *testing.T) {
	t.Parallel()
	f := newFixture(t, model.HookLeadReceived)
	if err := f.svc.WebhookTest(f.ctx, f.site.ID, f.ep.ID); err != nil {
		t.Fatal(err)
	}
	l := f.lead("e1", "05324128719", "Fiyat nedir?")
	f.run(1)
	got := f.rc.events()
	if len(got) != 2 || got[0]["type"] != model.HookTest || got[1]["type"] != model.HookLeadReceived {
		t.Fatalf("got %v", got)
	}
	ds, _ := f.svc.WebhookDeliveries(f.ctx, f.site.ID, 10)
	if err := f.svc.WebhookReplay(f.ctx, f.site.ID, ds[0].ID); err != nil {
		t.Fatal(err)
	}
	f.run(1)
	if f.rc.seen[got[1]["id"].(string)] != 2 {
		t.Errorf("the replay did not post the same event id again: %v", f.rc.seen)
	}
	// Removed: the next lead's post ends dead, unsent.
	if err := f.svc.WebhookRemove(f.ctx, f.site.ID, f.ep.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.WebhookAdd(f.ctx, f.site.ID, f.rc.srv.URL, []string{model.HookLeadReceived}); err != nil {
		t.Fatal(err)
	}
	// Forget the first lead's person: its posts keep no payload.
	if _, err := f.svc.Forget(f.ctx, app.ForgetInput{Email: "e1@example.com", Site: f.site.ID}); err != nil {
		t.Fatal(err)
	}
	ds, _ = f.svc.WebhookDeliveries(f.ctx, f.site.ID, 10)
	for _, d := range ds {
		if d.LeadID == l.ID && string(d.Payload) != "{}" {
			t.Errorf("post %s of an erased lead keeps %s", d.ID, d.Payload)
		}
	}
	if err := f.svc.WebhookReplay(f.ctx, f.site.ID, ds[0].ID); !errors.Is(err, model.ErrConflict) {
		t.Errorf("replay of an erased post: %v", err)
	}
}
