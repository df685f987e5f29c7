package store

import (
	"strings"
	"testing"
)

// TestPayloadPacking: any payload packs and unpacks to itself, a shrunk
// Meta event to about a third of its length; a payload stored as given
// reads as it is, and a damaged packed one as it was stored.
func TestPayloadPacking(t *testing.T) {
	meta := `{"action_source":"website","event_name":"Lead","event_time":1765078298,"match_keys":["client_ip_address","client_user_agent","country","em","fbc","fbp","fn","ln","ph"]}`
	for _, p := range []string{
		meta,
		`{"action_source":"system_generated","custom_data":{"currency":"TRY","value":1500},"event_name":"Purchase","event_time":1764583200,"match_keys":["em","external_id","ph"]}`,
		`{"conversionValue":1500,"currency":"TRY","eventTimestamp":"2026-12-01T10:00:00Z","match_keys":["address","emailAddress","gclid","phoneNumber"]}`,
		`{"event":"SubmitForm","event_time":1764583200,"match_keys":["email","ip","phone","ttclid","user_agent"],"properties":{"value":1500,"currency":"TRY"}}`,
		`{}`, ``, `z1:not packed`, `{"ad":"İstanbul diş kliniği ✓"}`, strings.Repeat(`{"x":"0123456789abcdef"}`, 500),
	} {
		packed := packPayload([]byte(p))
		if !strings.HasPrefix(packed, packedPrefix) {
			t.Errorf("%.40q packed as %.40q", p, packed)
		}
		if got := string(unpackPayload(packed)); got != p {
			t.Errorf("%.40q read back as %.40q", p, got)
		}
	}
	if n := len(packPayload([]byte(meta))); n > len(meta)/3 {
		t.Errorf("a shrunk Meta event of %d bytes packed in %d", len(meta), n)
	}
	for _, s := range []string{meta, `{}`, `z1:%%%`, `z1:AAAA`} {
		if got := string(unpackPayload(s)); got != s {
			t.Errorf("%q read as %q", s, got)
		}
	}
}
