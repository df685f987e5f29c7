package capi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// AppendPageView writes what json.Marshal writes, and declines every event
// with a field it does not write.
func TestAppendPageViewMatchesMarshal(t *testing.T) {
	base := pageView("https://www.example.com/implant?fbclid=IwAR1x&utm_source=fb",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)", "IwAR1x")
	odd := []string{"", "a\"b", `back\slash`, "<script>&amp;</script>", "tab\tnew\nline\x00", "çağrı ğüşiöı", "\u2028\u2029",
		"bad \xff utf-8", "emoji 😀", "é&<ü>\"ş\\", "&&", "~`!@#$%^*()_+-={}[]|:;',./?"}
	var cases []Event
	cases = append(cases, base, Event{}, Event{UserData: UserData{FBP: "x"}})
	for _, s := range odd {
		for i := range 8 {
			e := base
			switch i {
			case 0:
				e.EventName = s
			case 1:
				e.EventID = s
			case 2:
				e.ActionSource = s
			case 3:
				e.EventSourceURL = s
			case 4:
				e.ReferrerURL = s
			case 5:
				e.UserData.ClientIPAddress = s
			case 6:
				e.UserData.ClientUserAgent = s
			case 7:
				e.UserData.FBC, e.UserData.FBP = s, s
			}
			cases = append(cases, e)
		}
	}
	for _, e := range cases {
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := AppendPageView([]byte("prefix"), &e)
		if !ok || !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Errorf("AppendPageView(%+v) = %s, %v; json.Marshal: %s", e, got, ok, want)
		}
	}
	others := []func(*Event){
		func(e *Event) { e.MessagingChannel = ChannelWhatsApp },
		func(e *Event) { e.OptOut = true },
		func(e *Event) { e.CustomData = map[string]any{} },
		func(e *Event) { e.UserData.Email = []string{"x"} },
		func(e *Event) { e.UserData.ExternalID = []string{"x"} },
		func(e *Event) { e.UserData.LeadID = "1" },
		func(e *Event) { e.UserData.CTWAClid = "x" },
		func(e *Event) { e.UserData.PageID = "x" },
		func(e *Event) { e.UserData.SubscriptionID = "x" },
		func(e *Event) { e.UserData.FBLoginID = "x" },
		func(e *Event) { e.UserData.WhatsAppBusinessAccountID = "x" },
	}
	for i, f := range others {
		e := base
		f(&e)
		if got, ok := AppendPageView(nil, &e); ok || got != nil {
			t.Errorf("event %d with another field: got %s, %v; want it declined", i, got, ok)
		}
	}
	// Empty but non-nil lists are left out by json.Marshal too.
	e := base
	e.UserData.Email = []string{}
	want, _ := json.Marshal(e)
	if got, ok := AppendPageView(nil, &e); !ok || !bytes.Equal(got, want) {
		t.Errorf("with an empty list: got %s, %v; want %s", got, ok, want)
	}
}

// pageView is a visit's PageView from Facebook's in-app browser, with its
// click id in fbc.
func pageView(page, agent, fbclid string) Event {
	return Event{EventName: "PageView", EventTime: 1765000000, EventID: "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
		ActionSource: SourceWebsite, EventSourceURL: page, ReferrerURL: "https://l.facebook.com/",
		UserData: UserData{ClientIPAddress: "203.0.113.9", ClientUserAgent: agent,
			FBC: "fb.1.1765000000000." + fbclid, FBP: "fb.1.1765000000000.123456789"}}
}

func FuzzAppendPageView(f *testing.F) {
	f.Add("PageView", "https://x.example/?a=1&b=<2>", "203.0.113.9", "Mozilla \"5\"")
	f.Fuzz(func(t *testing.T, name, url, ip, agent string) {
		e := Event{EventName: name, EventTime: 1, ActionSource: SourceWebsite, EventSourceURL: url, ReferrerURL: agent,
			UserData: UserData{ClientIPAddress: ip, ClientUserAgent: agent, FBP: url}}
		want, _ := json.Marshal(e)
		if got, ok := AppendPageView(nil, &e); !ok || !bytes.Equal(got, want) {
			t.Fatalf("got %s, %v; want %s", got, ok, want)
		}
	})
}

func BenchmarkAppendPageView(b *testing.B) {
	e := pageView("https://www.istanbuldis.example/implant-tedavisi?utm_source=facebook&utm_medium=paid&utm_campaign=implant_kasim&fbclid=IwAR2xYzAbCdEf",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS]", "IwAR2xYzAbCdEf")
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			AppendPageView(make([]byte, 0, 600), &e)
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(e)
		}
	})
}

// AppendPageView writes or declines every field of Event and UserData: a
// field added to either must be added to it too (written, or declined
// when set), and then to this list.
func TestAppendPageViewKnowsEveryField(t *testing.T) {
	known := map[string]bool{
		"EventName": true, "EventTime": true, "EventID": true, "ActionSource": true, "EventSourceURL": true,
		"ReferrerURL": true, "MessagingChannel": true, "OptOut": true, "UserData": true, "CustomData": true,
		"Email": true, "Phone": true, "FirstName": true, "LastName": true, "Gender": true, "DateOfBirth": true,
		"City": true, "State": true, "Zip": true, "Country": true, "ExternalID": true,
		"ClientIPAddress": true, "ClientUserAgent": true, "FBC": true, "FBP": true, "LeadID": true,
		"CTWAClid": true, "PageID": true, "SubscriptionID": true, "FBLoginID": true, "WhatsAppBusinessAccountID": true,
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[Event](), reflect.TypeFor[UserData]()} {
		for f := range typ.Fields() {
			if !known[f.Name] {
				t.Errorf("%s.%s: AppendPageView does not know it", typ.Name(), f.Name)
			}
		}
	}
}
