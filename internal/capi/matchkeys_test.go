package capi

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestMatchKeys(t *testing.T) {
	in := strings.Join([]string{
		`{"field": "em", "value": "  John_Smith@gmail.com "}`,
		`{"field": "ph", "value": "0532 412 87 19"}`,
		`{"field": "ph", "value": 905324128719}`,
		``,
		`{"field": "em", "value": "not-an-email"}`,
		`this is not json`,
		`{"field": "zz", "value": "x"}`,
		`{"field": "fn", "value": ["a"]}`,
		`{"field": "em", "value": "62A14E44F765419D10FEA99367361A727C12365E2520F32218D505ED9AA0F62F"}`,
		`{"field": "fn", "value": "<Ayşe>"}`, // no trailing newline
	}, "\n")
	var out bytes.Buffer
	if err := MatchKeys(strings.NewReader(in), &out, "TR"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	want := []struct {
		field, value, norm, hash, errPart string
	}{
		{"em", "  John_Smith@gmail.com ", "john_smith@gmail.com", "62a14e44f765419d10fea99367361a727c12365e2520f32218d505ed9aa0f62f", ""},
		{"ph", "0532 412 87 19", "905324128719", Hash("905324128719"), ""},
		{"ph", "905324128719", "905324128719", Hash("905324128719"), ""},
		{"em", "not-an-email", "", "", "no @"},
		{"", "", "", "", "line 6: not a JSON object"},
		{"zz", "x", "", "", "unknown field"},
		{"fn", "", "", "", "line 8: value must be a string"},
		// An upper-case hash: normalised as given (the builder's normaliser),
		// sent lowercased (its hashing step).
		{"em", "62A14E44F765419D10FEA99367361A727C12365E2520F32218D505ED9AA0F62F",
			"62A14E44F765419D10FEA99367361A727C12365E2520F32218D505ED9AA0F62F",
			"62a14e44f765419d10fea99367361a727c12365e2520f32218d505ed9aa0f62f", ""},
		{"fn", "<Ayşe>", "ayşe", Hash("ayşe"), ""},
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, w := range want {
		t.Run(lines[i], func(t *testing.T) {
			var raw map[string]any
			if err := json.Unmarshal([]byte(lines[i]), &raw); err != nil {
				t.Fatal(err)
			}
			if _, ok := raw["normalized"]; !ok {
				t.Error(`"normalized" missing (must be null when rejected)`)
			}
			var got MatchKey
			if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
				t.Fatal(err)
			}
			norm := ""
			if got.Normalized != nil {
				norm = *got.Normalized
			}
			if got.Field != w.field || got.Value != w.value || norm != w.norm || got.Hash != w.hash {
				t.Errorf("got %+v (normalized %q), want %+v", got, norm, w)
			}
			if (w.errPart == "") != (got.Error == "") || !strings.Contains(got.Error, w.errPart) {
				t.Errorf("error %q, want it to contain %q", got.Error, w.errPart)
			}
		})
	}
	if strings.Contains(out.String(), `\u003c`) {
		t.Error("HTML escaping in output")
	}
}
