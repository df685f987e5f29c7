package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
)

// personal is what must be gone from a redacted lead's records.
var personal = []string{"ayse.yilmaz@gmail.com", "0532 412 87 19", "Ayşe", "Yılmaz", "implant tedavisi",
	"85.105.1.2", "iPhone", "IwAR_privacy"}

// visitAndLead makes a visit with a click and the visitor's lead.
func (f *fixture) visitAndLead() (*model.Lead, *app.CollectResult) {
	f.t.Helper()
	yes := true
	v, err := f.svc.Collect(context.Background(), f.site, &app.CollectInput{PageURL: "https://www.istanbuldis.example/?fbclid=IwAR_privacy",
		Consent: &yes, ClientIP: "85.105.1.2", UserAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)"})
	if err != nil {
		f.t.Fatal(err)
	}
	in := realLead()
	in.VisitorID = v.Visitor.ID
	in.FormToken = v.FormToken
	in.Fields = map[string]string{"treatment": "implant", "note": "Ayşe's sister"}
	return f.submit(in), v
}

// leadText is everything stored about a lead, as text.
func (f *fixture) leadText(id model.LeadID) string {
	f.t.Helper()
	ctx := context.Background()
	l, err := f.db.LeadByID(ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	h, _ := f.db.HistoryByLead(ctx, id)
	ds, _ := f.db.DeliveriesByLead(ctx, id)
	b, _ := json.Marshal([]any{l, h})
	// The look-up keys are not in the lead's JSON.
	s := string(b) + l.EmailKey + " " + l.PhoneKey
	for _, d := range ds {
		s += string(d.Payload)
	}
	return s
}

func TestRetention(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	old, visit := f.visitAndLead()
	oldText := f.leadText(old.ID)
	for _, p := range append(personal, "905324128719") {
		if !strings.Contains(oldText, p) {
			t.Fatalf("the fixture lacks %q: the test would prove nothing", p)
		}
	}
	f.clk.Add(366 * 24 * time.Hour)
	fresh := f.submit(realLead())

	// 0 days keeps leads and visits; used form-token nonces go once no
	// token can use them.
	if res, err := f.svc.Retain(ctx, app.RetentionPolicy{}); err != nil || res.Total() != 1 || res.FormTokens != 1 {
		t.Fatalf("keep forever removed %+v %v", res, err)
	}
	res, err := f.svc.Retain(ctx, app.RetentionPolicy{LeadDays: 365, VisitDays: 90})
	if err != nil {
		t.Fatal(err)
	}
	// The lead's two events are cleared; the visit's PageView, built in
	// dry run and never sent, goes.
	if res.Leads != 1 || res.Visits != 1 || res.Visitors != 1 || res.Deliveries != 2 || res.PageViews != 1 {
		t.Errorf("removed %+v", res)
	}
	text := f.leadText(old.ID)
	for _, p := range append(personal, "905324128719") {
		if strings.Contains(text, p) {
			t.Errorf("%q is still stored for the old lead", p)
		}
	}
	l, _ := f.db.LeadByID(ctx, old.ID)
	if l.Verdict != old.Verdict || l.Score != old.Score || len(l.Reasons) != len(old.Reasons) || !l.SubmittedAt.Equal(old.SubmittedAt) {
		t.Errorf("statistics lost: %+v", l)
	}
	for _, d := range f.deliveries(old.ID) {
		var ev struct {
			UserData map[string]any `json:"user_data"`
		}
		json.Unmarshal(d.Payload, &ev)
		if ev.UserData["em"] == nil || ev.UserData["ph"] == nil || ev.UserData["client_ip_address"] != nil {
			t.Errorf("%s payload after retention: %s", d.Kind, d.Payload)
		}
	}
	if vs, _ := f.db.VisitsByVisitor(ctx, "dent", visit.Visitor.ID); len(vs) != 0 {
		t.Errorf("old visits kept: %d", len(vs))
	}
	if f.leadText(fresh.ID) == "" || !strings.Contains(f.leadText(fresh.ID), "ayse.yilmaz@gmail.com") {
		t.Errorf("the recent lead lost its contact details")
	}
	// A second run has nothing left to do.
	if res, err := f.svc.Retain(ctx, app.RetentionPolicy{LeadDays: 365, VisitDays: 90}); err != nil || res.Total() != 0 {
		t.Errorf("second run: %+v %v", res, err)
	}
}

// TestRetentionReceipts: the receipts of inbound messages and calls, one a
// message ever, go after ReceiptDays (none with 0); a recent one stays, so
// a platform's retry of it is still handled once.
func TestRetentionReceipts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	now := f.clk.Now()
	for i, at := range []time.Time{now.Add(-40 * 24 * time.Hour), now.Add(-31 * 24 * time.Hour), now.Add(-29 * 24 * time.Hour), now} {
		if _, err := f.db.ReceiptInsert(ctx, "whatsapp", fmt.Sprintf("wamid.%d", i), at); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := f.svc.Retain(ctx, app.RetentionPolicy{}); err != nil || res.Receipts != 0 {
		t.Fatalf("keep forever removed %+v %v", res, err)
	}
	res, err := f.svc.Retain(ctx, app.RetentionPolicy{ReceiptDays: 30})
	if err != nil || res.Receipts != 2 {
		t.Fatalf("removed %+v %v, want 2 receipts", res, err)
	}
	for i, kept := range []bool{false, false, true, true} {
		fresh, err := f.db.ReceiptInsert(ctx, "whatsapp", fmt.Sprintf("wamid.%d", i), now)
		if err != nil {
			t.Fatal(err)
		}
		if fresh == kept {
			t.Errorf("receipt %d: kept %v, but a retry claimed it anew: %v", i, kept, fresh)
		}
	}
}

// TestRetentionPageViewsNeverSent: the outbox rows of page views never
// sent (built in dry run, dead, expired) go after VisitDays (none with 0);
// a recent one, one still waiting, and a lead's event stay.
func TestRetentionPageViewsNeverSent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	now := f.clk.Now()
	old := now.Add(-91 * 24 * time.Hour)
	for i, r := range []struct {
		kind  string
		lead  model.LeadID
		state model.DeliveryState
		at    time.Time
	}{
		{model.KindPageView, "", model.DeliveryDryRun, old},
		{model.KindPageView, "", model.DeliveryDead, old},
		{model.KindPageView, "", model.DeliveryExpired, old},
		{model.KindPageView, "", model.DeliveryDryRun, now.Add(-89 * 24 * time.Hour)},
		{model.KindPageView, "", model.DeliveryPending, old},
		{model.KindLead, "ld_x", model.DeliveryDead, old},
	} {
		d := &model.Delivery{ID: fmt.Sprintf("dl_pv%d", i), SiteID: "dent", LeadID: r.lead, Kind: r.kind, EventName: "PageView",
			EventID: fmt.Sprintf("pv%d", i), PixelID: "111", Payload: []byte(`{}`), State: r.state, NextAt: r.at,
			DeadlineAt: r.at.Add(7 * 24 * time.Hour), CreatedAt: r.at, UpdatedAt: r.at}
		if _, err := f.db.DeliveryInsert(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := f.svc.Retain(ctx, app.RetentionPolicy{}); err != nil || res.PageViews != 0 {
		t.Fatalf("keep forever removed %+v %v", res, err)
	}
	res, err := f.svc.Retain(ctx, app.RetentionPolicy{VisitDays: 90})
	if err != nil || res.PageViews != 3 {
		t.Fatalf("removed %+v %v, want 3 page views", res, err)
	}
	for i, kept := range []bool{false, false, false, true, true, true} {
		_, err := f.db.DeliveryByID(ctx, fmt.Sprintf("dl_pv%d", i))
		if got := err == nil; got != kept {
			t.Errorf("row %d: kept %v, want %v (%v)", i, got, kept, err)
		}
	}
	if res, err := f.svc.Retain(ctx, app.RetentionPolicy{VisitDays: 90}); err != nil || res.PageViews != 0 {
		t.Errorf("second run: %+v %v", res, err)
	}
}

func TestForget(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	first, visit := f.visitAndLead()
	f.clk.Add(10 * 24 * time.Hour)
	second := f.submit(realLead())
	other := f.submit(greyLead())
	// Evidence that came with the person's own words (a WhatsApp reply).
	if err := f.db.HistoryInsert(ctx, &model.HistoryEntry{ID: "h_wa", LeadID: second.ID, At: f.clk.Now(), Kind: model.HistoryEvidence,
		Data: map[string]any{"type": "whatsapp_reply", "from": "905324128719", "text": "Ayşe: evet geliyorum"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.db.WhatsAppContactUpsert(ctx, "dent", "wa-user-1", "905324128719", second.ID, f.clk.Now()); err != nil {
		t.Fatal(err)
	}

	if _, err := f.svc.Forget(ctx, app.ForgetInput{}); err == nil {
		t.Errorf("forget with nobody named")
	}
	if _, err := f.svc.Forget(ctx, app.ForgetInput{Email: "a@example.com", Phone: "1"}); err == nil {
		t.Errorf("forget with both e-mail and phone")
	}
	if res, err := f.svc.Forget(ctx, app.ForgetInput{Phone: "+90 532 412 87 19", Site: "other"}); err != nil || res.Leads != 0 {
		t.Errorf("another site's person: %+v %v", res, err)
	}
	// The number in another formatting finds both leads.
	res, err := f.svc.Forget(ctx, app.ForgetInput{Phone: "+90 (532) 412-8719"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Leads != 2 || res.Visits != 1 || res.Visitors != 1 || res.Deliveries < 3 || res.History != 1 || res.Cancelled < 1 ||
		res.WhatsAppContacts != 1 {
		t.Errorf("forget removed %+v", res)
	}
	for _, id := range []model.LeadID{first.ID, second.ID} {
		text := f.leadText(id)
		for _, p := range append(personal, "905324128719", "evet geliyorum") {
			if strings.Contains(text, p) {
				t.Errorf("%q is still stored for lead %s", p, id)
			}
		}
	}
	// Events of theirs not sent yet are never sent.
	for _, d := range f.deliveries(second.ID) {
		if d.State == model.DeliveryPending || d.State == model.DeliveryRetry {
			t.Errorf("a forgotten person's %s event is still %s", d.Kind, d.State)
		}
	}
	if _, err := f.db.WhatsAppContactPhone(ctx, "dent", "wa-user-1"); err == nil {
		t.Errorf("the WhatsApp user id is still matched to the phone")
	}
	if _, err := f.db.VisitorByID(ctx, "dent", visit.Visitor.ID); err == nil {
		t.Errorf("the visitor is still stored")
	}
	if l, _ := f.db.LeadByID(ctx, other.ID); l.Phone == "" {
		t.Errorf("another person's lead was erased")
	}
	// Once forgotten there is nothing left to find.
	if res, err := f.svc.Forget(ctx, app.ForgetInput{Email: "AYSE.YILMAZ@gmail.com"}); err != nil || res.Leads != 0 {
		t.Errorf("second forget: %+v %v", res, err)
	}
}

// On a live site the visit's PageView waits in the PageView queue (with the
// visitor's IP and agent); forgetting the person takes it out unsent.
func TestForgetQueuedPageView(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.site.Settings.Meta.Mode = model.ModeLive
	if err := f.db.SiteUpsert(ctx, f.site, f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	_, visit := f.visitAndLead()
	if d, err := f.db.VisitPageView(ctx, "dent", visit.EventID); err != nil || !d.Queued {
		t.Fatalf("PageView not queued: %+v %v", d, err)
	}
	res, err := f.svc.Forget(ctx, app.ForgetInput{Phone: "0532 412 87 19"})
	if err != nil || res.Visits != 1 || res.Cancelled < 1 {
		t.Fatalf("forget: %+v %v", res, err)
	}
	if d, err := f.db.VisitPageView(ctx, "dent", visit.EventID); !errors.Is(err, model.ErrNotFound) {
		t.Errorf("the forgotten visit's PageView is still queued: %+v %v", d, err)
	}
	if queued, _, err := f.db.PageViewStats(ctx, "dent", time.Time{}); err != nil || queued != 0 {
		t.Errorf("queued %d %v", queued, err)
	}
}

// ctwaSite gives the fixture's site a WhatsApp number, so that
// Click-to-WhatsApp first messages start leads.
func (f *fixture) ctwaSite() {
	f.t.Helper()
	f.site.Settings.WhatsApp = model.WhatsAppSettings{PhoneNumberIDs: []string{"106540352242922"},
		BusinessAccountID: "102290129340398", DatasetID: "1283471935762519"}
	if err := f.db.SiteUpsert(context.Background(), f.site, f.clk.Now()); err != nil {
		f.t.Fatal(err)
	}
}

// ctwa is a WhatsApp message from user (and phone, when given): with clid,
// the first message of a Click-to-WhatsApp ad.
func (f *fixture) ctwa(id, user, phone, clid, text string) app.InboundResult {
	f.t.Helper()
	m := app.WhatsAppMessage{ID: id, PhoneNumberID: "106540352242922", WABAID: "102290129340398", From: phone,
		FromUserID: user, Type: "text", At: f.clk.Now(), Text: text, ProfileName: "Ayşe Yılmaz"}
	if clid != "" {
		m.Referral = &app.WhatsAppReferral{CTWAClid: clid, SourceID: "120210000000000777", SourceType: "ad"}
	}
	res, err := f.svc.WhatsAppInbound(context.Background(), m)
	if err != nil {
		f.t.Fatal(err)
	}
	return res
}

const ctwaText = "Merhaba, implant tedavisi için randevu almak istiyorum, hafta içi akşam uygunum."

// TestForgetWhatsApp: a Click-to-WhatsApp lead is found and erased by the
// sender's WhatsApp user id (an older lead whose conversation moved on
// too), and by a phone the person only wrote from later; its
// conversation goes, and its source detail keeps the ad but not the
// person's user id or click id.
func TestForgetWhatsApp(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ctwaSite()
	ctx := context.Background()
	// A lead without a phone, which a later message gives.
	byPhone := f.ctwa("wamid.1", "TR.1000000000000001", "", "ARAk-clid-one", ctwaText)
	f.clk.Add(time.Minute)
	if res := f.ctwa("wamid.2", "TR.1000000000000001", "905324128720", "", "akşam 7 uygun"); res.LeadID != byPhone.LeadID {
		t.Fatalf("later message %+v", res)
	}
	// Two leads of one user: the second click, after the review window,
	// starts a new lead and the conversation moves to it.
	older := f.ctwa("wamid.3", "TR.2000000000000002", "", "ARAk-clid-two", ctwaText)
	f.clk.Add(30 * 24 * time.Hour)
	newer := f.ctwa("wamid.4", "TR.2000000000000002", "", "ARAk-clid-three", ctwaText)
	if older.Outcome != app.OutcomeLead || newer.Outcome != app.OutcomeLead || older.LeadID == newer.LeadID {
		t.Fatalf("two clicks: %+v %+v", older, newer)
	}
	other := f.ctwa("wamid.5", "TR.3000000000000003", "", "ARAk-clid-four", ctwaText)

	if _, err := f.svc.Forget(ctx, app.ForgetInput{WhatsAppUser: "TR.2000000000000002", Phone: "1"}); err == nil {
		t.Error("two names of a person were taken")
	}
	res, err := f.svc.Forget(ctx, app.ForgetInput{WhatsAppUser: "TR.2000000000000002"})
	if err != nil || res.Leads != 2 || res.WhatsAppContacts == 0 {
		t.Fatalf("forget by user id: %+v %v", res, err)
	}
	res, err = f.svc.Forget(ctx, app.ForgetInput{Phone: "0532 412 87 20"})
	if err != nil || res.Leads != 1 {
		t.Fatalf("forget by phone: %+v %v", res, err)
	}
	for _, id := range []model.LeadID{byPhone.LeadID, older.LeadID, newer.LeadID} {
		text := f.leadText(id)
		for _, p := range []string{"TR.1000000000000001", "TR.2000000000000002", "ARAk-clid", "905324128720", "implant", "Ayşe"} {
			if strings.Contains(text, p) {
				t.Errorf("lead %s still holds %q: %s", id, p, text)
			}
		}
		l, _ := f.db.LeadByID(ctx, id)
		if l.Source != model.SourceWhatsApp || l.SourceDetail[model.DetailAdID] != "120210000000000777" {
			t.Errorf("lead %s lost what was not personal: %s %v", id, l.Source, l.SourceDetail)
		}
	}
	for _, sender := range []string{"user:TR.1000000000000001", "phone:905324128720", "user:TR.2000000000000002"} {
		if c, err := f.db.WhatsAppConversationFind(ctx, "dent", []string{sender}); err == nil {
			t.Errorf("conversation %s of lead %s is left", sender, c.LeadID)
		}
	}
	// The other person is untouched.
	if l, _ := f.db.LeadByID(ctx, other.LeadID); l.SourceDetail[model.DetailWhatsAppUserID] != "TR.3000000000000003" || l.Message == "" {
		t.Errorf("another person's lead changed: %+v", l)
	}
	// A new message of a forgotten user starts nothing of the old lead.
	if res := f.ctwa("wamid.6", "TR.2000000000000002", "", "", "merhaba"); res.LeadID != "" {
		t.Errorf("a forgotten conversation took a message: %+v", res)
	}
}

// TestRetentionWhatsApp: past lead_days a Click-to-WhatsApp lead loses the
// WhatsApp user id and click id of its source detail and its conversation.
func TestRetentionWhatsApp(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ctwaSite()
	ctx := context.Background()
	res := f.ctwa("wamid.1", "TR.1000000000000001", "905324128720", "ARAk-clid-one", ctwaText)
	f.clk.Add(40 * 24 * time.Hour)
	if _, err := f.svc.Retain(ctx, app.RetentionPolicy{LeadDays: 30}); err != nil {
		t.Fatal(err)
	}
	l, _ := f.db.LeadByID(ctx, res.LeadID)
	if l.Message != "" || l.SourceDetail[model.DetailWhatsAppUserID] != "" || l.SourceDetail[model.DetailCTWAClid] != "" ||
		l.SourceDetail[model.DetailWABAID] == "" {
		t.Errorf("retained lead %v", l.SourceDetail)
	}
	if text := f.leadText(res.LeadID); strings.Contains(text, "TR.1000000000000001") || strings.Contains(text, "ARAk-clid-one") {
		t.Errorf("retained lead still names the person: %s", text)
	}
	if _, err := f.db.WhatsAppConversationFind(ctx, "dent", []string{"user:TR.1000000000000001", "phone:905324128720"}); err == nil {
		t.Error("the conversation is left")
	}
}
