package web_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
	"github.com/cleanads/cleanads/internal/web"
)

// syncEnv is a CTWA-ready site dent (stages meeting and won) and site
// other, served over HTTP with a clock the test moves.
type syncEnv struct {
	*env
	clk *testkit.Clock
}

func newSyncEnv(t *testing.T) *syncEnv {
	t.Helper()
	db := storetest.New(t)
	clk := testkit.NewClock(time.Now().UTC().Truncate(time.Second))
	testkit.AddSite(t, db, testkit.Site(testkit.WithMeta("123456789012345", model.ModeDryRun), func(s *model.Site) {
		s.Name, s.APIKeyHash, s.Settings.Origins = "Istanbul Dental", model.HashAPIKey(apiKey), []string{origin}
		s.Settings.WhatsApp.PhoneNumberIDs = []string{waNumberID}
		s.Settings.WhatsApp.BusinessAccountID, s.Settings.WhatsApp.DatasetID = wabaID, datasetID
		s.Settings.WhatsApp.Stages = map[string]string{"meeting": "QualifiedLead"}
		s.Settings.Meta.Stages = map[string]model.StageEvent{"meeting": {Event: "Schedule"},
			"won": {Event: "Purchase", Currency: "EUR"}}
	}), clk.Now())
	testkit.AddSite(t, db, testkit.Site(func(s *model.Site) {
		s.ID, s.APIKeyHash, s.Settings.Origins = "other", model.HashAPIKey(otherKey), []string{"https://other.example"}
	}), clk.Now())
	svc := app.New(app.Options{Store: db, Now: clk.Now})
	h := web.New(web.Options{App: svc, Store: db, SourceSettings: map[string]string{"whatsapp.verify_token": waVerify, "whatsapp.app_secret": waSecret}}).Handler()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &syncEnv{env: &env{t: t, db: db, srv: srv}, clk: clk}
}

const otherKey = "other-key-0123456789abcdef"

// syncAnswer is GET /v1/leads's answer.
type syncAnswer struct {
	Leads []struct {
		ID        string         `json:"id"`
		Email     string         `json:"email"`
		Verdict   string         `json:"verdict"`
		Reasons   []model.Reason `json:"reasons"`
		ChangedAt time.Time      `json:"changed_at"`
		Stages    []struct {
			Stage    string   `json:"stage"`
			At       string   `json:"at"`
			Value    *float64 `json:"value"`
			Currency string   `json:"currency"`
		} `json:"stages"`
	} `json:"leads"`
	Next  string `json:"next_cursor"`
	More  bool   `json:"more"`
	Until string `json:"until"`
}

func (e *syncEnv) get(query, key string) (int, syncAnswer, string) {
	e.t.Helper()
	hdr := map[string]string{}
	if key != "" {
		hdr["Authorization"] = "Bearer " + key
	}
	code, _, body := e.do("GET", "/v1/leads?"+query, "", "", hdr)
	var a syncAnswer
	if code == 200 {
		if err := json.Unmarshal([]byte(body), &a); err != nil {
			e.t.Fatalf("answer: %v in %s", err, body)
		}
	}
	return code, a, body
}

// post makes a lead from the site's server and returns its id.
func (e *syncEnv) post(fields string) string {
	e.t.Helper()
	code, _, body := e.do("POST", "/v1/leads", "application/json", `{"site":"dent","fill_ms":9000,`+fields+`}`,
		map[string]string{"Authorization": "Bearer " + apiKey})
	if code != 202 {
		e.t.Fatalf("post lead: %d %s", code, body)
	}
	var out struct{ ID string }
	json.Unmarshal([]byte(body), &out)
	if out.ID == "" {
		e.t.Fatalf("the answer names no lead: %s", body)
	}
	return out.ID
}

func (e *syncEnv) stage(id, body string) (int, string) {
	e.t.Helper()
	code, _, resp := e.do("POST", "/v1/leads/"+id+"/events", "application/json", body,
		map[string]string{"Authorization": "Bearer " + apiKey})
	return code, resp
}

// pageAll follows next_cursor from the cursor until a page says no more,
// returning the lead ids in the order listed and the cursor to go on with.
func (e *syncEnv) pageAll(first string, limit int) ([]string, string) {
	e.t.Helper()
	var ids []string
	q := first
	for i := 0; ; i++ {
		code, a, body := e.get(q+fmt.Sprintf("&limit=%d", limit), apiKey)
		if code != 200 {
			e.t.Fatalf("page %d: %d %s", i, code, body)
		}
		if len(a.Leads) > limit {
			e.t.Fatalf("page %d holds %d leads, limit %d", i, len(a.Leads), limit)
		}
		for _, l := range a.Leads {
			ids = append(ids, l.ID)
		}
		if a.Next == "" {
			e.t.Fatalf("page %d has no next_cursor: %s", i, body)
		}
		if !a.More {
			return ids, a.Next
		}
		q = "cursor=" + url.QueryEscape(a.Next)
	}
}

