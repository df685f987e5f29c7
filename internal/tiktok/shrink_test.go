package tiktok

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestShrink: a shrunk TikTok event keeps its name, time, value, currency
// and the names of its user keys, never their values; shrinking it again
// changes nothing; what is not an event becomes {}.
func TestShrink(t *testing.T) {
	hash := strings.Repeat("a", 64)
	in := `{"event":"SubmitForm","event_time":1764583200,"event_id":"e1","user":{"email":"` + hash + `","phone":"` + hash + `",
		"ttclid":"E.C.P.secret","ip":"85.105.1.2","user_agent":"Mozilla"},"page":{"url":"https://x.example/?ttclid=secret"},
		"properties":{"value":1500,"currency":"TRY"}}`
	p := &Platform{}
	got := p.Shrink(json.RawMessage(in))
	want := `{"event":"SubmitForm","event_time":1764583200,"match_keys":["email","ip","phone","ttclid","user_agent"],"properties":{"value":1500,"currency":"TRY"}}`
	if string(got) != want {
		t.Errorf("shrunk:\n%s\nwant\n%s", got, want)
	}
	if again := p.Shrink(got); string(again) != want {
		t.Errorf("shrunk twice: %s", again)
	}
	if got := p.Shrink(json.RawMessage(`"x"`)); string(got) != `{}` {
		t.Errorf("not an event: %s", got)
	}
}
