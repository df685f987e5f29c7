package model

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
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

// TestCoverageScanAgreesWithDecode: the scan of a payload finds the keys
// json.Unmarshal finds, on random events written with random whitespace,
// duplicate keys, nested values, escapes, shrunk and whole forms, the odd
// user_data, and broken (where it must decline, as json.Valid does); where
// it declines, the decode decides.
func TestCoverageScanAgreesWithDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ws := func() string { return []string{"", "", " ", "\n\t", "\r "}[rng.IntN(5)] }
	values := []string{`""`, `null`, `[]`, `[""]`, `[ ]`, `"x"`, `["h1","h2"]`, `"a\"b,}"`, `{"a":[1,{"b":"]"}]}`, `12.5e3`, `true`,
		`"\u00e9"`, `-0.5E-2`, `false`, `[[[]]]`, `"\\/\b\f\n\r\t"`}
	names := append([]string{"ct", "e\\u006d", "user_data", "match_keys"}, CoverageKeys...)
	scanned := 0
	for range 20000 {
		var b strings.Builder
		member := func(name, value string) {
			b.WriteString(ws() + `"` + name + `"` + ws() + ":" + ws() + value + ws())
		}
		object := func(n int, value func() string) string {
			var o strings.Builder
			o.WriteString("{")
			for i := range n {
				if i > 0 {
					o.WriteString(",")
				}
				o.WriteString(ws() + `"` + names[rng.IntN(len(names))] + `"` + ws() + ":" + ws() + value() + ws())
			}
			return o.String() + "}"
		}
		b.WriteString(ws() + "{")
		for i := range rng.IntN(5) {
			if i > 0 {
				b.WriteString(",")
			}
			switch r := rng.IntN(6); {
			case r < 2:
				member("user_data", object(rng.IntN(6), func() string { return values[rng.IntN(len(values))] }))
			case r == 2:
				var l []string
				for range rng.IntN(4) {
					l = append(l, `"`+names[rng.IntN(len(names))]+`"`)
				}
				member("match_keys", "["+strings.Join(l, ","+ws())+"]")
			case r == 3:
				member([]string{"user_data", "match_keys"}[rng.IntN(2)], values[rng.IntN(len(values))])
			default:
				member([]string{"event_name", "custom_data", "e\\u0076"}[rng.IntN(3)], values[rng.IntN(len(values))])
			}
		}
		b.WriteString("}" + ws())
		p := []byte(b.String())
		// A third are broken: cut short, or a byte changed.
		switch rng.IntN(6) {
		case 0:
			p = p[:rng.IntN(len(p))]
		case 1:
			const bytes = `{}[],:"\ 0123456789-.+eEtrufalsn`
			p[rng.IntN(len(p))] = bytes[rng.IntN(len(bytes))]
		}
		want, wok := coverageDecode(p)
		got, ok := coverageScan(p)
		if ok {
			scanned++
			if !wok || got != want {
				t.Errorf("%s: scan %b, decode %b %v", p, got, want, wok)
			}
		}
		if !json.Valid(p) && ok {
			t.Errorf("%s: scanned though not JSON", p)
		}
	}
	if scanned < 5000 {
		t.Errorf("only %d of 20000 scanned: the test proves little", scanned)
	}
}
