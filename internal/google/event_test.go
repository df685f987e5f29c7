package google

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

func testSettings() *model.GoogleSettings {
	return &model.GoogleSettings{OperatingAccountID: "1234567890", QualifiedConversionAction: "111",
		Stages: map[string]string{"won": "222"}, Currency: "EUR",
		Consent: model.GoogleConsent{AdUserData: model.ConsentGranted, AdPersonalization: model.ConsentDenied}}
}

func testLead() *model.Lead {
	return &model.Lead{ID: "l_1", Email: "Cloudy.SanFrancisco+x@gmail.com", Phone: "0532 123 45 67",
		Name: "Ayşe Yılmaz", GClid: "Cj0KCQ", SubmittedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC),
		Fields: map[string]string{"postal_code": "34000"}}
}

func TestBuildEvent(t *testing.T) {
	l := testLead()
	at := time.Date(2026, 12, 2, 15, 4, 5, 0, time.FixedZone("TRT", 3*3600))
	e, err := BuildEvent(Params{Settings: testSettings(), Country: "TR", Lead: l,
		Clicks: model.ClickIDs{GClid: l.GClid, GBraid: "gb", WBraid: "wb"}, Kind: "stage:won", At: at, Value: 6000})
	if err != nil {
		t.Fatal(err)
	}
	if e.EventTimestamp != "2026-12-02T12:04:05Z" || e.TransactionID != TransactionID("l_1", "stage:won") ||
		len(e.TransactionID) != 32 || strings.Contains(e.TransactionID, "@") {
		t.Errorf("time/id: %+v", e)
	}
	if e.AdIdentifiers == nil || e.AdIdentifiers.GClid != "Cj0KCQ" || e.AdIdentifiers.GBraid != "" || e.AdIdentifiers.WBraid != "" {
		t.Errorf("one click id, gclid first: %+v", e.AdIdentifiers)
	}
	if e.ConversionValue != 6000 || e.Currency != "EUR" || e.DestinationReferences[0] != "222" || e.EventSource != SourceWeb {
		t.Errorf("value/action: %+v", e)
	}
	ids := e.UserData.UserIdentifiers
	if len(ids) != 3 || ids[0].EmailAddress != "223ebda6f6889b1494551ba902d9d381daf2f642bae055888e96343d53e9f9c4" ||
		ids[1].PhoneNumber != Hash("+905321234567") || ids[2].Address.GivenName != Hash("ayşe") ||
		ids[2].Address.FamilyName != Hash("yılmaz") || ids[2].Address.RegionCode != "TR" || ids[2].Address.PostalCode != "34000" {
		t.Errorf("identifiers: %+v", ids)
	}
	if e.Consent == nil || e.Consent.AdUserData != ConsentGranted || e.Consent.AdPersonalization != ConsentDenied {
		t.Errorf("site default consent: %+v", e.Consent)
	}
	no := false
	l.Consent = &no
	e, _ = BuildEvent(Params{Settings: testSettings(), Country: "TR", Lead: l, Clicks: model.ClickIDs{WBraid: "wb"}, Kind: model.KindQualified})
	if e.Consent.AdUserData != ConsentDenied || e.Consent.AdPersonalization != ConsentDenied || e.AdIdentifiers.WBraid != "wb" ||
		e.EventTimestamp != "2026-12-01T10:00:00Z" || e.ConversionValue != 0 || e.Currency != "" || e.DestinationReferences[0] != "111" {
		t.Errorf("lead's own consent, wbraid, qualified: %+v", e)
	}
	if TransactionID("l_1", model.KindQualified) == TransactionID("l_1", "stage:won") {
		t.Error("transaction ids of two stages collide")
	}
}

func TestBuildEventNotSent(t *testing.T) {
	s := testSettings()
	bare := &model.Lead{ID: "l_2", Email: "not-an-address", SubmittedAt: time.Now()}
	if _, err := BuildEvent(Params{Settings: s, Lead: bare, Kind: model.KindQualified}); !errors.Is(err, ErrNotSent) {
		t.Errorf("no click id and no identifier: %v", err)
	}
	if _, err := BuildEvent(Params{Settings: s, Lead: testLead(), Kind: "stage:lost"}); !errors.Is(err, ErrNotSent) {
		t.Errorf("a stage without a conversion action: %v", err)
	}
	s.Currency = ""
	if _, err := BuildEvent(Params{Settings: s, Lead: testLead(), Kind: "stage:won", Value: 5}); !errors.Is(err, ErrNotSent) {
		t.Errorf("a value without a currency: %v", err)
	}
}

func TestCheck(t *testing.T) {
	ok := func() Event {
		return Event{TransactionID: "t", EventTimestamp: "2026-12-01T10:00:00Z", DestinationReferences: []string{"1"},
			AdIdentifiers: &AdIdentifiers{GClid: "g"}}
	}
	for name, tc := range map[string]func(*Event){
		"two click ids": func(e *Event) { e.AdIdentifiers.GBraid = "b" },
		"bad hash": func(e *Event) {
			e.UserData = &UserData{UserIdentifiers: []UserIdentifier{{EmailAddress: "a@b.c"}}}
		},
		"upper-case hash": func(e *Event) {
			e.UserData = &UserData{UserIdentifiers: []UserIdentifier{{PhoneNumber: strings.ToUpper(Hash("x"))}}}
		},
		"two values in one identifier": func(e *Event) {
			e.UserData = &UserData{UserIdentifiers: []UserIdentifier{{EmailAddress: Hash("a"), PhoneNumber: Hash("b")}}}
		},
		"nothing to match": func(e *Event) { e.AdIdentifiers = nil },
		"no timestamp":     func(e *Event) { e.EventTimestamp = "yesterday" },
		"value, no currency": func(e *Event) {
			e.ConversionValue = 10
		},
	} {
		e := ok()
		tc(&e)
		var ce *CheckError
		if err := Check(&e); !errors.As(err, &ce) || !errors.Is(err, ErrNotSent) {
			t.Errorf("%s: Check = %v", name, err)
		}
	}
	e := ok()
	if err := Check(&e); err != nil {
		t.Errorf("good event: %v", err)
	}
}

func TestNewRequestAndChunks(t *testing.T) {
	evs := make([]Event, MaxBatch+5)
	for i := range evs {
		evs[i] = Event{DestinationReferences: []string{"1"}}
	}
	c := chunks(evs)
	if len(c) != 2 || len(c[0]) != MaxBatch || len(c[1]) != 5 {
		t.Errorf("chunks of %d: %d", len(evs), len(c))
	}
	var many []Event
	for i := 0; i < 12; i++ {
		many = append(many, Event{DestinationReferences: []string{string(rune('a' + i))}})
	}
	if c := chunks(many); len(c) != 2 || len(c[0]) != MaxDestinations {
		t.Errorf("chunks by destination: %v", c)
	}
	r, err := NewRequest(Target{OperatingAccountID: "1", LoginAccountID: "2"}, many[:3])
	if err != nil || len(r.Destinations) != 3 || r.Encoding != EncodingHex || r.Destinations[1].ProductDestinationID != "b" ||
		r.Destinations[0].LoginAccount.AccountID != "2" || r.Destinations[0].OperatingAccount.AccountType != AccountGoogleAds {
		t.Errorf("request: %+v %v", r, err)
	}
	if _, err := NewRequest(Target{OperatingAccountID: "1"}, many); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("12 destinations: %v", err)
	}
}
