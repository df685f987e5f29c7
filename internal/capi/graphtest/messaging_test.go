package graphtest

import (
	"strings"
	"testing"
	"time"
)

func messagingEvent(name string, at time.Time) map[string]any {
	return map[string]any{
		"event_name":        name,
		"event_time":        at.Unix(),
		"event_id":          "bm-" + name,
		"action_source":     "business_messaging",
		"messaging_channel": "whatsapp",
		"user_data": map[string]any{
			"whatsapp_business_account_id": "102290129340398",
			"ctwa_clid":                    "ARAkLkA8rmlFeiCktEJQ-QTwRiyYHAFDLMNDBH0CD3qpjd0HR4irJ6LEkR7JwFF4XvnO2E4Nx0-eM-GABDLOPaOdRMv-_zfUQ2a",
		},
		"custom_data": map[string]any{"currency": "TRY", "value": 4500},
	}
}

func TestBusinessMessaging(t *testing.T) {
	now := time.Now()
	const dataset = "/v25.0/555000111/events"
	ud := func(e map[string]any) map[string]any { return e["user_data"].(map[string]any) }
	t.Run("accepted", func(t *testing.T) {
		s := New(t)
		s.SetDataset("555000111", "102290129340398")
		a, err := post(t, s, dataset, Token, []any{messagingEvent("QualifiedLead", now), messagingEvent("Purchase", now)})
		if err != nil {
			t.Fatal(err)
		}
		if a.status != 200 || a.body["events_received"] != 2.0 {
			t.Fatalf("answer %d %v", a.status, a.body)
		}
		ev := s.Events()
		if len(ev) != 2 || ev[0].ActionSource != "business_messaging" || ev[0].PixelID != "555000111" {
			t.Errorf("recorded %+v", ev)
		}
	})
	tests := []struct {
		name    string
		mod     func(e map[string]any)
		sub     int
		title   string
		contain string
	}{
		{"event name not allowed", func(e map[string]any) { e["event_name"] = "Lead" },
			SubcodeMessagingEventType, "Messaging Event Invalid Event Type", `event_name "Lead" is not valid`},
		{"custom event name", func(e map[string]any) { e["event_name"] = "Schedule" },
			SubcodeMessagingEventType, "Messaging Event Invalid Event Type", "LeadSubmitted"},
		{"no ctwa_clid", func(e map[string]any) { delete(ud(e), "ctwa_clid") },
			SubcodeMessagingUserData, "Invalid event", "ctwa_clid is required"},
		{"no waba", func(e map[string]any) { delete(ud(e), "whatsapp_business_account_id") },
			SubcodeMessagingUserData, "Invalid event", "whatsapp_business_account_id is required"},
		{"another waba", func(e map[string]any) { ud(e)["whatsapp_business_account_id"] = "999" },
			SubcodeMessagingUserData, "Invalid event", "not the WhatsApp Business Account of dataset"},
		{"wrong action source", func(e map[string]any) { e["action_source"] = "system_generated" },
			SubcodeMessagingActionSource, "Invalid event", "only valid with action_source business_messaging"},
		{"no channel", func(e map[string]any) { delete(e, "messaging_channel") },
			SubcodeMissingField, "Invalid event", "messaging_channel is required"},
		{"unknown channel", func(e map[string]any) { e["messaging_channel"] = "sms" },
			SubcodeMissingField, "Invalid event", `messaging_channel "sms"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := New(t)
			s.SetDataset("555000111", "102290129340398")
			e := messagingEvent("QualifiedLead", now)
			tc.mod(e)
			a, err := post(t, s, dataset, Token, []any{messagingEvent("Purchase", now), e})
			if err != nil {
				t.Fatal(err)
			}
			code, sub, msg := errCode(a)
			if a.status != 400 || code != 100 || sub != tc.sub || !strings.Contains(msg, tc.contain) || !strings.Contains(msg, "data[1]") {
				t.Fatalf("answer %d %v", a.status, a.body)
			}
			if title := a.body["error"].(map[string]any)["error_user_title"]; title != tc.title {
				t.Errorf("error_user_title = %v, want %q", title, tc.title)
			}
			if len(s.Events()) != 0 {
				t.Errorf("a rejected request recorded events: %+v", s.Events())
			}
		})
	}
}
