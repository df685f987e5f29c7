package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
)

// withStages gives the fixture's site the stages of the issue, and a
// WhatsApp number.
func (f *fixture) withStages() {
	f.t.Helper()
	f.site.Settings.Meta.Stages = map[string]model.StageEvent{
		"qualified": {Event: "QualifiedLead"},
		"meeting":   {Event: "Schedule"},
		"won":       {Event: "Purchase", Value: 5000, Currency: "EUR"},
	}
	f.site.Settings.WhatsApp.PhoneNumberIDs = []string{"106540352242922"}
	if err := f.db.SiteUpsert(context.Background(), f.site, f.clk.Now()); err != nil {
		f.t.Fatal(err)
	}
	site, err := f.db.SiteByID(context.Background(), f.site.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	f.site = site
}

// crmLead is a grey lead (review: a link and no fill time) with every
// identity a stage must carry.
func crmLead() *app.LeadInput {
	in := greyLead()
	in.Message = "Bu sayfadaki fiyat hala geçerli mi? https://www.istanbuldis.example/implant"
	in.FillMS = nil
	in.Email = "Mehmet.Demir@Gmail.com"
	in.ExternalID = "crm-4711"
	in.LeadAdsID = "120212345678901234"
	in.FBC = "fb.1.1764583200000.IwAR2xyz"
	in.FBP = "fb.1.1764583100000.1234567890"
	return in
}

// sent is a queued event as it will go to Meta.
type sent struct {
	EventName    string         `json:"event_name"`
	EventTime    int64          `json:"event_time"`
	EventID      string         `json:"event_id"`
	ActionSource string         `json:"action_source"`
	CustomData   map[string]any `json:"custom_data"`
	UserData     struct {
		Email      []string        `json:"em"`
		Phone      []string        `json:"ph"`
		ExternalID []string        `json:"external_id"`
		FBC        string          `json:"fbc"`
		FBP        string          `json:"fbp"`
		LeadID     json.RawMessage `json:"lead_id"`
	} `json:"user_data"`
}

func (f *fixture) sentByKind(id model.LeadID) map[string]sent {
	f.t.Helper()
	out := map[string]sent{}
	for kind, d := range f.deliveries(id) {
		var ev sent
		if err := json.Unmarshal(d.Payload, &ev); err != nil {
			f.t.Fatal(err)
		}
		if ev.EventID != d.EventID || ev.EventName != d.EventName {
			f.t.Errorf("row and payload disagree: %+v %s", d, d.Payload)
		}
		out[kind] = ev
	}
	return out
}

func (f *fixture) stage(id model.LeadID, in app.LeadEventInput) (*model.Lead, error) {
	in.Type = app.TypeStage
	return f.svc.AddLeadEvent(context.Background(), f.site, id, &in)
}

func f64(v float64) *float64 { return &v }

func TestStagesReachMetaOnceWithTheLeadsIdentity(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.withStages()
	lead := f.submit(crmLead())
	if lead.Verdict != model.VerdictReview {
		t.Fatalf("want a review lead, got %s", lead.Verdict)
	}
	t1 := f.clk.Now().Add(20 * time.Hour)
	t2 := t1.Add(48 * time.Hour)
	t3 := t2.Add(72 * time.Hour)

	f.clk.Set(t1.Add(time.Minute))
	after, err := f.stage(lead.ID, app.LeadEventInput{Stage: "qualified", At: t1.Format(time.RFC3339)})
	if err != nil {
		t.Fatal(err)
	}
	if after.Verdict != model.VerdictClean || after.DecidedBy != model.DecidedByCRM || !hasReason(after, qualify.CodeCRMQualified) {
		t.Fatalf("qualified stage: %+v", after.Decision)
	}
	f.clk.Set(t2.Add(time.Minute))
	if _, err := f.stage(lead.ID, app.LeadEventInput{Stage: "Meeting", At: t2.Format(time.RFC3339), ActionSource: "phone_call"}); err != nil {
		t.Fatal(err)
	}
	f.clk.Set(t3.Add(time.Minute))
	if _, err := f.stage(lead.ID, app.LeadEventInput{Stage: "won", At: t3.Format(time.RFC3339), Value: f64(6000), Currency: "eur"}); err != nil {
		t.Fatal(err)
	}

	ev := f.sentByKind(lead.ID)
	want := []struct {
		kind, name, source string
		at                 time.Time
		value              any
	}{
		{model.KindQualified, "QualifiedLead", "system_generated", t1, nil},
		{"stage:meeting", "Schedule", "phone_call", t2, nil},
		{"stage:won", "Purchase", "system_generated", t3, 6000.0},
	}
	delete(ev, model.KindLead) // the raw lead event, queued at submit
	if len(ev) != 3 {
		t.Errorf("want 3 stage events, got %d: %v", len(ev), ev)
	}
	queued := len(f.deliveries(lead.ID))
	email, _ := capi.HashField(capi.FieldEmail, "mehmet.demir@gmail.com", "TR")
	phone := capi.Hash("905332184490")
	ext, _ := capi.HashField(capi.FieldExternalID, "crm-4711", "TR")
	for _, w := range want {
		e, ok := ev[w.kind]
		if !ok {
			t.Errorf("no %s event", w.kind)
			continue
		}
		if e.EventName != w.name || e.EventTime != w.at.Unix() || e.ActionSource != w.source ||
			e.EventID != capi.QualifiedEventID(lead.ID, w.kind) {
			t.Errorf("%s: %+v", w.kind, e)
		}
		if e.CustomData["event_source"] != "crm" || e.CustomData["lead_event_source"] != "CleanAds" || e.CustomData["value"] != w.value {
			t.Errorf("%s custom_data: %v", w.kind, e.CustomData)
		}
		u := e.UserData
		if len(u.Email) != 1 || u.Email[0] != email || len(u.Phone) != 1 || u.Phone[0] != phone ||
			len(u.ExternalID) != 1 || u.ExternalID[0] != ext || u.FBC != "fb.1.1764583200000.IwAR2xyz" ||
			u.FBP != "fb.1.1764583100000.1234567890" || string(u.LeadID) != "120212345678901234" {
			t.Errorf("%s user_data is not the lead's: %+v", w.kind, u)
		}
	}
	if c := ev["stage:won"].CustomData["currency"]; c != "EUR" {
		t.Errorf("currency %v", c)
	}

	// Repeated calls, even with other values or times, add nothing.
	for _, in := range []app.LeadEventInput{
		{Stage: "qualified"}, {Stage: "meeting", At: t2.Format(time.RFC3339)},
		{Stage: "won", Value: f64(9999), Currency: "USD"}, {Stage: "won", At: t3.Add(-10 * 24 * time.Hour).Format(time.RFC3339)},
	} {
		got, err := f.stage(lead.ID, in)
		if err != nil || got.Verdict != model.VerdictClean {
			t.Errorf("repeat %+v: %v", in, err)
		}
	}
	if n := len(f.deliveries(lead.ID)); n != queued {
		t.Errorf("%d deliveries after repeats, want %d", n, queued)
	}
	hist, _ := f.db.HistoryByLead(context.Background(), lead.ID)
	stages := 0
	for i, h := range hist {
		if h.Kind == model.HistoryStage {
			stages++
			if h.Data["stage"] == "qualified" && (i+1 >= len(hist) || hist[i+1].Kind != model.HistoryVerdict) {
				t.Errorf("the qualified stage is not followed by its verdict: %+v", hist)
			}
		}
	}
	if stages != 3 {
		t.Errorf("%d stage entries in the history, want 3: %+v", stages, hist)
	}
}

func TestQualifiedStageOfACleanLeadIsNotSentTwice(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.withStages()
	lead := f.submit(realLead())
	if lead.Verdict != model.VerdictClean {
		t.Fatalf("verdict %s", lead.Verdict)
	}
	for i := 0; i < 2; i++ {
		if _, err := f.stage(lead.ID, app.LeadEventInput{Stage: "qualified"}); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, d := range f.deliveries(lead.ID) {
		if d.EventName == "QualifiedLead" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d QualifiedLead events for one lead", n)
	}
	hist, _ := f.db.HistoryByLead(context.Background(), lead.ID)
	if h := hist[len(hist)-1]; h.Kind != model.HistoryStage || h.Data["stage"] != "qualified" {
		t.Errorf("history: %+v", hist)
	}
}

func TestStageRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.withStages()
	lead := f.submit(crmLead())
	now := f.clk.Now()
	var ie *model.InputError
	cases := []struct {
		name    string
		in      app.LeadEventInput
		field   string
		mention string
	}{
		{"unknown stage", app.LeadEventInput{Stage: "signed"}, "stage", "meeting, qualified, won"},
		{"no stage", app.LeadEventInput{}, "stage", "required"},
		{"negative value", app.LeadEventInput{Stage: "won", Value: f64(-1)}, "value", "0 or more"},
		{"bad currency", app.LeadEventInput{Stage: "won", Currency: "EURO"}, "currency", "3-letter"},
		{"value without currency", app.LeadEventInput{Stage: "meeting", Value: f64(10)}, "currency", "required"},
		{"bad action source", app.LeadEventInput{Stage: "won", ActionSource: "website"}, "action_source", "phone_call"},
		{"bad time", app.LeadEventInput{Stage: "won", At: "yesterday"}, "at", "RFC 3339"},
		{"duration on a stage", app.LeadEventInput{Stage: "won", DurationS: 60}, "duration_s", "call"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.stage(lead.ID, c.in)
			if !errors.As(err, &ie) || ie.Field != c.field || !strings.Contains(ie.Message, c.mention) {
				t.Errorf("got %v, want %s mentioning %q", err, c.field, c.mention)
			}
		})
	}
	if _, err := f.svc.AddLeadEvent(context.Background(), f.site, lead.ID, &app.LeadEventInput{Type: "call", Stage: "won"}); !errors.As(err, &ie) {
		t.Errorf("stage fields on evidence: %v", err)
	}
	if _, err := f.svc.AddLeadEvent(context.Background(), f.site, lead.ID, &app.LeadEventInput{Type: "tweet"}); !errors.As(err, &ie) ||
		!strings.Contains(ie.Message, "stage") {
		t.Errorf("unknown type: %v", err)
	}

	// A stage older than 7 days, or in the future, is refused and recorded.
	f.clk.Set(now.Add(9 * 24 * time.Hour))
	old := now.Add(24 * time.Hour).Format(time.RFC3339)
	_, err := f.stage(lead.ID, app.LeadEventInput{Stage: "won", At: old, Value: f64(6000)})
	if !errors.As(err, &ie) || ie.Field != "at" || !strings.Contains(ie.Message, "7 days") {
		t.Fatalf("old stage: %v", err)
	}
	_, err = f.stage(lead.ID, app.LeadEventInput{Stage: "meeting", At: f.clk.Now().Add(time.Hour).Format(time.RFC3339)})
	if !errors.As(err, &ie) || !strings.Contains(ie.Message, "future") {
		t.Fatalf("future stage: %v", err)
	}
	hist, _ := f.db.HistoryByLead(context.Background(), lead.ID)
	refused := 0
	for _, h := range hist {
		if h.Kind == model.HistoryStage && h.Data["refused"] != nil {
			refused++
		}
	}
	if refused != 2 {
		t.Errorf("refusals recorded: %d in %+v", refused, hist)
	}
	for kind := range f.deliveries(lead.ID) {
		if strings.HasPrefix(kind, model.KindStage) {
			t.Errorf("a refused stage was queued: %s", kind)
		}
	}
	// Refused, the stage is still free: the right time is accepted.
	if _, err := f.stage(lead.ID, app.LeadEventInput{Stage: "won", At: f.clk.Now().Add(-time.Hour).Format(time.RFC3339)}); err != nil {
		t.Errorf("corrected stage: %v", err)
	}
	if ev := f.sentByKind(lead.ID)["stage:won"]; ev.CustomData["value"] != 5000.0 || ev.CustomData["currency"] != "EUR" {
		t.Errorf("the stage's configured value was not used: %v", ev.CustomData)
	}
	// Another site's lead is not found.
	other := &model.Site{ID: "other", Settings: f.site.Settings}
	f.db.SiteUpsert(context.Background(), other, f.clk.Now())
	if _, err := f.svc.AddLeadEvent(context.Background(), other, lead.ID, &app.LeadEventInput{Type: "stage", Stage: "won"}); !errors.Is(err, model.ErrNotFound) {
		t.Errorf("another site's lead: %v", err)
	}
}

