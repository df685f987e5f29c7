package capi

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// bodyEvents are events whose encoding json.Marshal decides on its own
// terms: whitespace, HTML characters, the line and paragraph separators,
// escapes, nesting, nil, empty and invalid JSON.
var bodyEvents = []string{
	`{"event_name":"Lead"}`, " {\n\t\"a\" : [1, 2,\t{\"b\":null}] }\n", `"<b>&amp;</b>"`, `{"x":"a` + "\u2028" + `b` + "\u2029" + `"}`,
	`{"x":"\u003c\"\\/"}`, `[]`, `{}`, `0`, `-1.5e10`, `true`, `"ş会😀"`, `{"a":"\ud800"}`, "\"\xff\"", ``, `{`, `{"a":1}}`, `nul`,
}

func TestEncodeBodyIsMarshal(t *testing.T) {
	real := rawEvents(t, 20, time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC))
	reqs := []SendRequest{
		{AccessToken: "EAAB<&>\u2028", Events: real},
		{AccessToken: "t", TestEventCode: "TEST123\"<", Events: real[:1]},
		{AccessToken: "t", Events: []json.RawMessage{nil, real[0], nil}},
	}
	for _, e := range bodyEvents {
		reqs = append(reqs, SendRequest{AccessToken: "t", TestEventCode: "c", Events: []json.RawMessage{real[1], json.RawMessage(e)}})
	}
	for _, req := range reqs {
		checkBody(t, req)
	}
}

func FuzzEncodeBody(f *testing.F) {
	for _, e := range bodyEvents {
		f.Add([]byte(e), "token", "")
	}
	f.Fuzz(func(t *testing.T, event []byte, token, code string) {
		checkBody(t, SendRequest{AccessToken: token, TestEventCode: code, Events: []json.RawMessage{event, json.RawMessage(`{"a":1}`), event}})
	})
}

// checkBody checks that encodeBody gives what json.Marshal gives, or fails
// where it fails.
func checkBody(t *testing.T, req SendRequest) {
	t.Helper()
	want, werr := json.Marshal(sendBody{Data: req.Events, TestEventCode: req.TestEventCode, AccessToken: req.AccessToken})
	got, err := encodeBody(req)
	if (err != nil) != (werr != nil) {
		t.Fatalf("events %q: error %v, json.Marshal's %v", req.Events, err, werr)
	}
	if err == nil && !bytes.Equal(got, want) {
		t.Fatalf("events %q:\n got %s\nwant %s", req.Events, got, want)
	}
}