// The CRM sync: leads changed since a time, paged by a cursor; a page is
// complete up to SyncSettle ago; a lead changed while a client pages comes
// again after the cursor; leads of another site never show.
func TestLeadSyncChanges(t *testing.T) {
	e := newSyncEnv(t)
	start := e.clk.Now()
	var ids []string
	for i := 0; i < 5; i++ {
		ids = append(ids, e.post(fmt.Sprintf(`"email":"ayse%d@gmail.com","phone":"0532 412 87 %02d","name":"Ayşe Yılmaz","message":"Implant için randevu almak istiyorum, uygun gün var mı?"`, i, 10+i)))
		e.clk.Add(time.Second)
	}
	since := "changed_since=" + url.QueryEscape(start.Format(time.RFC3339))

	// Inside the settle time nothing is listed yet; the cursor it gives
	// still finds them once they settle.
	_, a, _ := e.get(since, apiKey)
	if len(a.Leads) != 0 || a.More {
		t.Fatalf("leads younger than the settle time were listed: %+v", a)
	}
	e.clk.Add(app.SyncSettle)
	got, next := e.pageAll(since, 2)
	if fmt.Sprint(got) != fmt.Sprint(ids) {
		t.Fatalf("listed %v, want %v in the order they came", got, ids)
	}

	// Nothing new: the cursor answers an empty page and itself.
	_, a, _ = e.get("cursor="+url.QueryEscape(next), apiKey)
	if len(a.Leads) != 0 || a.Next != next {
		t.Fatalf("an unchanged site listed %+v", a)
	}

	// While a client pages, a new lead arrives and an old one reaches a
	// stage: each is listed once, after what was listed, the changed one
	// with its stage.
	e.clk.Add(time.Second)
	_, a2, _ := e.get("cursor="+url.QueryEscape(next)+"&limit=1", apiKey)
	if len(a2.Leads) != 0 {
		t.Fatalf("listed %+v", a2)
	}
	if code, body := e.stage(ids[1], `{"type":"stage","stage":"won","value":4200}`); code != 200 {
		t.Fatalf("stage: %d %s", code, body)
	}
	e.clk.Add(time.Second)
	newID := e.post(`"email":"mehmet@gmail.com","phone":"0532 412 87 99","name":"Mehmet Demir","message":"Diş beyazlatma fiyatı nedir, randevu almak istiyorum"`)
	e.clk.Add(app.SyncSettle)
	got, _ = e.pageAll("cursor="+url.QueryEscape(next), 1)
	if fmt.Sprint(got) != fmt.Sprint([]string{ids[1], newID}) {
		t.Fatalf("after the cursor: %v, want %v", got, []string{ids[1], newID})
	}
	_, a, _ = e.get("email=ayse1@gmail.com", apiKey)
	if len(a.Leads) != 1 || len(a.Leads[0].Stages) != 1 || a.Leads[0].Stages[0].Stage != "won" ||
		a.Leads[0].Stages[0].Currency != "EUR" || a.Leads[0].Stages[0].Value == nil || *a.Leads[0].Stages[0].Value != 4200 {
		t.Fatalf("the changed lead's stage: %+v", a.Leads)
	}
	if a.Leads[0].Verdict == "" || a.Leads[0].ChangedAt.Before(start.Add(6*time.Second)) {
		t.Errorf("verdict or changed_at: %+v", a.Leads[0])
	}

	// The whole list again, from the start: every lead once, the changed
	// one in the place of its change.
	got, _ = e.pageAll(since, 3)
	want := []string{ids[0], ids[2], ids[3], ids[4], ids[1], newID}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("from the start: %v, want %v", got, want)
	}

	// Another site's key sees none of them; no key is refused; a forged
	// cursor is a 400.
	if _, a, _ := e.get(since, otherKey); len(a.Leads) != 0 {
		t.Errorf("site other listed dent's leads: %+v", a.Leads)
	}
	if code, _, _ := e.get(since, ""); code != 401 {
		t.Errorf("no key: %d", code)
	}
	for _, q := range []string{"cursor=nonsense", "changed_since=yesterday", "limit=0&" + since, "limit=501&" + since, ""} {
		if code, _, body := e.get(q, apiKey); code != 400 {
			t.Errorf("%s: %d %s", q, code, body)
		}
	}
}