func TestNoStagesConfigured(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	lead := f.submit(crmLead())
	_, err := f.stage(lead.ID, app.LeadEventInput{Stage: "won"})
	var ie *model.InputError
	if !errors.As(err, &ie) || !strings.Contains(ie.Message, "meta.stages") {
		t.Errorf("got %v", err)
	}
}

func TestFindLeadWhateverTheFormatting(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	lead := f.submit(crmLead())
	f.clk.Add(time.Hour)
	other := realLead()
	f.submit(other)
	cases := []struct {
		name string
		ref  app.LeadRef
	}{
		{"id", app.LeadRef{ID: string(lead.ID)}},
		{"event_id", app.LeadRef{EventID: lead.EventID}},
		{"external_id", app.LeadRef{ExternalID: "crm-4711"}},
		{"lead ads id", app.LeadRef{LeadAdsID: "120212345678901234"}},
		{"e-mail in capitals with spaces", app.LeadRef{Email: "  MEHMET.DEMIR@gmail.COM "}},
		{"international phone", app.LeadRef{Phone: "+90 (533) 218-44-90"}},
		{"national phone", app.LeadRef{Phone: "0533 2184490"}},
		{"digits", app.LeadRef{Phone: "905332184490"}},
		{"e-mail unknown, phone known", app.LeadRef{Email: "nobody@example.com", Phone: "05332184490"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := f.svc.FindLead(context.Background(), f.site, c.ref)
			if err != nil || got.ID != lead.ID {
				t.Errorf("got %v, %v", got, err)
			}
		})
	}
	if _, err := f.svc.FindLead(context.Background(), f.site, app.LeadRef{Email: "nobody@example.com"}); !errors.Is(err, model.ErrNotFound) {
		t.Errorf("unknown e-mail: %v", err)
	}
	var ie *model.InputError
	if _, err := f.svc.FindLead(context.Background(), f.site, app.LeadRef{}); !errors.As(err, &ie) {
		t.Errorf("no key: %v", err)
	}
	if _, err := f.svc.FindLead(context.Background(), f.site, app.LeadRef{Email: "not-an-address"}); !errors.As(err, &ie) || ie.Field != "lead.email" {
		t.Errorf("bad e-mail: %v", err)
	}
}

