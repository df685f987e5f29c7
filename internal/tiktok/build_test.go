package tiktok_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/testkit"
	"github.com/cleanads/cleanads/internal/tiktok"
	"github.com/cleanads/cleanads/internal/tiktok/tiktoktest"
)

func TestBuildWebLead(t *testing.T) {
	srv := tiktoktest.New(t)
	p := newPlatform(srv, testkit.NewClock(at.Add(time.Hour)))
	site := tiktokSite(t, full())
	l := webLead("L1")
	ev := build(t, p, platform.Input{Site: site, Lead: l, Kind: model.KindLead, At: at,
		Clicks: model.ClickIDs{TTClid: "E.C.P.click"}, Cookies: map[string]string{"_ttp": "2F7h37YkS1j57AYSKTI7IHhJPYH"}})

	if ev.Name != tiktok.DefaultLeadEvent || ev.ID != l.EventID || ev.Account != tiktoktest.PixelCode {
		t.Errorf("event %q id %q account %q; want Lead, the lead's event id %q (shared with the pixel), the pixel", ev.Name, ev.ID, ev.Account, l.EventID)
	}
	if want := at.Add(tiktok.WebMaxAge); !ev.Deadline.Equal(want) {
		t.Errorf("deadline %v, want %v (7 days after the submit)", ev.Deadline, want)
	}
	e := decode(t, ev.Payload)
	want := tiktok.User{
		Email:      sha("ayse.yilmaz@example.com"),
		Phone:      sha("+905324128719"), // the site's country TR places the national number
		ExternalID: sha("crm-77"),
		TTClid:     "E.C.P.click", TTP: "2F7h37YkS1j57AYSKTI7IHhJPYH",
		IP: "203.0.113.9", UserAgent: "Mozilla/5.0 (iPhone)",
	}
	if e.User != want {
		t.Errorf("user\n got %+v\nwant %+v", e.User, want)
	}
	if e.Event != "Lead" || e.EventID != l.EventID || e.EventTime != at.Unix() {
		t.Errorf("event %q id %q time %d", e.Event, e.EventID, e.EventTime)
	}
	if e.Page == nil || e.Page.URL != l.PageURL || e.Page.Referrer != l.Referrer {
		t.Errorf("page %+v, want the lead's page and referrer", e.Page)
	}
	if e.Lead != nil || e.Properties != nil {
		t.Errorf("a web lead event has no lead %+v and no properties %+v", e.Lead, e.Properties)
	}
}

func TestBuildWebLeadOwnEventName(t *testing.T) {
	srv := tiktoktest.New(t)
	p := newPlatform(srv, testkit.NewClock(at.Add(time.Hour)))
	s := full()
	s.LeadEvent = "SubmitForm" // the name the site's pixel still fires
	l := webLead("L1")
	l.PageURL = ""
	ev := build(t, p, platform.Input{Site: tiktokSite(t, s), Lead: l, Kind: model.KindLead})
	e := decode(t, ev.Payload)
	if ev.Name != "SubmitForm" || e.Event != "SubmitForm" {
		t.Errorf("event %q / %q, want the site's SubmitForm", ev.Name, e.Event)
	}
	if e.EventTime != at.Unix() {
		t.Errorf("event time %d, want the submit %d when Input.At is zero", e.EventTime, at.Unix())
	}
	if e.Page == nil || e.Page.URL != testkit.Origin+"/" {
		t.Errorf("page %+v, want the site's origin for a lead posted without its page", e.Page)
	}
}

