package capi

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
)

// checkNow is the clock of the payloads below: an hour after testLead's
// submission.
var checkNow = submitted.Add(time.Hour)

// storedPayload is an event as the product stores it (json.Marshal or
// AppendPageView of what it builds) and the rule Precheck names for it.
type storedPayload struct {
	name, rule string
	p          []byte
}

// storedPayloads are stored events, one or more for each of Precheck's
// verdicts.
func storedPayloads(t testing.TB) []storedPayload {
	t.Helper()
	site := testSite()
	lead, err := BuildLeadEvent(BuildParams{Site: site, Lead: testLead(),
		CustomData: map[string]any{"status": "new", "value": 0, "items": []any{map[string]any{"id": "a<b>&c"}, nil, true, 1.5e3}}})
	if err != nil {
		t.Fatal(err)
	}
	qualified, err := BuildLeadEvent(BuildParams{Site: site, Lead: testLead(), Kind: model.KindQualified})
	if err != nil {
		t.Fatal(err)
	}
	messaging, err := BuildMessagingEvent(MessagingParams{Lead: ctwaLead(), EventName: "Purchase", EventTime: submitted,
		BusinessAccountID: "102290129340398", CustomData: map[string]any{"value": 4500.0, "currency": "TRY"}})
	if err != nil {
		t.Fatal(err)
	}
	marshal := func(e Event, edit func(e *Event)) []byte {
		if edit != nil {
			edit(&e)
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	pv := pageView("https://dent.example.com/?a=1&b=<2>\u2028", "Mozilla \"5\" \\ é\u2029", "IwAR2xYz")
	pv.EventTime = checkNow.Unix()
	pvBytes, ok := AppendPageView(nil, &pv)
	if !ok {
		t.Fatal("AppendPageView declined a PageView")
	}
	bad := strings.Repeat("A", 64)
	return []storedPayload{
		{"lead", "", marshal(lead, nil)},
		{"qualified", "", marshal(qualified, nil)},
		{"messaging", "", marshal(messaging, nil)},
		{"pageview", "", pvBytes},
		{"lead_id", "", marshal(lead, func(e *Event) { e.UserData = UserData{LeadID: "1234567890123456789", ClientUserAgent: "UA"} })},
		{"all keys", "", marshal(lead, func(e *Event) { e.UserData = allUserData() })},
		{"empty name", RuleEventName, marshal(lead, func(e *Event) { e.EventName = " \t" })},
		{"old", RuleEventTimeOld, marshal(lead, func(e *Event) { e.EventTime = checkNow.Add(-8 * 24 * time.Hour).Unix() })},
		{"ahead", RuleEventTimeAhead, marshal(lead, func(e *Event) { e.EventTime = checkNow.Add(time.Hour).Unix() })},
		{"source", RuleActionSource, marshal(lead, func(e *Event) { e.ActionSource = "web\"site\x01" })},
		{"no agent", RuleUserAgent, marshal(lead, func(e *Event) { e.UserData.ClientUserAgent = "" })},
		{"no url", RuleSourceURL, marshal(lead, func(e *Event) { e.EventSourceURL = "" })},
		{"no channel", RuleMessaging, marshal(messaging, func(e *Event) { e.MessagingChannel = "" })},
		{"chat name", RuleMessagingName, marshal(messaging, func(e *Event) { e.EventName = "Lead<>" })},
		{"chat ids", RuleMessagingUser, marshal(messaging, func(e *Event) { e.UserData.CTWAClid = "" })},
		{"fbc", RuleFBC, marshal(lead, func(e *Event) { e.UserData.FBC = "fb.1.1716200000.x&y" })},
		{"fbp", RuleFBP, marshal(lead, func(e *Event) { e.UserData.FBP = "fb.12.1716200000000.1" })},
		{"hashed", RuleHashed, marshal(lead, func(e *Event) { e.UserData.Zip = []string{bad} })},
		{"hashed second", RuleHashed, marshal(lead, func(e *Event) { e.UserData.Country = append(e.UserData.Country, bad) })},
		{"no key", RuleMatchKey, marshal(lead, func(e *Event) { e.UserData = UserData{ClientUserAgent: "UA", FirstName: []string{}} })},
	}
}

// allUserData sets every key of UserData, hashed ones well formed.
func allUserData() UserData {
	h := []string{Hash("x")}
	return UserData{Email: h, Phone: h, FirstName: h, LastName: h, Gender: h, DateOfBirth: h, City: h, State: h,
		Zip: h, Country: h, ExternalID: h, ClientIPAddress: "203.0.113.9", ClientUserAgent: "UA", FBC: "fb.1.1716200000000.x",
		FBP: "fb.1.1716200000000.1", LeadID: "-12.5e3", CTWAClid: "c", PageID: "p", SubscriptionID: "s", FBLoginID: "l",
		WhatsAppBusinessAccountID: "w"}
}

// oddPayloads are payloads the product does not write: malformed JSON,
// types json.Unmarshal refuses, and valid JSON it reads in ways of its own
// (keys in another case, escapes, duplicates, null).
var oddPayloads = []string{
	``, ` `, `null`, `[1]`, `"x"`, `1`, `{`, `{}`, ` {} `, `{}x`, `{} {}`, `{,}`, `{"a"}`, `{"a":}`, `{"a":1,}`,
	`{"event_name":"Lead"`, `{"event_name":"Lead",}`, `{"event_name":"Le`, `{"event_name":"Le\`, `{"event_name":"Le\q"}`,
	`{"event_name":"Le\u00"}`, `{"event_name":"Le\u0061d"}`, `{"event_name":"L\"d"}`, "{\"event_name\":\"L\x01\"}",
	"{\"event_name\":\"L\xff\xfe\"}", `{"event_name":null}`, `{"event_name":1}`, `{"event_name":["Lead"]}`,
	`{"EVENT_NAME":"Lead"}`, `{"Event_Name":"Lead"}`, `{"event_nam":"Lead"}`, "{\"event_nam\u212a\":\"Lead\"}",
	`{"event_name":"Lead","event_name":""}`, `{"event_time":"1779273000"}`, `{"event_time":1779273000.0}`,
	`{"event_time":1.779273e9}`, `{"event_time":99999999999999999999}`, `{"event_time":-0}`, `{"event_time":01}`,
	`{"event_time":-}`, `{"event_time":1.}`, `{"event_time":1e}`, `{"event_time":+1}`, `{"event_time":null}`,
	`{"opt_out":true}`, `{"opt_out":"true"}`, `{"opt_out":nul}`, `{"opt_out":tru}`, `{"custom_data":[]}`,
	`{"custom_data":null}`, `{"custom_data":{"a":[1,{"b":null}],"c":-0.5E+2}}`, `{"custom_data":{"a":[1,]}}`,
	`{"custom_data":{"a":1e400}}`, `{"custom_data":{"a":[-1e309]}}`, `{"custom_data":{"a":1e-400}}`, `{"other":1e400}`,
	`{"user_data":null}`, `{"user_data":[]}`, `{"user_data":{"em":"x"}}`, `{"user_data":{"em":[1]}}`,
	`{"user_data":{"em":[null]}}`, `{"user_data":{"em":null}}`, `{"user_data":{"em":["a" "b"]}}`,
	`{"user_data":{"em":["a"],"em":[]}}`, `{"user_data":{"fbp":"x"},"user_data":{"fbc":"y"}}`,
	`{"user_data":{"lead_id":"123"}}`, `{"user_data":{"lead_id":"x"}}`, `{"user_data":{"lead_id":12}}`,
	`{"user_data":{"lead_id":true}}`, `{"user_data":{"page_id":7}}`, `{"user_data":{"EM":["a"]}}`,
	`{"user_data":{"client_ip_address":"1","client_user_agent":"\u0000"}}`, `{"event_id":3}`, `{"referrer_url":null}`,
	`{"other":{"deep":[[[["x"]]]]},"event_name":"Lead"}`, `{"\u0065vent_name":"Lead"}`, "\t{\n\"event_name\" : \"Lead\" \r}\n",
	`{"custom_data":` + strings.Repeat(`[`, 150) + strings.Repeat(`]`, 150) + `}`,
	`{"x":` + strings.Repeat(`{"a":`, 150) + `1` + strings.Repeat(`}`, 150) + `}`,
}

// oldCheck is Meta.Check as it was before readEvent: json.Unmarshal, then
// Precheck.
func oldCheck(p []byte, now time.Time) error {
	var ev Event
	var err error
	if jerr := json.Unmarshal(p, &ev); jerr != nil {
		err = &PrecheckError{Rule: "payload", Detail: "stored payload is not an event: " + jerr.Error()}
	} else if err = Precheck(&ev, now); err == nil {
		return nil
	}
	if pe := (*PrecheckError)(nil); errors.As(err, &pe) && pe.Rule == RuleEventTimeOld {
		return tooOld{pe}
	}
	return &platform.Failure{Class: platform.Refused, Err: err, Response: precheckJSON(err)}
}

// checked is e with only the fields Precheck reads.
func checked(e Event) Event {
	e.EventID, e.ReferrerURL, e.OptOut, e.CustomData, e.UserData.PageID = "", "", false, nil, ""
	return e
}

// checkAgrees fails t unless readEvent, where it answers, decodes p as
// json.Unmarshal does, and Meta.Check's verdict on p is the old one to the
// word. It tells whether readEvent answered.
func checkAgrees(t *testing.T, p []byte, now time.Time) bool {
	t.Helper()
	var want, got Event
	werr := json.Unmarshal(p, &want)
	read := readEvent(p, &got)
	if read {
		if werr != nil {
			t.Fatalf("readEvent(%q) read what json.Unmarshal refuses: %v", p, werr)
		}
		if !reflect.DeepEqual(checked(got), checked(want)) {
			t.Fatalf("readEvent(%q)\n got %#v\nwant %#v", p, checked(got), checked(want))
		}
	}
	old := oldCheck(p, now)
	err := (*Meta)(nil).Check(nil, &model.Delivery{Payload: p}, now)
	if (err == nil) != (old == nil) || err != nil && (err.Error() != old.Error() ||
		errors.Is(err, platform.ErrTooOld) != errors.Is(old, platform.ErrTooOld) ||
		!bytes.Equal(platform.Classify(err).Response, platform.Classify(old).Response)) {
		t.Fatalf("Check(%q) = %v, was %v", p, err, old)
	}
	return read
}

// TestReadEvent: Check reads the events we store without encoding/json,
// and its verdicts, to the word of their details, are those of
// json.Unmarshal and Precheck, for them and for payloads we never write.
func TestReadEvent(t *testing.T) {
	for _, sp := range storedPayloads(t) {
		t.Run(sp.name, func(t *testing.T) {
			if !checkAgrees(t, sp.p, checkNow) {
				t.Errorf("readEvent did not read a stored payload: %s", sp.p)
			}
			err := (*Meta)(nil).Check(nil, &model.Delivery{Payload: sp.p}, checkNow)
			rule := ""
			if pe := (*PrecheckError)(nil); errors.As(err, &pe) {
				rule = pe.Rule
			}
			if err != nil && rule == "" || rule != sp.rule {
				t.Errorf("verdict %v, want rule %q", err, sp.rule)
			}
		})
	}
	for _, p := range oddPayloads {
		checkAgrees(t, []byte(p), checkNow)
	}
}

// TestReadEventKnowsEveryField: readEvent skips keys it does not know, so
// a field added to Event or UserData must be added to eventKeys or
// userDataKeys (and read in eventField or userField when Precheck reads it).
func TestReadEventKnowsEveryField(t *testing.T) {
	for typ, keys := range map[reflect.Type][]string{reflect.TypeFor[Event](): eventKeys, reflect.TypeFor[UserData](): userDataKeys} {
		var names []string
		for f := range typ.Fields() {
			names = append(names, strings.Split(f.Tag.Get("json"), ",")[0])
		}
		if !slices.Equal(names, keys) {
			t.Errorf("%s: keys %q, readEvent knows %q", typ.Name(), names, keys)
		}
	}
}

// FuzzReadEvent: on any bytes, readEvent reads only what json.Unmarshal
// reads, to the same values, and Check's verdict is the old one.
func FuzzReadEvent(f *testing.F) {
	for _, sp := range storedPayloads(f) {
		f.Add(sp.p)
	}
	for _, p := range oddPayloads {
		f.Add([]byte(p))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		checkAgrees(t, p, checkNow)
	})
}

// bodyAgrees fails t unless appendBody gives json.Marshal's body and
// error for req.
func bodyAgrees(t *testing.T, req SendRequest) {
	t.Helper()
	want, werr := json.Marshal(sendBody{Data: req.Events, TestEventCode: req.TestEventCode, AccessToken: req.AccessToken})
	got, err := appendBody(nil, req)
	if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() || !bytes.Equal(got, want) {
		t.Fatalf("appendBody(%q)\n got %s, %v\nwant %s, %v", req.Events, got, err, want, werr)
	}
}

// TestAppendBody: the request's body is json.Marshal's, the stored
// payloads copied as they are.
func TestAppendBody(t *testing.T) {
	var events []json.RawMessage
	for _, sp := range storedPayloads(t) {
		if !isMarshaled(sp.p) {
			t.Errorf("%s: a stored payload is not as json.Marshal writes it: %s", sp.name, sp.p)
		}
		events = append(events, sp.p)
	}
	bodyAgrees(t, SendRequest{Events: events, AccessToken: "EAAB<&>\u2028\"", TestEventCode: "TEST123"})
	bodyAgrees(t, SendRequest{Events: events[:1], AccessToken: "t"})
	for _, p := range oddPayloads {
		bodyAgrees(t, SendRequest{Events: []json.RawMessage{events[0], json.RawMessage(p)}, AccessToken: "t"})
	}
	for _, p := range []json.RawMessage{nil, {}, []byte(`{"a":"<\u2028>"}`), []byte("[\"\xe2\x80\xa8\xe2\x80\"]"),
		[]byte("\"\xe2\x80\""), []byte("{\"a\":\"\xff\"}"), []byte(" 1")} {
		bodyAgrees(t, SendRequest{Events: []json.RawMessage{p}, AccessToken: "t"})
	}
}

// FuzzAppendBody: on any payload and test code, appendBody writes
// json.Marshal's body, or fails with its error.
func FuzzAppendBody(f *testing.F) {
	for _, sp := range storedPayloads(f) {
		f.Add(sp.p, "TEST1")
	}
	for _, p := range oddPayloads {
		f.Add([]byte(p), "")
	}
	f.Fuzz(func(t *testing.T, p []byte, code string) {
		bodyAgrees(t, SendRequest{Events: []json.RawMessage{[]byte(`{"a":1}`), p}, TestEventCode: code, AccessToken: "t<"})
	})
}
