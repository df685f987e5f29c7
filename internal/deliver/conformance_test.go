package deliver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/google"
	"github.com/cleanads/cleanads/internal/google/googletest"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
	"github.com/cleanads/cleanads/internal/tiktok"
	"github.com/cleanads/cleanads/internal/tiktok/tiktoktest"
)

// standIn is one platform set up for a site that sends to it alone, with
// its local stand-in's controls: what the conformance suite needs to know
// of a platform, and nothing else.
type standIn struct {
	p platform.Platform
	// handler is the runner's handler of the platform's rows: the
	// platform through deliver.PlatformHandler (Google's with its
	// follow-up of requests).
	handler deliver.Handler
	// perLead is how many events a clean lead sends to the platform.
	perLead int
	// accepted are the event ids the stand-in took, in order.
	accepted func() []string
	// failNext makes the next n requests fail transiently, or with a rate
	// limit.
	failNext func(n int, throttle bool)
	// breakAuth refuses the site's credentials; fixAuth makes them good
	// again as the owner would (a new token, a restored grant).
	breakAuth func()
	fixAuth   func(t *testing.T, f *confFix)
	// refuse makes the stand-in refuse the event with this id as its
	// platform refuses one bad event of a batch (Meta and TikTok fail
	// the whole request, Google names the event in a field violation),
	// in words that carry why; allow takes it again.
	refuse func(eventID, why string)
	allow  func(eventID string)
	// refuseAll makes the stand-in refuse every request as invalid, a
	// permanent refusal of the data that names no event and is not about
	// the credentials, until refuseAll(false); invalid are words that
	// refusal carries.
	refuseAll func(on bool)
	invalid   string
	// clear are values of a lead's events that name the person in clear
	// and must be gone after it is forgotten.
	clear []string
}

// platformKit sets a platform up for the site (edits its settings) and
// starts its stand-in.
type platformKit struct {
	name  string
	start func(t *testing.T, f *confFix, site *model.Site) *standIn
}

