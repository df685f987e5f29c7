package whatsapp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

const (
	wabaID    = "102290129340398"
	datasetID = "1283471935762519"
	waDisplay = "15550783881"
	ctwaClid  = "ARAkLkA8rmlFeiCktEJQ-QTwRiyYHAFDLMNDBH0CD3qpjd0HR4irJ6LEkR7JwFF4XvnO2E4Nx0-eM-GABDLOPaOdRMv-_zfUQ2a"
	bsuid     = "TR.1502576394655843"
)

// newCTWAEnv is newStageEnv with the site's WhatsApp Business Account and
// its dataset: Click-to-WhatsApp leads' events are queued.
func newCTWAEnv(t *testing.T) *env {
	t.Helper()
	return newWhatsAppEnv(t, func(s *model.Site) {
		s.Settings.WhatsApp.BusinessAccountID, s.Settings.WhatsApp.DatasetID = wabaID, datasetID
		s.Settings.WhatsApp.Stages = map[string]string{"meeting": "QualifiedLead"}
		s.Settings.Meta.Stages["won"] = model.StageEvent{Event: "Purchase", Currency: "TRY"}
	})
}

// waMsg is one inbound message for waBatch: from may be empty (a user with
// a username), referral nil (not from an ad).
type waMsg struct {
	id, userID, from, text string
	referral               map[string]string
	at                     time.Time
	// quote is the id of a business message this one replies to.
	quote string
}

// waChange is one change of a webhook: messages or statuses of a number.
type waChange struct {
	msgs     []waMsg
	statuses []map[string]string
}

// waBatch is a WhatsApp Cloud API webhook as Meta sends it: one entry per
// list of changes, each change with its contacts and messages.
func waBatch(entries ...[]waChange) string {
	var es []map[string]any
	for _, changes := range entries {
		var cs []map[string]any
		for _, c := range changes {
			var contacts, msgs []map[string]any
			for _, m := range c.msgs {
				contact := map[string]any{"profile": map[string]string{"name": "Ayşe Yılmaz"}, "user_id": m.userID}
				msg := map[string]any{"id": m.id, "from_user_id": m.userID, "timestamp": fmt.Sprint(m.at.Unix()),
					"type": "text", "text": map[string]string{"body": m.text}}
				if m.from != "" {
					contact["wa_id"], msg["from"] = m.from, m.from
				}
				if m.referral != nil {
					msg["referral"] = m.referral
				}
				if m.quote != "" {
					msg["context"] = map[string]string{"from": waDisplay, "id": m.quote}
				}
				contacts, msgs = append(contacts, contact), append(msgs, msg)
			}
			value := map[string]any{"messaging_product": "whatsapp",
				"metadata": map[string]string{"display_phone_number": waDisplay, "phone_number_id": waNumberID}}
			if len(msgs) > 0 {
				value["contacts"], value["messages"] = contacts, msgs
			}
			if len(c.statuses) > 0 {
				value["statuses"] = c.statuses
			}
			cs = append(cs, map[string]any{"field": "messages", "value": value})
		}
		es = append(es, map[string]any{"id": wabaID, "changes": cs})
	}
	b, _ := json.Marshal(map[string]any{"object": "whatsapp_business_account", "entry": es})
	return string(b)
}

func adReferral(clid string) map[string]string {
	r := map[string]string{"source_url": "https://fb.me/3cr4Wqqkv", "source_id": "120226305854810726", "source_type": "ad",
		"headline": "İmplant tedavisi", "body": "Ücretsiz muayene", "media_type": "image"}
	if clid != "" {
		r["ctwa_clid"] = clid
	}
	return r
}

// post sends a signed webhook and returns the outcome counts.
func (e *env) postWA(body string) map[string]float64 {
	e.t.Helper()
	code, _, resp := e.do("POST", "/v1/webhooks/whatsapp", "application/json", body,
		map[string]string{"X-Hub-Signature-256": sign(body, waSecret)})
	if code != 200 {
		e.t.Fatalf("webhook: %d %s", code, resp)
	}
	var out map[string]float64
	json.Unmarshal([]byte(resp), &out)
	return out
}

