package capi

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

var submitted = time.Date(2026, 5, 20, 10, 30, 0, 123e6, time.UTC)

func testSite() *model.Site {
	return &model.Site{ID: "dent", Settings: model.SiteSettings{
		Country: "TR",
		Meta: model.MetaSettings{PixelID: "123456789", CustomData: map[string]string{
			"lead_event_source": "CleanAds", "status": "site"}},
	}}
}

func testLead() *model.Lead {
	return &model.Lead{
		ID: "L1", SiteID: "dent", EventID: "browser-event-1",
		Email: " Ayse@Example.com ", Phone: "0532 412 87 19", Name: "Ayşe  Nur Yılmaz",
		PageURL: "https://dent.example.com/form", FBClid: "IwAR2xYz_-ABC.def", FBP: "fb.1.1716200000000.123456789",
		ClientIP: "203.0.113.9", UserAgent: "Mozilla/5.0", LeadAdsID: "1234567890123456789",
		SubmittedAt: submitted,
	}
}

func TestBuildLeadEvent(t *testing.T) {
	e, err := BuildLeadEvent(BuildParams{Site: testSite(), Lead: testLead(),
		CustomData: map[string]any{"status": "new", "value": 0}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	ud := got["user_data"].(map[string]any)
	first := func(k string) string {
		l, _ := ud[k].([]any)
		if len(l) != 1 {
			t.Errorf("%s = %v, want one value", k, ud[k])
			return ""
		}
		return l[0].(string)
	}
	checks := []struct{ name, got, want string }{
		{"event_name", got["event_name"].(string), "Lead"},
		{"event_id", got["event_id"].(string), "browser-event-1"},
		{"action_source", got["action_source"].(string), "website"},
		{"event_source_url", got["event_source_url"].(string), "https://dent.example.com/form"},
		{"em", first("em"), Hash("ayse@example.com")},
		{"ph", first("ph"), Hash("905324128719")},
		{"fn", first("fn"), Hash("ayşe")},
		{"ln", first("ln"), Hash("yılmaz")},
		{"country", first("country"), Hash("tr")},
		{"fbc", ud["fbc"].(string), "fb.1.1779273000123.IwAR2xYz_-ABC.def"},
		{"fbp", ud["fbp"].(string), "fb.1.1716200000000.123456789"},
		{"ip", ud["client_ip_address"].(string), "203.0.113.9"},
		{"ua", ud["client_user_agent"].(string), "Mozilla/5.0"},
		{"custom source", got["custom_data"].(map[string]any)["lead_event_source"].(string), "CleanAds"},
		{"custom override", got["custom_data"].(map[string]any)["status"].(string), "new"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if got["event_time"] != float64(submitted.Unix()) {
		t.Errorf("event_time = %v", got["event_time"])
	}
	if !strings.Contains(string(b), `"lead_id":1234567890123456789`) {
		t.Errorf("lead_id not written as an exact JSON number: %s", b)
	}
	if _, ok := ud["external_id"]; ok {
		t.Error("empty external_id sent")
	}
	if err := Precheck(&e, submitted.Add(time.Hour)); err != nil {
		t.Errorf("Precheck: %v", err)
	}
}

// A lead posted without its page (by the site's own server) still has a
// URL for Meta's website event: the site's first origin.
func TestBuildLeadEventWithoutPage(t *testing.T) {
	l, site := testLead(), testSite()
	l.PageURL = ""
	site.Settings.Origins = []string{"https://www.istanbuldis.example", "https://istanbuldis.example"}
	e, err := BuildLeadEvent(BuildParams{Site: site, Lead: l})
	if err != nil {
		t.Fatal(err)
	}
	if e.EventSourceURL != "https://www.istanbuldis.example/" {
		t.Errorf("event_source_url = %q, want the site's first origin", e.EventSourceURL)
	}
	if err := Precheck(&e, submitted.Add(time.Hour)); err != nil {
		t.Errorf("Precheck: %v", err)
	}
}

func TestBuildLeadEventKinds(t *testing.T) {
	l := testLead()
	l.FBC, l.Email, l.Phone, l.Name, l.FirstName, l.LastName = "fb.1.1716000000000.keep", "bad", "", "", "Ali", ""
	l.LeadAdsID = "12x"
	e, err := BuildLeadEvent(BuildParams{Site: testSite(), Lead: l, Kind: model.KindQualified,
		ActionSource: SourceSystemGenerated, EventTime: submitted.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if e.EventName != "QualifiedLead" || e.EventID != QualifiedEventID("L1", model.KindQualified) ||
		e.EventSourceURL != "" || e.EventTime != submitted.Add(time.Hour).Unix() {
		t.Errorf("event %+v", e)
	}
	u := e.UserData
	if u.FBC != "fb.1.1716000000000.keep" || u.Email != nil || u.Phone != nil || len(u.FirstName) != 1 ||
		u.LastName != nil || u.LeadID != "" {
		t.Errorf("user_data %+v", u)
	}
	if _, err := BuildLeadEvent(BuildParams{Site: testSite()}); err == nil {
		t.Error("no error without a lead")
	}
	l.EventID = ""
	if _, err := BuildLeadEvent(BuildParams{Site: testSite(), Lead: l}); err == nil {
		t.Error("no error for a lead event without an event id")
	}
}

func TestSplitName(t *testing.T) {
	tests := []struct{ in, first, last string }{
		{"", "", ""},
		{"  Ali ", "Ali", ""},
		{"Ayşe Nur Yılmaz", "Ayşe", "Yılmaz"},
		{"John\tSmith", "John", "Smith"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if f, l := SplitName(tt.in); f != tt.first || l != tt.last {
				t.Errorf("SplitName(%q) = %q, %q", tt.in, f, l)
			}
		})
	}
}

func TestQualifiedEventID(t *testing.T) {
	a := QualifiedEventID("L1", model.KindQualified)
	if a != QualifiedEventID("L1", model.KindQualified) {
		t.Error("not deterministic")
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(a) {
		t.Errorf("%q is not a version-8 UUID", a)
	}
	for _, other := range []string{QualifiedEventID("L2", model.KindQualified), QualifiedEventID("L1", "stage:won")} {
		if other == a {
			t.Error("different inputs, same id")
		}
	}
}

func TestPrecheck(t *testing.T) {
	now := submitted.Add(time.Hour)
	base := func() Event {
		e, err := BuildLeadEvent(BuildParams{Site: testSite(), Lead: testLead()})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	tests := []struct {
		name string
		mod  func(e *Event)
		rule string
	}{
		{"ok", func(*Event) {}, ""},
		{"no name", func(e *Event) { e.EventName = " " }, RuleEventName},
		{"7 days and a second", func(e *Event) { e.EventTime = now.Add(-model.MaxEventAge - time.Second).Unix() }, RuleEventTimeOld},
		{"just under 7 days", func(e *Event) { e.EventTime = now.Add(-model.MaxEventAge + time.Second).Unix() }, ""},
		{"future", func(e *Event) { e.EventTime = now.Add(10 * time.Minute).Unix() }, RuleEventTimeAhead},
		{"small skew", func(e *Event) { e.EventTime = now.Add(time.Minute).Unix() }, ""},
		{"action source", func(e *Event) { e.ActionSource = "web" }, RuleActionSource},
		{"website no ua", func(e *Event) { e.UserData.ClientUserAgent = "" }, RuleUserAgent},
		{"website no url", func(e *Event) { e.EventSourceURL = "" }, RuleSourceURL},
		{"system no url", func(e *Event) { e.EventSourceURL, e.ActionSource = "", SourceSystemGenerated }, ""},
		{"messaging", func(e *Event) { e.ActionSource = SourceBusinessMessaging }, RuleMessaging},
		{"fbc seconds", func(e *Event) { e.UserData.FBC = "fb.1.1716000000.abc" }, RuleFBC},
		{"fbc short", func(e *Event) { e.UserData.FBC = "fb.1.abc" }, RuleFBC},
		{"fbc prefix", func(e *Event) { e.UserData.FBC = "fc.1.1716000000000.abc" }, RuleFBC},
		{"fbc future", func(e *Event) { e.UserData.FBC = MintFBC("x", now.Add(time.Hour)) }, RuleFBC},
		{"fbc with appendix", func(e *Event) { e.UserData.FBC = "fb.1.1716000000000.abc.AQYAAQAA" }, ""},
		{"fbp empty random", func(e *Event) { e.UserData.FBP = "fb.1.1716000000000." }, RuleFBP},
		{"upper hash", func(e *Event) { e.UserData.Email = []string{strings.ToUpper(Hash("x"))} }, RuleHashed},
		{"plain phone", func(e *Event) { e.UserData.Phone = []string{"905324128719"} }, RuleHashed},
		{"no match key", func(e *Event) {
			e.ActionSource, e.UserData = SourceSystemGenerated, UserData{Country: []string{Hash("tr")}}
		}, RuleMatchKey},
		{"ip and ua suffice", func(e *Event) {
			e.UserData = UserData{ClientIPAddress: "203.0.113.9", ClientUserAgent: "UA"}
		}, ""},
		{"lead_id suffices", func(e *Event) {
			e.ActionSource, e.UserData = SourceSystemGenerated, UserData{LeadID: "123"}
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := base()
			tt.mod(&e)
			err := Precheck(&e, now)
			var pe *PrecheckError
			switch {
			case tt.rule == "" && err != nil:
				t.Errorf("unexpected %v", err)
			case tt.rule != "" && (!errors.As(err, &pe) || pe.Rule != tt.rule):
				t.Errorf("got %v, want rule %s", err, tt.rule)
			}
		})
	}
}

// An event built from a lead's precomputed Contact is the event built from
// the lead alone.
func TestBuildLeadEventSharedContact(t *testing.T) {
	site, lead := testSite(), testLead()
	for _, kind := range []string{model.KindLead, model.KindQualified} {
		alone, err := BuildLeadEvent(BuildParams{Site: site, Lead: lead, Kind: kind})
		if err != nil {
			t.Fatal(err)
		}
		shared, err := BuildLeadEvent(BuildParams{Site: site, Lead: lead, Kind: kind,
			Contact: HashContact(lead, site.Settings.Country)})
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(alone)
		b, _ := json.Marshal(shared)
		if string(a) != string(b) {
			t.Errorf("%s: with a shared Contact\n%s\nwant\n%s", kind, b, a)
		}
	}
}
