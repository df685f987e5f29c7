package model

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestCoverageCounts: an event counts once, with each counted key that
// holds something, in user_data (whole) or match_keys (shrunk), and as
// matchable when it has lead_id, an e-mail or a phone; a payload that is
// not JSON counts nothing.
func TestCoverageCounts(t *testing.T) {
	for _, c := range []struct {
		payload string
		want    []string // keys; "!" for matchable
	}{
		{`{"user_data":{"em":["h"],"ph":"","fbc":"fb.1","fbp":[],"client_ip_address":null,"external_id":[""],"ct":["x"]}}`, []string{"em", "fbc", "!"}},
		{`{"user_data":{"client_user_agent":"UA","fbp":"fb.1"}}`, []string{"fbp", "client_user_agent"}},
		{`{"event_name":"Lead","match_keys":["ct","lead_id","client_ip_address"]}`, []string{"client_ip_address", "lead_id", "!"}},
		{`{"event_name":"Lead"}`, nil},
	} {
		cs := CoverageCounts(json.RawMessage(c.payload))
		var got []string
		for _, x := range cs[1:] {
			switch x.Name {
			case CounterCoverageKeys:
				got = append(got, x.Dim)
			case CounterCoverageMatchable:
				got = append(got, "!")
			}
		}
		if cs[0] != (Count{Name: CounterCoverageEvents, N: 1}) || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v", c.payload, cs)
		}
	}
	if cs := CoverageCounts(json.RawMessage(`not json`)); cs != nil {
		t.Errorf("not JSON: %v", cs)
	}
}
