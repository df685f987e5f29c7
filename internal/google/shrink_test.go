package google_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/google"
)

// TestShrink: a shrunk Google event keeps its time, value, currency and
// the names of its identifiers and click id, never their values; shrinking
// it again changes nothing; what is not an event becomes {}.
func TestShrink(t *testing.T) {
	hash := strings.Repeat("a", 64)
	in := `{"transactionId":"t1","eventTimestamp":"2026-12-01T10:00:00Z","currency":"TRY","conversionValue":1500,
		"adIdentifiers":{"gclid":"Cj0KCQ_secret"},"userData":{"userIdentifiers":[{"emailAddress":"` + hash + `"},
		{"phoneNumber":"` + hash + `"},{"address":{"givenName":"` + hash + `","familyName":"` + hash + `","regionCode":"TR","postalCode":"34000"}}]}}`
	p := &google.Platform{}
	got := p.Shrink(json.RawMessage(in))
	want := `{"conversionValue":1500,"currency":"TRY","eventTimestamp":"2026-12-01T10:00:00Z","match_keys":["address","emailAddress","gclid","phoneNumber"]}`
	if string(got) != want {
		t.Errorf("shrunk:\n%s\nwant\n%s", got, want)
	}
	if again := p.Shrink(got); string(again) != want {
		t.Errorf("shrunk twice: %s", again)
	}
	if got := p.Shrink(json.RawMessage(`[1]`)); string(got) != `{}` {
		t.Errorf("not an event: %s", got)
	}
}