func TestWhatsAppReplyConfirmsTheLead(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.withStages()
	lead := f.submit(crmLead())
	f.clk.Add(3 * time.Hour)
	ctx := context.Background()
	msg := app.WhatsAppMessage{ID: "wamid.1", PhoneNumberID: "106540352242922", From: "905332184490",
		FromUserID: "TR.1502576394655843", Type: "text", At: f.clk.Now().Add(-time.Minute)}
	res, err := f.svc.WhatsAppInbound(ctx, msg)
	if err != nil || res.Outcome != app.OutcomeEvidence || res.LeadID != lead.ID || res.Verdict != model.VerdictClean {
		t.Fatalf("reply: %+v %v", res, err)
	}
	q := f.sentByKind(lead.ID)[model.KindQualified]
	if q.EventName != "QualifiedLead" || q.EventTime != lead.SubmittedAt.Unix() || q.ActionSource != "system_generated" {
		t.Errorf("qualified event: %+v", q)
	}
	// The same message again is handled once.
	if res, err := f.svc.WhatsAppInbound(ctx, msg); err != nil || res.Outcome != app.OutcomeDuplicate || res.LeadID != lead.ID {
		t.Errorf("duplicate: %+v %v", res, err)
	}
	hist, _ := f.db.HistoryByLead(ctx, lead.ID)
	evidence := 0
	for _, h := range hist {
		if h.Kind == model.HistoryEvidence {
			evidence++
		}
	}
	if evidence != 1 {
		t.Errorf("%d evidence entries", evidence)
	}
	// Without a phone, the user id remembered from the match still matches.
	res, err = f.svc.WhatsAppInbound(ctx, app.WhatsAppMessage{ID: "wamid.2", PhoneNumberID: "106540352242922",
		FromUserID: "TR.1502576394655843", Type: "text"})
	if err != nil || res.Outcome != app.OutcomeEvidence || res.LeadID != lead.ID {
		t.Errorf("by user id: %+v %v", res, err)
	}
	for _, c := range []struct {
		name string
		msg  app.WhatsAppMessage
		want string
	}{
		{"unknown user id", app.WhatsAppMessage{ID: "wamid.3", PhoneNumberID: "106540352242922", FromUserID: "TR.999"}, app.OutcomeNoLead},
		{"another number", app.WhatsAppMessage{ID: "wamid.4", PhoneNumberID: "999", From: "905332184490"}, app.OutcomeNoSite},
		{"a stranger", app.WhatsAppMessage{ID: "wamid.5", PhoneNumberID: "106540352242922", From: "905421112233"}, app.OutcomeNoLead},
		{"system notice", app.WhatsAppMessage{ID: "wamid.6", PhoneNumberID: "106540352242922", From: "905332184490", Type: "system"}, app.OutcomeIgnored},
	} {
		if res, err := f.svc.WhatsAppInbound(ctx, c.msg); err != nil || res.Outcome != c.want {
			t.Errorf("%s: %+v %v", c.name, res, err)
		}
	}
}