func TestBuildQualifiedAsCRMEvent(t *testing.T) {
	srv := tiktoktest.New(t)
	p := newPlatform(srv, testkit.NewClock(at.Add(time.Hour)))
	site := tiktokSite(t, full())
	l := webLead("L2")
	qat := at.Add(48 * time.Hour)
	ev := build(t, p, platform.Input{Site: site, Lead: l, Kind: model.KindQualified, At: qat,
		Clicks: model.ClickIDs{TTClid: "E.C.P.click"}, Cookies: map[string]string{"_ttp": "cookie"}})
	if ev.Name != tiktok.DefaultQualifiedEvent || ev.Account != "crm:"+tiktoktest.CRMEventSetID {
		t.Errorf("event %q account %q; want QualifiedLead to the CRM event set", ev.Name, ev.Account)
	}
	if ev.ID != l.EventID+":qualified" {
		t.Errorf("event id %q, want the lead's event id and the kind", ev.ID)
	}
	if want := qat.Add(tiktok.CRMMaxAge); !ev.Deadline.Equal(want) {
		t.Errorf("deadline %v, want %v (28 days)", ev.Deadline, want)
	}
	e := decode(t, ev.Payload)
	if e.User.Email != sha("ayse.yilmaz@example.com") || e.User.TTClid != "E.C.P.click" {
		t.Errorf("user %+v: want the hashed e-mail and the click id", e.User)
	}
	if e.User.TTP != "" || e.User.IP != "" || e.User.UserAgent != "" || e.Page != nil {
		t.Errorf("a CRM event carries no browser data: user %+v page %+v", e.User, e.Page)
	}
	if e.Lead == nil || e.Lead.LeadEventSource != tiktok.LeadEventSource || e.Lead.LeadID != "" {
		t.Errorf("lead %+v: want the lead event source and no TikTok lead id for a website lead", e.Lead)
	}
	// A retry or replay builds the same event.
	again := build(t, p, platform.Input{Site: site, Lead: l, Kind: model.KindQualified, At: qat})
	if again.ID != ev.ID {
		t.Errorf("event id %q then %q: not stable", ev.ID, again.ID)
	}
}

func TestBuildQualifiedWithoutCRMEventSet(t *testing.T) {
	srv := tiktoktest.New(t)
	p := newPlatform(srv, testkit.NewClock(at.Add(time.Hour)))
	site := tiktokSite(t, tiktok.Settings{PixelCode: tiktoktest.PixelCode, QualifiedEvent: "Contact"})
	ev := build(t, p, platform.Input{Site: site, Lead: webLead("L3"), Kind: model.KindQualified, At: at,
		Cookies: map[string]string{"_ttp": "cookie"}})
	e := decode(t, ev.Payload)
	if ev.Account != tiktoktest.PixelCode || ev.Name != "Contact" || e.User.TTP != "cookie" || e.Page == nil {
		t.Errorf("account %q name %q user %+v page %+v: want a web event to the pixel", ev.Account, ev.Name, e.User, e.Page)
	}
	if !ev.Deadline.Equal(at.Add(tiktok.WebMaxAge)) {
		t.Errorf("deadline %v, want a web event's", ev.Deadline)
	}
	// A lead from elsewhere has no web event to be.
	other := webLead("L4")
	other.Source = model.SourceLeadAds
	_, err := p.Build(context.Background(), platform.Input{Site: site, Lead: other, Kind: model.KindQualified, At: at})
	if !isSkip(err) || !strings.Contains(err.Error(), "CRM event set") {
		t.Errorf("a Lead Ads lead's qualified event without a CRM event set: %v, want a skip that names the CRM event set", err)
	}
}

func TestBuildStages(t *testing.T) {
	srv := tiktoktest.New(t)
	p := newPlatform(srv, testkit.NewClock(at.Add(time.Hour)))
	site := tiktokSite(t, full())
	l := webLead("L5")
	value := 1500.5
	ev := build(t, p, platform.Input{Site: site, Lead: l, Kind: "stage:won", At: at.Add(time.Hour), Value: &value, Currency: "TRY"})
	e := decode(t, ev.Payload)
	if ev.Name != "Purchase" || ev.ID != l.EventID+":stage:won" || ev.Account != "crm:"+tiktoktest.CRMEventSetID {
		t.Errorf("stage won: name %q id %q account %q", ev.Name, ev.ID, ev.Account)
	}
	if e.Properties == nil || e.Properties.Value == nil || *e.Properties.Value != value || e.Properties.Currency != "TRY" {
		t.Errorf("properties %+v, want 1500.5 TRY", e.Properties)
	}
	ev = build(t, p, platform.Input{Site: site, Lead: l, Kind: "stage:appointment", At: at.Add(time.Hour)})
	if e := decode(t, ev.Payload); ev.Name != "Schedule" || e.Properties != nil {
		t.Errorf("stage appointment: name %q properties %+v; want Schedule without a value", ev.Name, e.Properties)
	}
	for _, kind := range []string{"stage:lost", model.KindPageView, "stage:"} {
		if _, err := p.Build(context.Background(), platform.Input{Site: site, Lead: l, Kind: kind, At: at}); !isSkip(err) {
			t.Errorf("kind %q: %v, want a skip", kind, err)
		}
	}
}