var kits = []platformKit{
	{model.DestinationMeta, func(t *testing.T, f *confFix, site *model.Site) *standIn {
		clk := f.clk
		g := graphtest.New(t)
		g.SetNow(clk.Now)
		testkit.WithMeta("111222333", model.ModeLive)(site)
		site.AccessToken = graphtest.Token
		client := capi.NewClient(capi.ClientOptions{BaseURL: g.URL, HTTP: g.Client(), Now: clk.Now})
		p := capi.NewMeta(client, platform.Deps{Now: clk.Now})
		return &standIn{p: p, handler: deliver.NewPlatformHandler(p, f.db), perLead: 2,
			accepted: func() []string {
				var ids []string
				for _, e := range g.Events() {
					ids = append(ids, e.EventID)
				}
				return ids
			},
			failNext: func(n int, throttle bool) {
				if throttle {
					g.FailNext(n, graphtest.FaultThrottle17)
				} else {
					g.FailNext(n, graphtest.FaultServerError)
				}
			},
			breakAuth: func() { g.SetTokens("another-token") },
			fixAuth: func(t *testing.T, f *confFix) {
				g.SetTokens("another-token")
				f.site.AccessToken = "another-token"
				if err := f.db.SiteUpsert(f.ctx, f.site, f.clk.Now()); err != nil {
					t.Fatal(err)
				}
			},
			refuse: g.Refuse, allow: g.Allow,
			refuseAll: func(on bool) {
				if on {
					g.FailFor(365*24*time.Hour, graphtest.FaultInvalidParameter)
				} else {
					g.FailFor(0, graphtest.FaultNone)
				}
			},
			invalid: "Invalid parameter",
			clear:   []string{"203.0.113.9", "Mozilla/5.0 (test)", "fb.1."},
		}
	}},
	{model.DestinationGoogle, func(t *testing.T, f *confFix, site *model.Site) *standIn {
		clk := f.clk
		gg := googletest.New(t)
		gg.SetNow(clk.Now)
		site.Settings.Google = &model.GoogleSettings{OperatingAccountID: "1234567890", QualifiedConversionAction: "555", Currency: "EUR"}
		tokens := google.NewTokens(nil)
		creds := google.Credentials{ClientID: googletest.ClientID, ClientSecret: googletest.ClientSecret,
			RefreshToken: googletest.RefreshToken, TokenURL: gg.TokenURL()}
		ts := func(model.SiteID) (oauth2.TokenSource, error) { return tokens.Source(creds) }
		client := google.NewClient(google.ClientOptions{BaseURL: gg.URL})
		return &standIn{perLead: 1,
			p: google.NewPlatform(client, func(s *model.Site) (oauth2.TokenSource, error) { return ts(s.ID) },
				platform.Deps{Now: clk.Now}),
			handler: deliver.NewGoogle(deliver.GoogleOptions{Store: f.db, Sender: client, Tokens: ts, Now: clk.Now}),
			accepted: func() []string {
				var ids []string
				for _, e := range gg.Events() {
					id, _ := e.Event["transactionId"].(string)
					ids = append(ids, id)
				}
				return ids
			},
			failNext: func(n int, throttle bool) {
				if throttle {
					gg.FailNext(n, googletest.FaultResourceExhausted)
				} else {
					gg.FailNext(n, googletest.FaultUnavailable)
				}
			},
			breakAuth: gg.RevokeGrant,
			fixAuth: func(t *testing.T, f *confFix) {
				gg.RestoreGrant()
				if _, err := f.svc.Resume(f.ctx, f.site.ID, model.DestinationGoogle); err != nil {
					t.Fatal(err)
				}
			},
			refuse: gg.Refuse, allow: gg.Allow,
			refuseAll: func(on bool) {
				if on {
					gg.SetDown(googletest.FaultInvalidArgument)
				} else {
					gg.SetDown(googletest.FaultNone)
				}
			},
			invalid: "INVALID_ARGUMENT",
			clear:   []string{"Cj0-conformance-gclid"},
		}
	}},
	{tiktok.Name, func(t *testing.T, f *confFix, site *model.Site) *standIn {
		srv := tiktoktest.New(t)
		srv.SetNow(f.clk.Now)
		raw, _ := json.Marshal(tiktok.Settings{PixelCode: tiktoktest.PixelCode, CRMEventSetID: tiktoktest.CRMEventSetID})
		site.Settings.Platforms = map[string]json.RawMessage{tiktok.Name: raw}
		site.Secrets = map[string]string{platform.SecretName(tiktok.Name, tiktok.SecretAccessToken): tiktoktest.AccessToken}
		p := tiktok.New(platform.Deps{Endpoints: map[string]string{tiktok.Name: srv.URL}, Now: f.clk.Now})
		return &standIn{p: p, handler: deliver.NewPlatformHandler(p, f.db), perLead: 2,
			accepted: srv.AcceptedIDs,
			failNext: func(n int, throttle bool) {
				if throttle {
					srv.FailNext(n, tiktoktest.CodeTooFrequent, "")
				} else {
					srv.FailNext(n, tiktoktest.CodeSystemError, "")
				}
			},
			breakAuth: srv.Pause,
			fixAuth: func(t *testing.T, f *confFix) {
				srv.Resume()
				if _, err := f.svc.Resume(f.ctx, f.site.ID, tiktok.Name); err != nil {
					t.Fatal(err)
				}
			},
			refuse: srv.Refuse, allow: srv.Allow,
			refuseAll: func(on bool) {
				if on {
					srv.FailAll(tiktoktest.CodeInvalidParam)
				} else {
					srv.FailAll(tiktoktest.CodeOK)
				}
			},
			invalid: "code 40002",
			clear:   []string{"203.0.113.9", "Mozilla/5.0 (test)", "ttclid-conformance", "ttp-conformance"},
		}
	}},
}

// confFix is a site that sends to one platform alone, the use cases that
// queue its leads' events and a runner with the platform's handler.
type confFix struct {
	ctx  context.Context
	db   *store.DB
	clk  *testkit.Clock
	site *model.Site
	svc  *app.Service
	si   *standIn
	opts deliver.Options
}

func newConfFix(t *testing.T, kit platformKit) *confFix {
	t.Helper()
	f := &confFix{ctx: context.Background(), db: storetest.New(t), clk: testkit.NewClock(time.Now().UTC().Truncate(time.Second))}
	site := testkit.Site()
	f.si = kit.start(t, f, site)
	f.site = testkit.AddSite(t, f.db, site, f.clk.Now())
	f.svc = app.New(app.Options{Store: f.db, Now: f.clk.Now, Platforms: []platform.Platform{f.si.p}})
	f.opts = deliver.Options{Store: f.db, Now: f.clk.Now, Node: "node-a", Jitter: func() float64 { return 0.5 },
		Handlers: map[string]deliver.Handler{kit.name: f.si.handler}}
	return f
}

func (f *confFix) runner(node string) *deliver.Runner {
	o := f.opts
	o.Node = node
	return deliver.New(o)
}

