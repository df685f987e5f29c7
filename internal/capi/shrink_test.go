package capi

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestShrink: a shrunk Meta event keeps its name, time, action source,
// value, currency and lead source and the names of its match keys that hold
// something (the coverage counters' recount reads them), never their
// values (hashed or clear); shrinking it again changes nothing; what
// is not an event becomes {}.
func TestShrink(t *testing.T) {
	hash := strings.Repeat("a", 64)
	in := `{"event_name":"QualifiedLead","event_time":1764583200,"event_id":"e1","action_source":"website",
		"event_source_url":"https://x.example/?fbclid=secret",
		"user_data":{"em":["` + hash + `"],"ph":["` + hash + `"],"client_ip_address":"85.105.1.2",
			"client_user_agent":"Mozilla","fbc":"fb.1.1.secret","fbp":"","external_id":[]},
		"custom_data":{"value":1500,"currency":"TRY","lead_event_source":"CleanAds","note":"x"}}`
	m := &Meta{}
	got := m.Shrink(json.RawMessage(in))
	want := `{"action_source":"website","custom_data":{"currency":"TRY","lead_event_source":"CleanAds","value":1500},` +
		`"event_name":"QualifiedLead","event_time":1764583200,"match_keys":["client_ip_address","client_user_agent","em","fbc","ph"]}`
	if string(got) != want {
		t.Errorf("shrunk:\n%s\nwant\n%s", got, want)
	}
	if again := m.Shrink(got); string(again) != want {
		t.Errorf("shrunk twice: %s", again)
	}
	for _, p := range []string{`"x"`, `{"data":[]}`} {
		if got := m.Shrink(json.RawMessage(p)); string(got) != `{}` {
			t.Errorf("not an event %s: %s", p, got)
		}
	}
}