// Look-ups by the keys a CRM knows, each answering with the verdict,
// reasons and stages; e-mail and phone normalised as stored.
func TestLeadSyncLookups(t *testing.T) {
	e := newSyncEnv(t)
	web1 := e.post(`"email":"Ayse.Yilmaz@Gmail.com","phone":"0532 412 87 19","name":"Ayşe Yılmaz","external_id":"crm-77","message":"Implant için randevu almak istiyorum, uygun gün var mı?"`)
	e.clk.Add(time.Minute)
	web2 := e.post(`"email":"ayse.yilmaz@gmail.com","name":"Ayşe Yılmaz","lead_id":"1202345678901234","message":"Implant için randevu almak istiyorum, bir de fiyat?"`)
	if code, body := e.stage(web1, `{"type":"stage","stage":"meeting","at":"`+e.clk.Now().Add(-time.Hour).Format(time.RFC3339)+`"}`); code != 200 {
		t.Fatalf("stage: %d %s", code, body)
	}
	// A Click-to-WhatsApp lead, named by the person's user id; the
	// webhook's answer names it.
	// (The webhook's bodies in all their forms are internal/whatsapp's
	// tests'; this is the one a message from an ad takes.)
	waPost := fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":%q,"changes":[{"field":"messages","value":{
		"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":%q},
		"contacts":[{"profile":{"name":"Ayşe Yılmaz"},"user_id":%q}],
		"messages":[{"id":"wamid.sync1","from_user_id":%q,"timestamp":"%d","type":"text",
			"text":{"body":"Merhaba, implant fiyatı ve randevu için bilgi alabilir miyim?"},
			"referral":{"source_url":"https://fb.me/3cr4Wqqkv","source_id":"120226305854810726","source_type":"ad","ctwa_clid":"ARAc-sync"}}]}}]}]}`,
		wabaID, waNumberID, bsuid, bsuid, e.clk.Now().Unix())
	code, _, resp := e.do("POST", "/v1/webhooks/whatsapp", "application/json", waPost,
		map[string]string{"X-Hub-Signature-256": sign(waPost, waSecret)})
	var wa struct{ Leads []string }
	json.Unmarshal([]byte(resp), &wa)
	if code != 200 || len(wa.Leads) != 1 {
		t.Fatalf("whatsapp webhook: %d %s", code, resp)
	}

	for _, c := range []struct {
		q    string
		want []string
	}{
		{"email=" + url.QueryEscape(" AYSE.yilmaz@gmail.com "), []string{web2, web1}},
		{"phone=" + url.QueryEscape("+90 (532) 412-87-19"), []string{web1}},
		{"phone=05324128719", []string{web1}},
		{"lead_id=1202345678901234", []string{web2}},
		{"external_id=crm-77", []string{web1}},
		{"whatsapp_user_id=" + bsuid, wa.Leads},
		{"email=nobody@gmail.com", nil},
	} {
		code, a, body := e.get(c.q, apiKey)
		if code != 200 {
			t.Errorf("%s: %d %s", c.q, code, body)
			continue
		}
		var got []string
		for _, l := range a.Leads {
			got = append(got, l.ID)
			if l.Verdict == "" || l.Reasons == nil {
				t.Errorf("%s: no verdict or reasons in %s", c.q, body)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: %v, want %v", c.q, got, c.want)
		}
		if c.q == "external_id=crm-77" && (len(a.Leads[0].Stages) != 1 || a.Leads[0].Stages[0].Stage != "meeting") {
			t.Errorf("stages of the looked-up lead: %s", body)
		}
	}
	// Another site's key finds nothing; two keys at once, or a phone that
	// is none, are 400s.
	if _, a, _ := e.get("email=ayse.yilmaz@gmail.com", otherKey); len(a.Leads) != 0 {
		t.Errorf("site other found dent's leads: %+v", a.Leads)
	}
	for _, q := range []string{"email=a@gmail.com&phone=05324128719", "phone=abc", "email=not-an-email"} {
		if code, _, body := e.get(q, apiKey); code != 400 {
			t.Errorf("%s: %d %s", q, code, body)
		}
	}
	// The single lead's answer carries its stages too.
	if l := e.lead(web1); fmt.Sprint(l["stages"]) == "[]" || l["stages"] == nil {
		t.Errorf("GET /v1/leads/{id} has no stages: %v", l["stages"])
	}
}
