package leadads_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/leadads"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/source"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
	"github.com/cleanads/cleanads/internal/web"
)

const (
	appSecret   = "lead-ads-app-secret-0123456789"
	verifyToken = "lead-ads-verify-token-0123456789"
	pageID      = "104857600123456"
	formID      = "987654321098765"
	// bigLead is above 2^53 (9007199254740992): a float64 would make it
	// ...992.
	bigLead = "9007199254740993"
)

// fixture is a database with site "dent" connected to Page pageID, the
// Graph stand-in (Conversions API and Lead Ads), the app, the Lead Ads
// service, a runner with Meta's and the fetch's destinations, and the
// HTTP server with the webhook, all on one fake clock.
type fixture struct {
	ctx    context.Context
	db     *store.DB
	g      *graphtest.Server
	clk    *testkit.Clock
	site   *model.Site
	svc    *app.Service
	la     *leadads.Service
	runner *deliver.Runner
	srv    *httptest.Server
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{ctx: context.Background(), db: storetest.New(t), g: graphtest.New(t),
		clk: testkit.NewClock(time.Now().UTC().Truncate(time.Second))}
	f.g.SetNow(f.clk.Now)
	f.g.SetAppSecret(appSecret)
	f.site = testkit.AddSite(t, f.db, testkit.Site(testkit.WithMeta("111222333", model.ModeLive), func(s *model.Site) {
		s.AccessToken = graphtest.Token
		s.Settings.Meta.Stages = map[string]model.StageEvent{"won": {Event: "Purchase", Currency: "TRY"}}
		s.Settings.LeadAds = model.LeadAdsSettings{PageIDs: []string{pageID}, LeadEventSource: "DentCRM",
			Forms: map[string]model.LeadAdsForm{formID: {Fields: map[string]string{"hangi_tedavi": "message"}}}}
		s.LeadAds = model.LeadAdsSecrets{AccessToken: graphtest.Token, AppSecret: appSecret, VerifyToken: verifyToken}
	}), f.clk.Now())
	client := capi.NewClient(capi.ClientOptions{BaseURL: f.g.URL, HTTP: f.g.Client(), Now: f.clk.Now})
	f.svc = app.New(app.Options{Store: f.db, Now: f.clk.Now, Graph: client})
	f.la = leadads.New(leadads.Options{Store: f.db, Graph: client, Leads: f.svc, Now: f.clk.Now})
	// The source as serve builds it: the webhook, and the fetch as its
	// worker.
	src, ok := leadads.NewSource(source.Deps{Deps: platform.Deps{Now: f.clk.Now}, App: f.svc, Sites: f.db, Pauses: f.db,
		Graph: client}).(source.Worker)
	if !ok || src.Destination() != model.DestinationMetaLeadgen {
		t.Fatalf("the Lead Ads source with a Graph client is not the meta_leadgen worker: %T", src)
	}
	f.runner = deliver.New(deliver.Options{Store: f.db, Sender: client, Now: f.clk.Now, Node: "node-a",
		Jitter: func() float64 { return 0.5 }, Handlers: map[string]deliver.Handler{src.Destination(): src.Handler()}})
	f.srv = httptest.NewServer(web.New(web.Options{App: f.svc, Store: f.db, Now: f.clk.Now,
		Sources: []source.Source{src}}).Handler())
	t.Cleanup(f.srv.Close)
	return f
}

// lead is a Lead Ads lead at Meta, made n minutes before the clock.
func (f *fixture) lead(id string, n int, edit func(l *graphtest.Lead)) graphtest.Lead {
	l := graphtest.Lead{ID: id, Created: f.clk.Now().Add(-time.Duration(n) * time.Minute), FormID: formID, PageID: pageID,
		AdID: "120210000000000001", AdName: "Implant kampanyası", AdsetID: "120210000000000002", AdsetName: "İstanbul 25-55",
		CampaignID: "120210000000000003", CampaignName: "Implant Aralık", Platform: "fb",
		Fields: []graphtest.Field{
			{Name: "full_name", Values: []string{"Ayşe Yılmaz"}},
			{Name: "email", Values: []string{"ayse.yilmaz" + id[len(id)-3:] + "@gmail.com"}},
			{Name: "phone_number", Values: []string{"+90532412" + id[len(id)-4:]}},
			{Name: "city", Values: []string{"İstanbul"}},
			{Name: "hangi_tedavi", Values: []string{"Implant tedavisi için randevu almak istiyorum, hafta içi akşam uygunum."}},
			{Name: "ne_zaman_aranmak_istersiniz", Values: []string{"akşam"}},
		}}
	if edit != nil {
		edit(&l)
	}
	f.g.AddLead(l)
	return l
}