func TestBuildInstantFormLead(t *testing.T) {
	srv := tiktoktest.New(t)
	p := newPlatform(srv, testkit.NewClock(at.Add(time.Hour)))
	site := tiktokSite(t, full())
	l := testkit.Lead(testkit.SiteID, "L6", at, func(l *model.Lead) {
		l.Source, l.EventID = "tiktok_forms", ""
		l.Email, l.Phone = "mehmet@example.com", "+90 532 412 87 20"
		l.SourceDetail = map[string]string{tiktok.SourceDetailLeadID: "7301234567890123456"}
	})
	if _, err := p.Build(context.Background(), platform.Input{Site: site, Lead: l, Kind: model.KindLead, At: at}); !isSkip(err) {
		t.Errorf("the raw lead of an Instant Form: %v, want a skip (TikTok counts its own)", err)
	}
	ev := build(t, p, platform.Input{Site: site, Lead: l, Kind: model.KindQualified, At: at})
	e := decode(t, ev.Payload)
	if e.Lead == nil || e.Lead.LeadID != "7301234567890123456" {
		t.Errorf("lead %+v, want the TikTok lead id", e.Lead)
	}
	if ev.ID != "L6:qualified" || e.User.Phone != sha("+905324128720") {
		t.Errorf("id %q phone %q: want the lead id and kind, and the phone in E.164", ev.ID, e.User.Phone)
	}
	// The stand-in takes it as TikTok documents.
	out, err := p.Send(context.Background(), site, []*model.Delivery{row(site, l, model.KindQualified, ev)})
	if err != nil || !out[0].Accepted {
		t.Fatalf("send: %v %+v", err, out)
	}
	got := srv.Accepted()
	if len(got) != 1 || got[0].EventSource != tiktok.SourceCRM || got[0].EventSourceID != tiktoktest.CRMEventSetID {
		t.Errorf("accepted %+v, want one crm event in the event set", got)
	}
}

func TestBuildSkipsWithoutSettingsOrPixel(t *testing.T) {
	srv := tiktoktest.New(t)
	p := newPlatform(srv, testkit.NewClock(at.Add(time.Hour)))
	bare := testkit.Site()
	if _, err := p.Build(context.Background(), platform.Input{Site: bare, Lead: webLead("L7"), Kind: model.KindLead}); !isSkip(err) {
		t.Errorf("a site without TikTok settings: %v, want a skip", err)
	}
	crmOnly := tiktokSite(t, tiktok.Settings{CRMEventSetID: tiktoktest.CRMEventSetID})
	if _, err := p.Build(context.Background(), platform.Input{Site: crmOnly, Lead: webLead("L7"), Kind: model.KindLead}); !isSkip(err) {
		t.Errorf("a lead event without a pixel: %v, want a skip", err)
	}
	if _, err := p.Build(context.Background(), platform.Input{Site: crmOnly, Lead: webLead("L7"), Kind: model.KindQualified}); err != nil {
		t.Errorf("a qualified lead to a CRM-only site: %v", err)
	}
}

// TikTok's phone rule: E.164, with the "+" and the country code ("+12133734253"
// is the example TikTok's parameter documentation gives).
func TestNormalizePhone(t *testing.T) {
	for _, c := range []struct {
		in, country, want string
	}{
		{"+1 213 373 4253", "", "+12133734253"},
		{"(213) 373-4253", "US", "+12133734253"},
		{"001 213 373 4253", "TR", "+12133734253"},
		{"0532 412 87 19", "TR", "+905324128719"},
		{"+90 (532) 412-87-19", "US", "+905324128719"},
		{"020 7946 0958", "GB", "+442079460958"},
		{"532 412 87 19", "tr", "+905324128719"},
		{"2133734253", "", ""}, // no country to place it
		{"not a phone", "TR", ""},
		{"12", "TR", ""},
		{"", "TR", ""},
	} {
		got, ok := tiktok.NormalizePhone(c.in, c.country)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("NormalizePhone(%q, %q) = %q, %v; want %q", c.in, c.country, got, ok, c.want)
		}
	}
}

