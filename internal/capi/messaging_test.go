package capi

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

func ctwaLead() *model.Lead {
	return &model.Lead{ID: "ld_1", SiteID: "dent", Source: model.SourceWhatsApp, Phone: "+905324128719",
		Message: "Fiyat?", SubmittedAt: submitted,
		SourceDetail: map[string]string{model.DetailCTWAClid: "ARAkLkA8rmlF", model.DetailWABAID: "102290129340398"}}
}

func TestBuildMessagingEvent(t *testing.T) {
	won := submitted.Add(48 * time.Hour)
	e, err := BuildMessagingEvent(MessagingParams{Lead: ctwaLead(), EventName: "Purchase", EventTime: won,
		BusinessAccountID: "102290129340398", CustomData: map[string]any{"value": 4500.0, "currency": "TRY"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(e)
	want := `{"event_name":"Purchase","event_time":` + jsonInt(won.Unix()) + `,"event_id":"` + MessagingEventID("ld_1", "Purchase") +
		`","action_source":"business_messaging","messaging_channel":"whatsapp","user_data":{"ctwa_clid":"ARAkLkA8rmlF",` +
		`"whatsapp_business_account_id":"102290129340398"},"custom_data":{"currency":"TRY","value":4500}}`
	if string(b) != want {
		t.Errorf("event\n got %s\nwant %s", b, want)
	}
	if err := Precheck(&e, won.Add(time.Minute)); err != nil {
		t.Errorf("precheck: %v", err)
	}
	// One id per lead and name, whatever kind asked for it.
	if MessagingEventID("ld_1", "QualifiedLead") == MessagingEventID("ld_1", "Purchase") ||
		MessagingEventID("ld_1", "Purchase") == MessagingEventID("ld_2", "Purchase") {
		t.Error("messaging event ids collide")
	}
	for _, c := range []struct {
		name string
		p    MessagingParams
	}{
		{"no clid", MessagingParams{Lead: &model.Lead{ID: "x"}, EventName: "Purchase", EventTime: won, BusinessAccountID: "1"}},
		{"no waba", MessagingParams{Lead: ctwaLead(), EventName: "Purchase", EventTime: won}},
		{"name not allowed", MessagingParams{Lead: ctwaLead(), EventName: "Lead", EventTime: won, BusinessAccountID: "1"}},
		{"no time", MessagingParams{Lead: ctwaLead(), EventName: "Purchase", BusinessAccountID: "1"}},
	} {
		if _, err := BuildMessagingEvent(c.p); err == nil {
			t.Errorf("%s: built", c.name)
		}
	}
}

func TestPrecheckMessaging(t *testing.T) {
	now := submitted.Add(time.Hour)
	for _, c := range []struct {
		name string
		mod  func(e *Event)
		rule string
	}{
		{"ok", func(*Event) {}, ""},
		{"no user agent or url needed", func(e *Event) { e.EventSourceURL, e.UserData.ClientUserAgent = "", "" }, ""},
		{"name not allowed", func(e *Event) { e.EventName = "Schedule" }, RuleMessagingName},
		{"no clid", func(e *Event) { e.UserData.CTWAClid = "" }, RuleMessagingUser},
		{"no waba", func(e *Event) { e.UserData.WhatsAppBusinessAccountID = "" }, RuleMessagingUser},
		{"no channel", func(e *Event) { e.MessagingChannel = "" }, RuleMessaging},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := BuildMessagingEvent(MessagingParams{Lead: ctwaLead(), EventName: "QualifiedLead", EventTime: submitted,
				BusinessAccountID: "102290129340398"})
			if err != nil {
				t.Fatal(err)
			}
			c.mod(&e)
			err = Precheck(&e, now)
			var pe *PrecheckError
			switch {
			case c.rule == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.rule != "" && (!errors.As(err, &pe) || pe.Rule != c.rule):
				t.Errorf("got %v, want rule %s", err, c.rule)
			}
		})
	}
}

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return strings.TrimSpace(string(b))
}