func TestWhatsAppMatchesTheNewestLeadInTheWindow(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.withStages()
	ctx := context.Background()
	first := f.submit(crmLead())
	// Past the review window the first lead is out of reach.
	f.clk.Add(8 * 24 * time.Hour)
	res, err := f.svc.WhatsAppInbound(ctx, app.WhatsAppMessage{ID: "wamid.a", PhoneNumberID: "106540352242922", From: "905332184490"})
	if err != nil || res.Outcome != app.OutcomeNoLead {
		t.Errorf("old lead matched: %+v %v", res, err)
	}
	second := f.submit(crmLead())
	res, err = f.svc.WhatsAppInbound(ctx, app.WhatsAppMessage{ID: "wamid.b", PhoneNumberID: "106540352242922", From: "905332184490"})
	if err != nil || res.LeadID != second.ID || res.LeadID == first.ID {
		t.Errorf("want the newest lead: %+v %v", res, err)
	}
}

func TestCallEvidence(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	short := f.submit(crmLead())
	f.clk.Add(time.Hour)
	call := func(in app.CallInput) app.InboundResult {
		t.Helper()
		res, err := f.svc.Call(ctx, f.site, &in)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	sec := func(n int) *int { return &n }
	if res := call(app.CallInput{Caller: "+90 533 218 44 90", DurationS: sec(30), CallID: "c1"}); res.Outcome != app.OutcomeEvidence || res.Verdict != model.VerdictReview {
		t.Errorf("30 s call: %+v", res)
	}
	if res := call(app.CallInput{Caller: "0533 218 4490", DurationS: sec(75), At: f.clk.Now().Format(time.RFC3339), CallID: "c2"}); res.LeadID != short.ID || res.Verdict != model.VerdictClean {
		t.Errorf("75 s call: %+v", res)
	}
	if d := f.deliveries(short.ID)[model.KindQualified]; d == nil {
		t.Error("no qualified event after the call")
	}
	if res := call(app.CallInput{Caller: "0533 218 4490", DurationS: sec(75), CallID: "c2"}); res.Outcome != app.OutcomeDuplicate {
		t.Errorf("repeated call: %+v", res)
	}
	if res := call(app.CallInput{Caller: "0542 111 22 33", DurationS: sec(300)}); res.Outcome != app.OutcomeNoLead {
		t.Errorf("stranger: %+v", res)
	}
	var ie *model.InputError
	for _, in := range []app.CallInput{{DurationS: sec(60)}, {Caller: "0533 218 4490"}, {Caller: "0533 218 4490", DurationS: sec(-1)},
		{Caller: "0533 218 4490", DurationS: sec(60), At: "now"}, {Caller: "abc", DurationS: sec(60)}} {
		if _, err := f.svc.Call(ctx, f.site, &in); !errors.As(err, &ie) {
			t.Errorf("%+v: %v", in, err)
		}
	}
}