// ctwaLead returns the site's only WhatsApp lead.
func (e *env) ctwaLeads() []*model.Lead {
	e.t.Helper()
	list, err := e.db.LeadList(context.Background(), store.LeadFilter{Site: "dent", Limit: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []*model.Lead
	for _, l := range list {
		if l.Source == model.SourceWhatsApp {
			out = append(out, l)
		}
	}
	return out
}

func TestCTWAFirstMessage(t *testing.T) {
	e := newCTWAEnv(t)
	now := time.Now().Add(-time.Minute)
	body := waBatch(
		[]waChange{{msgs: []waMsg{{id: "wamid.CTWA1", userID: bsuid, text: "Merhaba, implant tedavisi için yarın randevu almak istiyorum.",
			referral: adReferral(ctwaClid), at: now}}}},
		// A referral without ctwa_clid (a WhatsApp Status ad): no lead.
		[]waChange{{msgs: []waMsg{{id: "wamid.STATUSAD", userID: "TR.9000000000000001", from: "905421112233",
			text: "Merhaba", referral: adReferral(""), at: now}}}},
	)
	got := e.postWA(body)
	if got["lead"] != 1 || got["no_lead"] != 1 {
		t.Fatalf("outcomes %v", got)
	}
	leads := e.ctwaLeads()
	if len(leads) != 1 || e.count() != 1 {
		t.Fatalf("%d WhatsApp leads, %d in all", len(leads), e.count())
	}
	l := leads[0]
	want := map[string]string{model.DetailCTWAClid: ctwaClid, model.DetailAdID: "120226305854810726", model.DetailAdSourceType: "ad",
		model.DetailAdSourceURL: "https://fb.me/3cr4Wqqkv", model.DetailAdHeadline: "İmplant tedavisi",
		model.DetailWABAID: wabaID, model.DetailPhoneNumberID: waNumberID, model.DetailWhatsAppUserID: bsuid}
	for k, v := range want {
		if l.SourceDetail[k] != v {
			t.Errorf("source detail %s = %q, want %q", k, l.SourceDetail[k], v)
		}
	}
	if l.Phone != "" || l.Name != "Ayşe Yılmaz" || !strings.Contains(l.Message, "implant") || l.Verdict != model.VerdictClean {
		t.Errorf("lead %+v", l)
	}
	for _, r := range l.Reasons {
		if r.Code == "FILL_TIME_MISSING" || r.Code == "PHONE_MISSING" || r.Code == "NO_VALID_CONTACT" {
			t.Errorf("a WhatsApp lead was judged by what only forms have: %+v", r)
		}
	}
	d := e.deliveriesOf(string(l.ID))
	if len(d) != 2 {
		t.Fatalf("deliveries %v", d)
	}
	for kind, name := range map[string]string{"lead": "LeadSubmitted", "qualified": "QualifiedLead"} {
		p := d[kind]
		ud, _ := p["user_data"].(map[string]any)
		if p["event_name"] != name || p["action_source"] != "business_messaging" || p["messaging_channel"] != "whatsapp" ||
			p["event_time"] != float64(now.Unix()) || len(ud) != 2 || ud["ctwa_clid"] != ctwaClid ||
			ud["whatsapp_business_account_id"] != wabaID || p["event_source_url"] != nil {
			t.Errorf("%s event %v", kind, p)
		}
	}
	list, _ := e.db.DeliveriesByLead(context.Background(), l.ID)
	for _, dl := range list {
		if dl.PixelID != datasetID {
			t.Errorf("%s goes to %q, not the WABA's dataset", dl.Kind, dl.PixelID)
		}
	}

	// Meta retries the whole post: each message is handled once.
	if got := e.postWA(body); got["duplicate"] != 2 {
		t.Errorf("retry: %v", got)
	}
	if n := len(e.ctwaLeads()); n != 1 {
		t.Errorf("%d leads after a retry", n)
	}
}

func TestCTWALaterMessages(t *testing.T) {
	e := newCTWAEnv(t)
	t0 := time.Now().Add(-10 * time.Minute)
	msg := func(id, text string, at time.Time, ref map[string]string) string {
		return waBatch([]waChange{{msgs: []waMsg{{id: id, userID: bsuid, from: leadPhoneWA, text: text, referral: ref, at: at}}}})
	}
	if got := e.postWA(msg("wamid.1", "Fiyat ne kadar?", t0, adReferral(ctwaClid))); got["lead"] != 1 {
		t.Fatalf("first message: %v", got)
	}
	l := e.ctwaLeads()[0]
	if l.Verdict != model.VerdictReview || l.PhoneKey == "" {
		t.Fatalf("a price-only first message: %v %q", l.Verdict, l.PhoneKey)
	}
	d := e.deliveriesOf(string(l.ID))
	if len(d) != 1 || d["lead"]["event_name"] != "LeadSubmitted" {
		t.Fatalf("a grey lead's events: %v", d)
	}
	// The person goes on before the business answered: the same lead,
	// and no evidence.
	if got := e.postWA(msg("wamid.2", "Bir de kanal tedavisi?", t0.Add(time.Minute), nil)); got["joined"] != 1 {
		t.Fatalf("second message: %v", got)
	}
	// A second tap on the ad: the same conversation.
	if got := e.postWA(msg("wamid.3", "Merhaba", t0.Add(2*time.Minute), adReferral(ctwaClid+"x"))); got["joined"] != 1 {
		t.Fatalf("second tap: %v", got)
	}
	if l := e.ctwaLeads(); len(l) != 1 || l[0].Verdict != model.VerdictReview {
		t.Fatalf("after two more messages: %d leads, %v", len(l), l[0].Verdict)
	}
	// The business answers (the status of its message, to the user id,
	// without the phone), then the person answers it: evidence.
	status := waBatch([]waChange{{statuses: []map[string]string{{"id": "wamid.OUT1", "status": "sent",
		"timestamp": fmt.Sprint(t0.Add(3 * time.Minute).Unix()), "recipient_user_id": bsuid}}}})
	if got := e.postWA(status); got["status"] != 1 {
		t.Fatalf("status: %v", got)
	}
	if got := e.postWA(msg("wamid.4", "Salı 14:00 olur", t0.Add(4*time.Minute), nil)); got["joined"] != 1 {
		t.Fatalf("answer: %v", got)
	}
	after := e.lead(string(l.ID))
	if after["verdict"] != "clean" || after["decided_by"] != "evidence" {
		t.Fatalf("after the answer: %v %v", after["verdict"], after["decided_by"])
	}
	q := e.deliveriesOf(string(l.ID))["qualified"]
	if q == nil || q["event_name"] != "QualifiedLead" || q["action_source"] != "business_messaging" ||
		q["event_time"] != float64(t0.Unix()) {
		t.Errorf("qualified event: %v", q)
	}
	if n := e.count(); n != 1 {
		t.Errorf("%d leads for one conversation", n)
	}
}

func TestCTWAStagesAndJunk(t *testing.T) {
	e := newCTWAEnv(t)
	t0 := time.Now().Add(-time.Hour)
	pitch := waBatch([]waChange{{msgs: []waMsg{{id: "wamid.P", userID: "TR.7000000000000002", from: "905421112233",
		text:     "Merhaba, dijital ajansımızla SEO ve Google reklam hizmeti sunuyoruz, web siteniz için teklif verebilir miyiz?",
		referral: adReferral("AffPitchClid"), at: t0}}}})
	grey := waBatch([]waChange{{msgs: []waMsg{{id: "wamid.G", userID: bsuid, text: "fiyat?", referral: adReferral(ctwaClid), at: t0}}}})
	if got := e.postWA(pitch); got["lead"] != 1 {
		t.Fatalf("pitch: %v", got)
	}
	if got := e.postWA(grey); got["lead"] != 1 {
		t.Fatalf("grey: %v", got)
	}
	var junk, review *model.Lead
	for _, l := range e.ctwaLeads() {
		switch l.Verdict {
		case model.VerdictJunk:
			junk = l
		case model.VerdictReview:
			review = l
		}
	}
	if junk == nil || review == nil {
		t.Fatalf("want a junk and a review lead: %+v", e.ctwaLeads())
	}
	if d := e.deliveriesOf(string(junk.ID)); len(d) != 0 {
		t.Errorf("a pitch queued events: %v", d)
	}

	// The CRM names the lead by the WhatsApp user id: meeting (sent as
	// QualifiedLead for WhatsApp leads) qualifies it, won is a Purchase
	// with its value.
	tMeet := time.Now().Add(-30 * time.Minute).UTC().Truncate(time.Second)
	for _, c := range []string{
		`{"lead":{"whatsapp_user_id":"` + bsuid + `"},"type":"stage","stage":"meeting","at":"` + tMeet.Format(time.RFC3339) + `"}`,
		`{"lead":{"whatsapp_user_id":"` + bsuid + `"},"type":"stage","stage":"qualified"}`,
		`{"lead":{"whatsapp_user_id":"` + bsuid + `"},"type":"stage","stage":"won","value":4500}`,
	} {
		code, _, body := e.do("POST", "/v1/events", "application/json", c, withKey)
		if code != 200 || !strings.Contains(body, string(review.ID)) {
			t.Fatalf("%s: %d %s", c, code, body)
		}
	}
	list, _ := e.db.DeliveriesByLead(context.Background(), review.ID)
	names := map[string]int{}
	for _, dl := range list {
		names[dl.EventName]++
		var p map[string]any
		json.Unmarshal(dl.Payload, &p)
		if p["action_source"] != "business_messaging" || dl.PixelID != datasetID {
			t.Errorf("%s: %v to %s", dl.Kind, p, dl.PixelID)
		}
		if dl.EventName == "Purchase" {
			cd := p["custom_data"].(map[string]any)
			if cd["value"] != 4500.0 || cd["currency"] != "TRY" || cd["event_source"] != nil {
				t.Errorf("purchase custom_data %v", cd)
			}
		}
		if dl.EventName == "QualifiedLead" && p["event_time"] != float64(tMeet.Unix()) {
			t.Errorf("QualifiedLead at %v, want the meeting's time %d", p["event_time"], tMeet.Unix())
		}
	}
	// One event per lead and name, ever: the meeting is the qualified
	// event; the qualified stage adds nothing.
	if len(list) != 3 || names["LeadSubmitted"] != 1 || names["QualifiedLead"] != 1 || names["Purchase"] != 1 {
		t.Errorf("events %v", names)
	}
	l := e.lead(string(review.ID))
	if l["verdict"] != "clean" {
		t.Errorf("after the stages: %v", l["verdict"])
	}
	// The lead's story names the event the stage was sent as.
	for _, h := range l["history"].([]any) {
		h := h.(map[string]any)
		if d, _ := h["data"].(map[string]any); h["kind"] == "stage" && d["stage"] == "meeting" && d["event_name"] != "QualifiedLead" {
			t.Errorf("meeting's history: %v", d)
		}
	}
}

// TestCTWAQuotedReply: a message quoting one of the business's messages
// answers it even when no status was seen; a first message with only a
// phone is found again by it when later messages bring the user id too.
func TestCTWAQuotedReply(t *testing.T) {
	e := newCTWAEnv(t)
	t0 := time.Now().Add(-10 * time.Minute)
	first := waBatch([]waChange{{msgs: []waMsg{{id: "wamid.Q1", from: leadPhoneWA, text: "fiyat?", referral: adReferral(ctwaClid), at: t0}}}})
	if got := e.postWA(first); got["lead"] != 1 {
		t.Fatalf("first: %v", got)
	}
	later := waBatch([]waChange{{msgs: []waMsg{{id: "wamid.Q2", userID: bsuid, from: leadPhoneWA, text: "tamam", at: t0.Add(time.Minute)}}}})
	if got := e.postWA(later); got["joined"] != 1 {
		t.Fatalf("later: %v", got)
	}
	if l := e.ctwaLeads(); len(l) != 1 || l[0].Verdict != model.VerdictReview {
		t.Fatalf("an unquoted message before the business wrote: %+v", l)
	}
	quoted := waBatch([]waChange{{msgs: []waMsg{{id: "wamid.Q3", userID: bsuid, from: leadPhoneWA, text: "Evet, salı",
		at: t0.Add(2 * time.Minute), quote: "wamid.BUSINESS1"}}}})
	if got := e.postWA(quoted); got["joined"] != 1 {
		t.Fatalf("quoted: %v", got)
	}
	if l := e.ctwaLeads(); len(l) != 1 || l[0].Verdict != model.VerdictClean || l[0].DecidedBy != model.DecidedByEvidence {
		t.Errorf("after a quoted reply: %+v", l[0].Decision)
	}
	// A message naming no sender at all is no one's.
	anon := `{"object":"whatsapp_business_account","entry":[{"id":"` + wabaID + `","changes":[{"field":"messages","value":{` +
		`"metadata":{"phone_number_id":"` + waNumberID + `"},"messages":[{"id":"wamid.ANON","type":"text","text":{"body":"x"},` +
		`"referral":{"ctwa_clid":"AffAnon","source_type":"ad"}}]}}]}]}`
	if got := e.postWA(anon); got["no_lead"] != 1 || e.count() != 1 {
		t.Errorf("anonymous message: %v, %d leads", got, e.count())
	}
}