func (f *confFix) run(t *testing.T) deliver.Stats {
	t.Helper()
	st, err := f.runner("node-a").RunOnce(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// submit sends a clean website lead from an ad click of every platform.
func (f *confFix) submit(t *testing.T, n int) *model.Lead {
	t.Helper()
	in := lead(n)
	in.GClid = "Cj0-conformance-gclid"
	in.PageURL += "?ttclid=ttclid-conformance"
	in.Cookies = map[string]string{"_ttp": "ttp-conformance"}
	l, _, err := f.svc.Submit(f.ctx, f.site, in)
	if err != nil {
		t.Fatal(err)
	}
	if l.Verdict != model.VerdictClean {
		t.Fatalf("the lead is %s: %+v", l.Verdict, l.Reasons)
	}
	return l
}

func (f *confFix) states(t *testing.T, id model.LeadID) map[model.DeliveryState]int {
	t.Helper()
	ds, err := f.db.DeliveriesByLead(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[model.DeliveryState]int{}
	for _, d := range ds {
		out[d.State]++
	}
	return out
}

func (f *confFix) rows(t *testing.T, id model.LeadID) []*model.Delivery {
	t.Helper()
	ds, err := f.db.DeliveriesByLead(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// unpaused fails if the share is paused.
func (f *confFix) unpaused(t *testing.T, name string) {
	t.Helper()
	reason, err := f.db.DestinationPauseReason(f.ctx, model.Share{Site: f.site.ID, Destination: name})
	if err != nil || reason != "" {
		t.Errorf("the share is paused: %q %v", reason, err)
	}
}

// onceEach fails unless the stand-in took each event once, and n of them.
func (f *confFix) onceEach(t *testing.T, n int) {
	t.Helper()
	seen := map[string]int{}
	for _, id := range f.si.accepted() {
		seen[id]++
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("event %s taken %d times", id, k)
		}
	}
	if len(seen) != n {
		t.Errorf("%d distinct events at the platform, want %d", len(seen), n)
	}
}

// TestPlatformConformance runs one suite over every platform, each against
// its local stand-in, on a site that sends to it alone: what the runner
// does for a platform (retry, throttle, a refused event split from its
// batch, pause and resume, dead letter and replay, expiry, restart with
// rows in flight, redaction) must hold for all of them alike.
func TestPlatformConformance(t *testing.T) {
	for _, kit := range kits {
		t.Run(kit.name, func(t *testing.T) {
			t.Run("delivers each event once", func(t *testing.T) {
				f := newConfFix(t, kit)
				l := f.submit(t, 0)
				if st := f.run(t); st.Sent != f.si.perLead {
					t.Fatalf("round %+v", st)
				}
				f.run(t)
				f.onceEach(t, f.si.perLead)
				if got := f.states(t, l.ID)[model.DeliverySent]; got != f.si.perLead {
					t.Errorf("%d rows sent", got)
				}
			})
			for _, throttle := range []bool{false, true} {
				name := "retries a transient failure"
				if throttle {
					name = "waits out a rate limit"
				}
				t.Run(name, func(t *testing.T) {
					f := newConfFix(t, kit)
					f.si.failNext(1, throttle)
					l := f.submit(t, 0)
					if st := f.run(t); st.Retry != f.si.perLead {
						t.Fatalf("round %+v", st)
					}
					// The share waits out its backoff as one.
					if st := f.run(t); st.Sent != 0 {
						t.Fatalf("sent during the backoff: %+v", st)
					}
					f.clk.Add(2 * time.Hour)
					if st := f.run(t); st.Sent != f.si.perLead {
						t.Fatalf("after the backoff %+v", st)
					}
					f.onceEach(t, f.si.perLead)
					if got := f.states(t, l.ID)[model.DeliverySent]; got != f.si.perLead {
						t.Errorf("%d rows sent", got)
					}
				})
			}
			t.Run("pauses on refused credentials and resumes", func(t *testing.T) {
				f := newConfFix(t, kit)
				f.si.breakAuth()
				l := f.submit(t, 0)
				if st := f.run(t); st.Paused != f.si.perLead {
					t.Fatalf("round %+v", st)
				}
				p, err := f.db.DestinationPauseOf(f.ctx, model.Share{Site: f.site.ID, Destination: kit.name})
				if err != nil || p.Reason == "" {
					t.Fatalf("pause %+v %v", p, err)
				}
				// A lead that comes meanwhile waits with the others.
				f.submit(t, 1)
				f.run(t)
				if n := len(f.si.accepted()); n != 0 {
					t.Fatalf("%d events went while paused", n)
				}
				f.si.fixAuth(t, f)
				f.run(t)
				f.run(t)
				f.onceEach(t, 2*f.si.perLead)
				if got := f.states(t, l.ID)[model.DeliverySent]; got != f.si.perLead {
					t.Errorf("%d rows sent", got)
				}
			})
			t.Run("a refused event is dead and the rest of its batch goes once", func(t *testing.T) {
				f := newConfFix(t, kit)
				var leads []*model.Lead
				for i := range 3 {
					leads = append(leads, f.submit(t, i))
				}
				bad := f.rows(t, leads[1].ID)[0]
				const why = "conformance: this event is refused"
				f.si.refuse(bad.EventID, why)
				// The three leads' events go in one batch per account.
				accounts := map[string]bool{}
				for _, l := range leads {
					for _, d := range f.rows(t, l.ID) {
						accounts[d.PixelID] = true
					}
				}
				good := 3*f.si.perLead - 1
				if st := f.run(t); st.Sent != good || st.Dead != 1 || st.Retry != 0 || st.Paused != 0 || st.Requests != len(accounts) {
					t.Fatalf("round %+v, %d accounts", st, len(accounts))
				}
				// Nothing goes again, however long one waits.
				for range 3 {
					f.clk.Add(6 * time.Hour)
					if st := f.run(t); st.Claimed != 0 || st.Requests != 0 {
						t.Fatalf("a later round %+v", st)
					}
				}
				f.onceEach(t, good)
				for _, id := range f.si.accepted() {
					if id == bad.EventID {
						t.Errorf("the refused event %s was taken", id)
					}
				}
				d, err := f.db.DeliveryByID(f.ctx, bad.ID)
				if err != nil {
					t.Fatal(err)
				}
				if d.State != model.DeliveryDead || !strings.Contains(d.LastError, why) {
					t.Errorf("refused row %s %q", d.State, d.LastError)
				}
				for _, l := range leads {
					if got := f.states(t, l.ID); got[model.DeliveryRetry]+got[model.DeliveryPending] != 0 {
						t.Errorf("lead %s: %v", l.ID, got)
					}
				}
				f.unpaused(t, kit.name)
			})
			t.Run("a permanent refusal dead-letters the rows, no pause", func(t *testing.T) {
				f := newConfFix(t, kit)
				f.si.refuseAll(true)
				l := f.submit(t, 0)
				if st := f.run(t); st.Dead != f.si.perLead || st.Sent+st.Retry+st.Paused != 0 {
					t.Fatalf("round %+v", st)
				}
				f.clk.Add(6 * time.Hour)
				if st := f.run(t); st.Claimed != 0 {
					t.Fatalf("a later round %+v", st)
				}
				for _, d := range f.rows(t, l.ID) {
					if d.State != model.DeliveryDead || !strings.Contains(d.LastError, f.si.invalid) {
						t.Errorf("row %s: %s %q, want dead with %q", d.ID, d.State, d.LastError, f.si.invalid)
					}
				}
				if n := len(f.si.accepted()); n != 0 {
					t.Errorf("%d events taken", n)
				}
				f.unpaused(t, kit.name)
			})
			t.Run("a dead row replayed goes once, with its event id", func(t *testing.T) {
				f := newConfFix(t, kit)
				f.si.refuseAll(true)
				l := f.submit(t, 0)
				if st := f.run(t); st.Dead != f.si.perLead {
					t.Fatalf("round %+v", st)
				}
				f.si.refuseAll(false)
				f.clk.Add(time.Hour)
				dead := f.rows(t, l.ID)
				want := map[string]bool{}
				for _, d := range dead {
					// What the admin's Replay button does.
					if err := f.db.DeliveryReplay(f.ctx, d.ID, "replayed by conformance", f.clk.Now()); err != nil {
						t.Fatal(err)
					}
					want[d.EventID] = true
				}
				if st := f.run(t); st.Sent != f.si.perLead {
					t.Fatalf("after the replay %+v", st)
				}
				f.run(t)
				f.onceEach(t, f.si.perLead)
				for _, id := range f.si.accepted() {
					if !want[id] {
						t.Errorf("event %s taken, not one of the replayed rows' %v", id, want)
					}
				}
				for _, d := range f.rows(t, l.ID) {
					if d.State != model.DeliverySent || !want[d.EventID] {
						t.Errorf("row %s: %s, event %s", d.ID, d.State, d.EventID)
					}
				}
			})
			t.Run("expires past the platform's window", func(t *testing.T) {
				f := newConfFix(t, kit)
				f.si.failNext(1000, false)
				l := f.submit(t, 0)
				f.run(t)
				f.clk.Add(f.si.p.MaxAge() + 24*time.Hour)
				f.run(t)
				if got := f.states(t, l.ID); got[model.DeliveryExpired] != f.si.perLead {
					t.Fatalf("states %v", got)
				}
			})
			t.Run("a restart with rows in flight sends them once", func(t *testing.T) {
				f := newConfFix(t, kit)
				f.submit(t, 0)
				// Node a claims and dies before recording anything.
				claimed, err := f.db.DeliveryClaimFor(f.ctx, model.ClaimParams{Owner: "node-a", Now: f.clk.Now(),
					LeaseUntil: f.clk.Now().Add(time.Minute), Limit: 100, Destinations: append(model.Destinations(), kit.name)})
				if err != nil || len(claimed) == 0 {
					t.Fatalf("claimed %d %v", len(claimed), err)
				}
				if st, _ := f.runner("node-b").RunOnce(f.ctx); st.Sent != 0 {
					t.Fatalf("node b took leased rows: %+v", st)
				}
				f.clk.Add(2 * time.Minute)
				if st, _ := f.runner("node-b").RunOnce(f.ctx); st.Sent != f.si.perLead {
					t.Fatalf("after the lease %+v", st)
				}
				f.onceEach(t, f.si.perLead)
			})
			t.Run("forgetting the person redacts the payloads", func(t *testing.T) {
				f := newConfFix(t, kit)
				l := f.submit(t, 0)
				f.run(t)
				if _, err := f.svc.Forget(f.ctx, app.ForgetInput{Email: "ayse.yilmaz0@gmail.com", Site: f.site.ID}); err != nil {
					t.Fatal(err)
				}
				ds, err := f.db.DeliveriesByLead(f.ctx, l.ID)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range ds {
					var v any
					if json.Unmarshal(d.Payload, &v) != nil {
						t.Errorf("row %s: payload is not JSON: %s", d.ID, d.Payload)
					}
					for _, c := range f.si.clear {
						if strings.Contains(string(d.Payload), c) {
							t.Errorf("row %s keeps %q: %s", d.ID, c, d.Payload)
						}
					}
				}
			})
		})
	}
}

// TestEveryPlatformAtOnce: a site that sends to Meta, Google and TikTok
// sends each event to each once; Google's outage and TikTok's refused
// token hold none of the others, and each platform catches up on its own.
func TestEveryPlatformAtOnce(t *testing.T) {
	f := &confFix{ctx: context.Background(), db: storetest.New(t), clk: testkit.NewClock(time.Now().UTC().Truncate(time.Second))}
	site := testkit.Site()
	ins := map[string]*standIn{}
	var list []platform.Platform
	f.opts = deliver.Options{Store: f.db, Now: f.clk.Now, Node: "node-a", Jitter: func() float64 { return 0.5 },
		Handlers: map[string]deliver.Handler{}}
	for _, kit := range kits {
		si := kit.start(t, f, site)
		ins[kit.name], list = si, append(list, si.p)
		f.opts.Handlers[kit.name] = si.handler
	}
	f.site = testkit.AddSite(t, f.db, site, f.clk.Now())
	f.svc = app.New(app.Options{Store: f.db, Now: f.clk.Now, Platforms: list})

	ins[model.DestinationGoogle].failNext(1, false)
	ins[tiktok.Name].breakAuth()
	l := f.submit(t, 0)
	f.run(t)
	byPlatform := func() map[string]map[model.DeliveryState]int {
		ds, err := f.db.DeliveriesByLead(f.ctx, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]map[model.DeliveryState]int{}
		for _, d := range ds {
			if out[d.Destination] == nil {
				out[d.Destination] = map[model.DeliveryState]int{}
			}
			out[d.Destination][d.State]++
		}
		return out
	}
	got := byPlatform()
	if got["meta"][model.DeliverySent] != 2 || got["google"][model.DeliveryRetry] != 1 || got["tiktok"][model.DeliveryPaused] != 2 {
		t.Fatalf("after the first round: %v", got)
	}
	// Google comes back on its own; TikTok waits for its owner.
	f.clk.Add(2 * time.Hour)
	f.run(t)
	if got := byPlatform(); got["google"][model.DeliverySent] != 1 || got["tiktok"][model.DeliveryPaused] != 2 {
		t.Fatalf("after Google's backoff: %v", got)
	}
	ins[tiktok.Name].fixAuth(t, f)
	f.run(t)
	if got := byPlatform(); got["tiktok"][model.DeliverySent] != 2 {
		t.Fatalf("after TikTok's token was fixed: %v", got)
	}
	for name, si := range ins {
		seen := map[string]int{}
		for _, id := range si.accepted() {
			seen[id]++
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("%s took %s %d times", name, id, n)
			}
		}
		if len(seen) != si.perLead {
			t.Errorf("%s took %d events, want %d", name, len(seen), si.perLead)
		}
	}
}