func TestNormalizeEmail(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"  Ayse.Yilmaz@Example.COM\n", "ayse.yilmaz@example.com"},
		{"a@b.co", "a@b.co"},
		{"no-at-sign", ""},
		{"@example.com", ""},
		{"ayse@", ""},
		{"ay se@example.com", ""},
		{"", ""},
	} {
		got, ok := tiktok.NormalizeEmail(c.in)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("NormalizeEmail(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
}

// A value hashed upstream is passed on once, lower-cased, never hashed
// again; an invalid one is left out rather than hashed.
func TestBuildHashes(t *testing.T) {
	srv := tiktoktest.New(t)
	p := newPlatform(srv, testkit.NewClock(at.Add(time.Hour)))
	site := tiktokSite(t, full())
	pre := strings.ToUpper(sha("ayse@example.com"))
	l := testkit.Lead(testkit.SiteID, "L8", at, func(l *model.Lead) { l.Email, l.Phone = pre, "call me" })
	e := decode(t, build(t, p, platform.Input{Site: site, Lead: l, Kind: model.KindLead}).Payload)
	if e.User.Email != strings.ToLower(pre) || e.User.Phone != "" {
		t.Errorf("user %+v: want the given hash lower-cased and no phone", e.User)
	}
	// A number the site's country cannot place is taken from intake's key.
	l = testkit.Lead(testkit.SiteID, "L9", at, func(l *model.Lead) { l.Phone, l.PhoneKey = "2133734253", "12133734253" })
	site.Settings.Country = ""
	e = decode(t, build(t, p, platform.Input{Site: site, Lead: l, Kind: model.KindLead}).Payload)
	if e.User.Phone != sha("+12133734253") {
		t.Errorf("phone %q, want the hash of +12133734253 from the lead's phone key", e.User.Phone)
	}
}

func TestOnAndValidate(t *testing.T) {
	srv := tiktoktest.New(t)
	p := newPlatform(srv, testkit.NewClock(at))
	if p.On(testkit.Site()) {
		t.Error("a site without TikTok settings is on")
	}
	site := tiktokSite(t, full())
	if !p.On(site) || len(p.Validate(site)) != 0 {
		t.Errorf("full settings: on %v, problems %v", p.On(site), p.Validate(site))
	}
	noToken := tiktokSite(t, full())
	noToken.Secrets = nil
	if p.On(noToken) {
		t.Error("a site without an access token is on")
	}
	keys := func(errs []platform.FieldError) map[string]bool {
		m := map[string]bool{}
		for _, e := range errs {
			m[e.Key] = true
		}
		return m
	}
	if got := keys(p.Validate(noToken)); !got[tiktok.SecretAccessToken] {
		t.Errorf("no token: problems on %v, want access_token", got)
	}
	bad := tiktokSite(t, tiktok.Settings{PixelCode: "C4 ABC", CRMEventSetID: "73-1", Mode: model.ModeTest,
		LeadEvent: " Lead", Stages: map[string]string{"won": ""}})
	got := keys(p.Validate(bad))
	for _, k := range []string{"pixel_code", "crm_event_set_id", "test_event_code", "lead_event", "stages"} {
		if !got[k] {
			t.Errorf("bad settings: no problem on %s (got %v)", k, got)
		}
	}
	if got := keys(p.Validate(tiktokSite(t, tiktok.Settings{Mode: "loud"}))); !got["pixel_code"] || !got["mode"] {
		t.Errorf("no pixel nor event set, mode loud: problems on %v", got)
	}
	fields := map[string]platform.Field{}
	for _, f := range p.Fields() {
		fields[f.Key] = f
	}
	if fields[tiktok.SecretAccessToken].Kind != platform.FieldSecret || fields["stages"].Kind != platform.FieldStages ||
		len(fields["mode"].Choices) != 3 || fields["pixel_code"].Label == "" {
		t.Errorf("fields %+v", fields)
	}
	// The settings document the admin UI writes is read back as it is.
	raw, _ := json.Marshal(map[string]any{"pixel_code": tiktoktest.PixelCode, "stages": map[string]string{"won": "Purchase"}})
	site.Settings.Platforms[tiktok.Name] = raw
	if !p.On(site) || len(p.Validate(site)) != 0 {
		t.Errorf("a document of the fields' keys: on %v problems %v", p.On(site), p.Validate(site))
	}
}