// change is one leadgen change of a webhook; ids as JSON numbers when
// numeric, else as strings.
type change struct {
	leadgen, form, ad string
	created           time.Time
	numeric           bool
}

// webhook is a Page webhook body: one entry per list of changes.
func webhook(entries ...[]change) []byte {
	var b strings.Builder
	b.WriteString(`{"object":"page","entry":[`)
	for i, e := range entries {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":"%s","time":%d,"changes":[`, pageID, time.Now().Unix())
		for j, c := range e {
			if j > 0 {
				b.WriteString(",")
			}
			q := `"`
			if c.numeric {
				q = ""
			}
			fmt.Fprintf(&b, `{"field":"leadgen","value":{"leadgen_id":%s%s%s,"page_id":%s%s%s,"form_id":%s%s%s,"created_time":%d`,
				q, c.leadgen, q, q, pageID, q, q, c.form, q, c.created.Unix())
			if c.ad != "" {
				fmt.Fprintf(&b, `,"ad_id":%s%s%s,"adgroup_id":%s%s%s`, q, c.ad, q, q, c.ad, q)
			}
			b.WriteString("}}")
		}
		b.WriteString("]}")
	}
	b.WriteString("]}")
	return []byte(b.String())
}

func sign(body []byte, secret string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// post sends a webhook signed with sig and returns the status and body.
func (f *fixture) post(t *testing.T, body []byte, sig string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/v1/webhooks/leadgen/dent", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if sig != "" {
		req.Header.Set("X-Hub-Signature-256", sig)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (f *fixture) run(t *testing.T) deliver.Stats {
	t.Helper()
	st, err := f.runner.RunOnce(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func (f *fixture) leadByAdsID(t *testing.T, id string) *model.Lead {
	t.Helper()
	l, err := f.db.LeadFind(f.ctx, "dent", store.LeadLookup{LeadAdsID: id})
	if err != nil {
		t.Fatalf("lead %s: %v", id, err)
	}
	return l
}

func (f *fixture) leadCount(t *testing.T) int {
	t.Helper()
	n, err := f.db.LeadCount(f.ctx, "dent")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// deliverLead tells of the leads by one signed webhook, lets the runner
// fetch them and send their events, and returns the first as stored.
func (f *fixture) deliverLead(t *testing.T, leads ...graphtest.Lead) *model.Lead {
	t.Helper()
	var cs []change
	for _, l := range leads {
		cs = append(cs, change{leadgen: l.ID, form: formID, created: l.Created})
	}
	body := webhook(cs)
	if code, resp := f.post(t, body, sign(body, appSecret)); code != 200 {
		t.Fatalf("webhook: %d %s", code, resp)
	}
	f.run(t)
	f.run(t)
	return f.leadByAdsID(t, leads[0].ID)
}

// events are the events Meta took, by name.
func (f *fixture) events(t *testing.T) map[string][]capi.Event {
	t.Helper()
	out := map[string][]capi.Event{}
	for _, r := range f.g.Events() {
		var e capi.Event
		if err := json.Unmarshal(r.JSON, &e); err != nil {
			t.Fatal(err)
		}
		out[r.EventName] = append(out[r.EventName], e)
	}
	return out
}

func TestHandshake(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, tt := range []struct {
		query string
		code  int
		body  string
	}{
		{"hub.mode=subscribe&hub.verify_token=" + verifyToken + "&hub.challenge=1158201444", 200, "1158201444"},
		{"hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1", 403, ""},
		{"hub.mode=unsubscribe&hub.verify_token=" + verifyToken + "&hub.challenge=1", 403, ""},
	} {
		resp, err := http.Get(f.srv.URL + "/v1/webhooks/leadgen/dent?" + tt.query)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.code || (tt.body != "" && string(b) != tt.body) ||
			(tt.code == 200 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain")) {
			t.Errorf("%s: %d %q %s", tt.query, resp.StatusCode, b, resp.Header.Get("Content-Type"))
		}
	}
	if resp, err := http.Get(f.srv.URL + "/v1/webhooks/leadgen/nosuchsite?hub.mode=subscribe&hub.verify_token=x"); err != nil || resp.StatusCode != 404 {
		t.Errorf("unknown site: %v %v", resp.StatusCode, err)
	}
}

// TestWebhookToQualifiedAndStage: a batch of webhooks (several entries and
// changes, numeric and string ids, an id above 2^53, an organic lead,
// duplicates, a redelivery out of order) becomes one fetch per lead; each
// lead is read with appsecret_proof, mapped, judged, and its Conversion
// Leads events reach Meta with lead_id; a CRM stage follows with lead_id.
func TestWebhookToQualifiedAndStage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.lead("1200000000000111", 30, nil)
	b := f.lead(bigLead, 20, nil)
	organic := f.lead("1200000000000333", 10, func(l *graphtest.Lead) {
		l.AdID, l.AdName, l.AdsetID, l.AdsetName, l.CampaignID, l.CampaignName, l.IsOrganic, l.Platform = "", "", "", "", "", "", true, "ig"
		l.Fields[0].Values = []string{"Jürgen Müller-Šimić 😀"}
	})
	body := webhook(
		[]change{{leadgen: b.ID, form: formID, ad: b.AdID, created: b.Created, numeric: true},
			{leadgen: a.ID, form: formID, ad: a.AdID, created: a.Created}},
		[]change{{leadgen: organic.ID, form: formID, created: organic.Created, numeric: true},
			{leadgen: a.ID, form: formID, ad: a.AdID, created: a.Created}}, // Meta sends duplicates
	)
	// Bad signatures are refused before anything is read or kept.
	for name, sig := range map[string]string{"missing": "", "wrong secret": sign(body, "not-the-secret"),
		"not hex": "sha256=zz", "no prefix": strings.TrimPrefix(sign(body, appSecret), "sha256=")} {
		if code, _ := f.post(t, body, sig); code != 401 && code != 403 {
			t.Errorf("%s signature: %d", name, code)
		}
	}
	tampered := bytes.Replace(body, []byte(a.ID), []byte("1200000000000999"), 1)
	if code, _ := f.post(t, tampered, sign(body, appSecret)); code != 403 {
		t.Errorf("tampered body: %d", code)
	}
	if c, _ := f.db.DeliveryCounts(f.ctx, "dent"); c[model.DeliveryPending] != 0 {
		t.Fatalf("refused posts kept %v", c)
	}
	code, resp := f.post(t, body, sign(body, appSecret))
	if code != 200 || !strings.Contains(resp, `"queued":3`) || !strings.Contains(resp, `"duplicate":1`) {
		t.Fatalf("post: %d %s", code, resp)
	}
	// Redelivered later, older first: nothing new.
	again := webhook([]change{{leadgen: a.ID, form: formID, created: a.Created, numeric: true}}, []change{{leadgen: b.ID, form: formID, created: b.Created}})
	if code, resp := f.post(t, again, sign(again, appSecret)); code != 200 || !strings.Contains(resp, `"queued":0`) {
		t.Fatalf("redelivery: %d %s", code, resp)
	}

	st := f.run(t)
	if st.Sent != 3 || st.Retry != 0 || f.g.LeadReads() != 3 {
		t.Fatalf("fetch round: %+v, %d lead reads", st, f.g.LeadReads())
	}
	// The events the fetch queued go in the next round.
	f.run(t)
	if f.leadCount(t) != 3 {
		t.Fatalf("%d leads", f.leadCount(t))
	}
	lb := f.leadByAdsID(t, bigLead)
	if lb.Source != model.SourceLeadAds || lb.LeadAdsID != bigLead || lb.Name != "Ayşe Yılmaz" ||
		!strings.HasPrefix(lb.Message, "Implant") || lb.Fields["ne_zaman_aranmak_istersiniz"] != "akşam" || lb.Fields["city"] != "İstanbul" {
		t.Errorf("mapped lead %+v", lb)
	}
	want := map[string]string{"page_id": pageID, "form_id": formID, "form_name": "Form " + formID, "ad_id": b.AdID,
		"ad_name": "Implant kampanyası", "adset_name": "İstanbul 25-55", "campaign_id": b.CampaignID,
		"campaign_name": "Implant Aralık", "is_organic": "false", "platform": "fb", "via": "webhook"}
	for k, v := range want {
		if lb.SourceDetail[k] != v {
			t.Errorf("source detail %s = %q, want %q (%v)", k, lb.SourceDetail[k], v, lb.SourceDetail)
		}
	}
	if lb.Verdict != model.VerdictClean {
		t.Errorf("verdict %s %+v", lb.Verdict, lb.Reasons)
	}
	for _, r := range lb.Reasons {
		if r.Code == "FILL_TIME_MISSING" || r.Code == "HONEYPOT" {
			t.Errorf("an Instant Form has no fill time or honeypot, yet: %+v", r)
		}
	}
	lo := f.leadByAdsID(t, organic.ID)
	if lo.Name != "Jürgen Müller-Šimić 😀" || lo.SourceDetail["is_organic"] != "true" || lo.SourceDetail["ad_id"] != "" ||
		lo.SourceDetail["platform"] != "ig" {
		t.Errorf("organic lead %q %v", lo.Name, lo.SourceDetail)
	}

	evs := f.events(t)
	if len(evs["Lead"]) != 3 || len(evs["QualifiedLead"]) != 3 {
		t.Fatalf("Meta took %d Lead and %d QualifiedLead", len(evs["Lead"]), len(evs["QualifiedLead"]))
	}
	var raw []byte
	for _, r := range f.g.Events() {
		if r.EventName == "QualifiedLead" && strings.Contains(string(r.JSON), bigLead) {
			raw = r.JSON
		}
	}
	if !bytes.Contains(raw, []byte(`"lead_id":`+bigLead)) {
		t.Errorf("qualified event does not carry lead_id %s as a number: %s", bigLead, raw)
	}
	for _, name := range []string{"Lead", "QualifiedLead"} {
		for _, e := range evs[name] {
			if e.ActionSource != capi.SourceSystemGenerated || e.CustomData["event_source"] != "crm" ||
				e.CustomData["lead_event_source"] != "DentCRM" || e.UserData.LeadID == "" || len(e.UserData.Email) != 1 ||
				len(e.UserData.Phone) != 1 || e.EventSourceURL != "" {
				t.Errorf("%s event is not Conversion Leads' shape: %+v", name, e)
			}
		}
	}
	ct, err := capi.HashField(capi.FieldCity, "İstanbul", "TR")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs["QualifiedLead"] {
		if e.UserData.LeadID == json.Number(bigLead) && (len(e.UserData.City) != 1 || e.UserData.City[0] != ct) {
			t.Errorf("ct %v, want %s, the city answer's", e.UserData.City, ct)
		}
	}

	// A CRM stage, named by the Lead Ads id, goes with lead_id at its own
	// time.
	f.clk.Add(time.Hour)
	at := f.clk.Now().Add(-10 * time.Minute)
	if _, err := f.svc.AddEvent(f.ctx, f.site, app.LeadRef{LeadAdsID: bigLead},
		&app.LeadEventInput{Type: app.TypeStage, Stage: "won", At: at.Format(time.RFC3339)}); err != nil {
		t.Fatal(err)
	}
	f.run(t)
	won := f.events(t)["Purchase"]
	if len(won) != 1 || won[0].UserData.LeadID != json.Number(bigLead) || won[0].EventTime != at.Unix() ||
		won[0].ActionSource != capi.SourceSystemGenerated || won[0].CustomData["event_source"] != "crm" ||
		won[0].CustomData["lead_event_source"] != "DentCRM" {
		t.Fatalf("stage event %+v", won)
	}
}

// TestJunkInstantForm: a pitch on an Instant Form is junk and nothing goes
// to Meta for it.
func TestJunkInstantForm(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	l := f.lead("1200000000000444", 5, func(l *graphtest.Lead) {
		l.Fields[4].Values = []string{"Merhaba, web siteniz için SEO ve Google reklam ajansı hizmeti sunuyoruz, fiyat teklifi için arayın."}
		l.Fields[2].Values = []string{"+905555555555"}
	})
	got := f.deliverLead(t, l)
	if got.Verdict != model.VerdictJunk || len(f.g.Events()) != 0 {
		t.Fatalf("verdict %s %+v, %d events", got.Verdict, got.Reasons, len(f.g.Events()))
	}
}

// TestGraphErrors: a transient error retries with backoff; a refused token
// pauses the site's fetches (and only those), says so, and resumes with a
// new token; a missing permission says which; nothing is lost.
func TestGraphErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	l := f.lead("1200000000000555", 5, nil)
	body := webhook([]change{{leadgen: l.ID, form: formID, created: l.Created}})
	f.post(t, body, sign(body, appSecret))

	f.g.FailNext(1, graphtest.FaultServerError)
	if st := f.run(t); st.Retry != 1 {
		t.Fatalf("transient: %+v", st)
	}
	if st := f.run(t); st.Claimed != 0 {
		t.Fatalf("retried before the backoff: %+v", st)
	}
	// The token expires meanwhile.
	f.g.SetTokens("another-token")
	f.clk.Add(time.Hour)
	if st := f.run(t); st.Paused != 1 {
		t.Fatalf("refused token: %+v", st)
	}
	pauses, err := f.db.DestinationPauses(f.ctx, "dent")
	if err != nil || len(pauses) != 1 || !strings.Contains(pauses[0].Reason, "Meta refused the Lead Ads access token") {
		t.Fatalf("pauses %+v %v", pauses, err)
	}
	// A new webhook meanwhile waits with it; Meta's own delivery is not
	// paused.
	l2 := f.lead("1200000000000666", 1, nil)
	body = webhook([]change{{leadgen: l2.ID, form: formID, created: l2.Created}})
	f.post(t, body, sign(body, appSecret))
	if st := f.run(t); st.Paused != 1 || st.Sent != 0 {
		t.Fatalf("while paused: %+v", st)
	}
	if s, _ := f.db.SiteByID(f.ctx, "dent"); s.PausedReason != "" {
		t.Fatalf("Meta's delivery paused: %q", s.PausedReason)
	}
	// A new token lifts the pause.
	f.site.LeadAds.AccessToken = "another-token"
	if err := f.db.SiteUpsert(f.ctx, f.site, f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if st := f.run(t); st.Resumed != 2 || st.Sent != 2 {
		t.Fatalf("after the new token: %+v", st)
	}
	// A missing permission pauses, naming it.
	f.g.SetPermission("leads_retrieval", "declined")
	l3 := f.lead("1200000000000777", 1, nil)
	body = webhook([]change{{leadgen: l3.ID, form: formID, created: l3.Created}})
	f.post(t, body, sign(body, appSecret))
	f.run(t)
	p, err := f.db.DestinationPauseOf(f.ctx, model.Share{Site: "dent", Destination: model.DestinationMetaLeadgen})
	if err != nil || !strings.Contains(p.Reason, "lacks leads_retrieval") {
		t.Fatalf("pause %+v %v", p, err)
	}
	// A lead Meta has no more is dead, not retried forever.
	f.g.SetPermission("leads_retrieval", "granted")
	if err := f.db.DestinationResume(f.ctx, model.Share{Site: "dent", Destination: model.DestinationMetaLeadgen}); err != nil {
		t.Fatal(err)
	}
	gone := webhook([]change{{leadgen: "1200000000000888", form: formID, created: f.clk.Now()}})
	f.post(t, gone, sign(gone, appSecret))
	if st := f.run(t); st.Sent != 1 || st.Dead != 1 {
		t.Fatalf("after the permission: %+v", st)
	}
	if f.leadCount(t) != 3 {
		t.Fatalf("%d leads, want 3", f.leadCount(t))
	}
}

// TestBackfill: a webhook lost during an outage arrives by the backfill
// exactly once, leads from before the webhook too, with paging and the
// watermark; a late webhook for a backfilled lead adds nothing.
func TestBackfill(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// Before the webhook was set up: 130 leads over the last days, more
	// than a page.
	for i := range 130 {
		f.lead(fmt.Sprintf("13000000000%05d", i), 60*24*3-i*30, nil)
	}
	seen := f.lead("1400000000000001", 20, nil)
	body := webhook([]change{{leadgen: seen.ID, form: formID, created: seen.Created}})
	f.post(t, body, sign(body, appSecret))
	f.run(t)
	// Lost: Meta gave up on this one's webhook during our outage.
	lost := f.lead("1400000000000002", 10, nil)

	st, err := f.la.Backfill(f.ctx)
	if err != nil || st.Created != 131 || st.Read != 132 {
		t.Fatalf("backfill %+v %v", st, err)
	}
	if f.leadCount(t) != 132 {
		t.Fatalf("%d leads", f.leadCount(t))
	}
	got := f.leadByAdsID(t, lost.ID)
	if got.SourceDetail["via"] != "backfill" || got.SourceDetail["form_name"] != "Form "+formID {
		t.Errorf("backfilled lead %v", got.SourceDetail)
	}
	// Again: from the watermark, nothing new.
	f.clk.Add(time.Hour)
	if st, err := f.la.Backfill(f.ctx); err != nil || st.Created != 0 || st.Read > 3 {
		t.Fatalf("second pass %+v %v", st, err)
	}
	// The lost webhook arrives late after all: nothing is queued.
	body = webhook([]change{{leadgen: lost.ID, form: formID, created: lost.Created}})
	if code, resp := f.post(t, body, sign(body, appSecret)); code != 200 || !strings.Contains(resp, `"duplicate":1`) {
		t.Fatalf("late webhook %d %s", code, resp)
	}
	if f.leadCount(t) != 132 {
		t.Fatalf("%d leads after the late webhook", f.leadCount(t))
	}
	// A new lead after the watermark is found, once.
	f.lead("1400000000000003", 1, nil)
	if st, err := f.la.Backfill(f.ctx); err != nil || st.Created != 1 {
		t.Fatalf("third pass %+v %v", st, err)
	}
	// Meta down: the watermark stays and nothing is lost.
	f.g.FailFor(time.Minute, graphtest.FaultServerError)
	next := f.lead("1400000000000004", 0, nil)
	if _, err := f.la.Backfill(f.ctx); err == nil {
		t.Fatal("backfill during an outage reported no error")
	}
	f.clk.Add(2 * time.Minute)
	if st, err := f.la.Backfill(f.ctx); err != nil || st.Created != 1 {
		t.Fatalf("after the outage %+v %v", st, err)
	}
	f.leadByAdsID(t, next.ID)
}

func TestCheck(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.g.AddForm(pageID, formID, "Implant formu")
	report := func() (ok bool, text string) {
		t.Helper()
		findings, err := f.la.Check(f.ctx, "dent")
		if err != nil {
			t.Fatal(err)
		}
		ok = true
		var b strings.Builder
		for _, fd := range findings {
			ok = ok && fd.OK
			b.WriteString(fd.What + " " + fd.Fix + "\n")
		}
		return ok, b.String()
	}
	if ok, text := report(); ok || !strings.Contains(text, "Page "+pageID+" sends no leadgen webhooks") {
		t.Errorf("no subscription:\n%s", text)
	}
	f.g.SetSubscribedApps(pageID, graphtest.App{ID: "555000111", Name: "Dent CRM", Fields: []string{"leadgen", "feed"}})
	if ok, text := report(); !ok || !strings.Contains(text, "sends leadgen webhooks to Dent CRM") || !strings.Contains(text, "1 Instant Form") {
		t.Errorf("all right:\n%s", text)
	}
	f.g.SetPermission("pages_manage_metadata", "declined")
	if ok, text := report(); ok || !strings.Contains(text, "lacks the permission(s) pages_manage_metadata") {
		t.Errorf("missing permission:\n%s", text)
	}
	f.g.SetPermission("pages_manage_metadata", "granted")
	f.g.SetAppSecret("another-secret")
	if ok, text := report(); ok || !strings.Contains(text, "appsecret_proof") {
		t.Errorf("wrong app secret:\n%s", text)
	}
	f.g.SetAppSecret(appSecret)
	f.g.SetTokens("another-token")
	if ok, text := report(); ok || !strings.Contains(text, "Meta refused the Lead Ads access token") {
		t.Errorf("bad token:\n%s", text)
	}
	// Fixed: a paused site resumes.
	f.g.SetTokens(graphtest.Token)
	if err := f.db.DestinationPauseSet(f.ctx, model.Share{Site: "dent", Destination: model.DestinationMetaLeadgen}, "the Lead Ads token lacks leads_retrieval", f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if ok, text := report(); !ok || !strings.Contains(text, "resume now") {
		t.Errorf("resume:\n%s", text)
	}
	if p, _ := f.db.DestinationPauses(f.ctx, "dent"); len(p) != 0 {
		t.Errorf("still paused: %+v", p)
	}
}

// TestInstantFormWithoutTextWaitsForCRM: an Instant Form with only Meta's
// pre-filled contact questions says nothing of what the person wants, so
// it is held for review and only its Lead event goes; a CRM stage named by
// the Lead Ads id is the evidence: the qualified event follows, then the
// stage, both with lead_id as Conversion Leads expects.
func TestInstantFormWithoutTextWaitsForCRM(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.site.Settings.Meta.Stages["meeting"] = model.StageEvent{Event: "Schedule"}
	if err := f.db.SiteUpsert(f.ctx, f.site, f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	l := f.lead("1200000000001212", 5, func(l *graphtest.Lead) { l.Fields = l.Fields[:4] })
	got := f.deliverLead(t, l)
	if got.Verdict != model.VerdictReview {
		t.Fatalf("a form that says nothing: verdict %s %+v", got.Verdict, got.Reasons)
	}
	if evs := f.events(t); len(evs["Lead"]) != 1 || len(evs["QualifiedLead"]) != 0 {
		t.Fatalf("before the stage Meta took %v", evs)
	}
	f.clk.Add(2 * time.Hour)
	at := f.clk.Now().Add(-15 * time.Minute)
	if _, err := f.svc.AddEvent(f.ctx, f.site, app.LeadRef{LeadAdsID: l.ID},
		&app.LeadEventInput{Type: app.TypeStage, Stage: "meeting", At: at.Format(time.RFC3339)}); err != nil {
		t.Fatal(err)
	}
	f.run(t)
	if got := f.leadByAdsID(t, l.ID); got.Verdict != model.VerdictClean || got.DecidedBy != "crm" {
		t.Fatalf("after the stage: %s by %s", got.Verdict, got.DecidedBy)
	}
	evs := f.events(t)
	if len(evs["QualifiedLead"]) != 1 || len(evs["Schedule"]) != 1 {
		t.Fatalf("after the stage Meta took %d QualifiedLead, %d Schedule", len(evs["QualifiedLead"]), len(evs["Schedule"]))
	}
	for _, e := range []capi.Event{evs["QualifiedLead"][0], evs["Schedule"][0]} {
		if e.UserData.LeadID != json.Number(l.ID) || e.ActionSource != capi.SourceSystemGenerated ||
			e.CustomData["event_source"] != "crm" || e.CustomData["lead_event_source"] != "DentCRM" || len(e.UserData.Phone) != 1 {
			t.Errorf("%s is not Conversion Leads' shape: %+v", e.EventName, e)
		}
	}
	if evs["Schedule"][0].EventTime != at.Unix() {
		t.Errorf("stage at %d, want its own time %d", evs["Schedule"][0].EventTime, at.Unix())
	}
}

// TestForgottenLeadStaysGone: Lead Ads leads erased with forget keep no
// lead id (nor their fetch jobs), and neither Meta's redelivered webhook
// nor the backfill's overlap stores the person again.
func TestForgottenLeadStaysGone(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	l := f.lead("1200000000001313", 5, nil)
	lost := f.lead("1200000000001414", 4, func(l *graphtest.Lead) {
		l.Fields[1].Values = []string{"ayse.yilmaz313@gmail.com"} // the same person, again
	})
	f.deliverLead(t, l)
	// The second one's webhook was lost: the backfill finds it, and sets
	// the watermark.
	if st, err := f.la.Backfill(f.ctx); err != nil || st.Created != 1 {
		t.Fatalf("backfill %+v %v", st, err)
	}
	res, err := f.svc.Forget(f.ctx, app.ForgetInput{Email: "ayse.yilmaz313@gmail.com"})
	if err != nil || res.Leads != 2 {
		t.Fatalf("forget %+v %v", res, err)
	}
	for _, id := range []string{l.ID, lost.ID} {
		if _, err := f.db.LeadFind(f.ctx, "dent", store.LeadLookup{LeadAdsID: id}); err == nil {
			t.Errorf("lead %s still found by its Lead Ads id", id)
		}
		if ds, _ := f.db.DeliveryList(f.ctx, store.DeliveryFilter{Site: "dent", Limit: 100}); len(ds) > 0 {
			for _, d := range ds {
				if d.EventID == id || strings.Contains(string(d.Payload), id) {
					t.Errorf("outbox row %s %s still names %s: %s", d.Kind, d.State, id, d.Payload)
				}
			}
		}
	}
	all, _ := f.db.LeadList(f.ctx, store.LeadFilter{Site: "dent", Limit: 10})
	for _, x := range all {
		b, _ := json.Marshal(x)
		if strings.Contains(string(b), l.ID) || strings.Contains(string(b), lost.ID) {
			t.Errorf("a redacted lead still names its leadgen id: %s", b)
		}
	}
	// Meta redelivers; the backfill reads the form again with its overlap.
	f.clk.Add(time.Minute)
	body := webhook([]change{{leadgen: l.ID, form: formID, created: l.Created}}, []change{{leadgen: lost.ID, form: formID, created: lost.Created}})
	if code, resp := f.post(t, body, sign(body, appSecret)); code != 200 || !strings.Contains(resp, `"queued":0`) {
		t.Fatalf("redelivery %d %s", code, resp)
	}
	f.run(t)
	if st, err := f.la.Backfill(f.ctx); err != nil || st.Created != 0 || st.Read == 0 {
		t.Fatalf("backfill after forget %+v %v", st, err)
	}
	if n := f.leadCount(t); n != 2 {
		t.Fatalf("%d leads, want the 2 redacted ones only", n)
	}
	if left, _ := f.db.LeadsByPerson(f.ctx, store.PersonLookup{Email: "ayse.yilmaz313@gmail.com"}); len(left) != 0 {
		t.Fatalf("the person is back: %d leads", len(left))
	}
}

// TestInstantFormOwnerWord: the owner's "real customer" on a silent
// Instant Form lead sends its qualified event as Conversion Leads expects
// (lead_id, system_generated, crm), once; the owner's junk on another one
// sends nothing more for it.
func TestInstantFormOwnerWord(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	yes := f.lead("1200000000001515", 5, func(l *graphtest.Lead) { l.Fields = l.Fields[:4] })
	no := f.lead("1200000000001616", 5, func(l *graphtest.Lead) { l.Fields = l.Fields[:4] })
	f.deliverLead(t, yes, no)
	for _, w := range []struct{ id, word string }{{yes.ID, "customer"}, {no.ID, "junk"}} {
		if _, err := f.svc.AddEvent(f.ctx, f.site, app.LeadRef{LeadAdsID: w.id}, &app.LeadEventInput{Type: w.word}); err != nil {
			t.Fatal(err)
		}
	}
	f.run(t)
	q := f.events(t)["QualifiedLead"]
	if len(q) != 1 || q[0].UserData.LeadID != json.Number(yes.ID) || q[0].ActionSource != capi.SourceSystemGenerated ||
		q[0].CustomData["event_source"] != "crm" || q[0].CustomData["lead_event_source"] != "DentCRM" {
		t.Fatalf("after the owner's word Meta took %+v", q)
	}
	if got := f.leadByAdsID(t, no.ID); got.Verdict != model.VerdictJunk || got.DecidedBy != "owner" {
		t.Errorf("owner's junk: %s by %s", got.Verdict, got.DecidedBy)
	}
}

// TestInstantFormOnConsentRequiredSite: a site whose website asks its
// visitors' consent (consent: required) still sends its Instant Form
// leads' events: the person sent the form on Meta's own surface, where no
// website visit asks anything, as a Click-to-WhatsApp lead.
func TestInstantFormOnConsentRequiredSite(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.site.Settings.Consent = model.ConsentRequired
	if err := f.db.SiteUpsert(f.ctx, f.site, f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	l := f.lead("1200000000001717", 5, nil)
	if got := f.deliverLead(t, l); got.Verdict != model.VerdictClean {
		t.Fatalf("verdict %s %+v", got.Verdict, got.Reasons)
	}
	if evs := f.events(t); len(evs["Lead"]) != 1 || len(evs["QualifiedLead"]) != 1 {
		t.Fatalf("Meta took %d Lead, %d QualifiedLead", len(evs["Lead"]), len(evs["QualifiedLead"]))
	}
}

// TestSourceWithoutGraph: without a Graph API reader (a server that runs
// no workers) the Lead Ads source is its webhook only, never a worker
// whose handler could not fetch.
func TestSourceWithoutGraph(t *testing.T) {
	src := leadads.NewSource(source.Deps{})
	if _, ok := src.(source.Worker); ok {
		t.Errorf("a worker without a Graph API reader: %T", src)
	}
	if len(src.Routes()) != 2 || src.Name() != "leadads" {
		t.Errorf("routes %v", src.Routes())
	}
}
