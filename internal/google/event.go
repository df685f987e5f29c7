package google

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// MaxBatch is the most events one events:ingest request may carry.
const MaxBatch = 2000

// maxIdentifiers is the most user identifiers Google takes per event.
const maxIdentifiers = 10

// MaxDestinations is the most destinations (conversion actions) one
// request may name.
const MaxDestinations = 10

// Encodings of hashed user identifiers; this package sends HEX.
const EncodingHex = "HEX"

// Account types of a product account.
const AccountGoogleAds = "GOOGLE_ADS"

// Event sources Google takes in eventSource.
const (
	SourceWeb   = "WEB"
	SourcePhone = "PHONE"
	SourceOther = "OTHER"
)

// Consent statuses.
const (
	ConsentGranted = "CONSENT_GRANTED"
	ConsentDenied  = "CONSENT_DENIED"
)

// Request is the body of events:ingest.
type Request struct {
	Destinations []Destination `json:"destinations"`
	Events       []Event       `json:"events"`
	ValidateOnly bool          `json:"validateOnly,omitempty"`
	Encoding     string        `json:"encoding,omitempty"`
}

// Destination is one conversion action of one Google Ads account;
// events name it by Reference.
type Destination struct {
	Reference            string          `json:"reference,omitempty"`
	LoginAccount         *ProductAccount `json:"loginAccount,omitempty"`
	OperatingAccount     ProductAccount  `json:"operatingAccount"`
	ProductDestinationID string          `json:"productDestinationId"`
}

// ProductAccount is an account of a Google product.
type ProductAccount struct {
	AccountType string `json:"accountType"`
	AccountID   string `json:"accountId"`
}

// Event is one conversion as events:ingest takes it.
type Event struct {
	DestinationReferences []string       `json:"destinationReferences,omitempty"`
	TransactionID         string         `json:"transactionId"`
	EventTimestamp        string         `json:"eventTimestamp"`
	AdIdentifiers         *AdIdentifiers `json:"adIdentifiers,omitempty"`
	Currency              string         `json:"currency,omitempty"`
	ConversionValue       float64        `json:"conversionValue,omitempty"`
	EventSource           string         `json:"eventSource,omitempty"`
	UserData              *UserData      `json:"userData,omitempty"`
	Consent               *Consent       `json:"consent,omitempty"`
}

// AdIdentifiers holds the one click id of the lead's ad click.
type AdIdentifiers struct {
	GClid  string `json:"gclid,omitempty"`
	GBraid string `json:"gbraid,omitempty"`
	WBraid string `json:"wbraid,omitempty"`
}

// UserData is the hashed contact data of an event.
type UserData struct {
	UserIdentifiers []UserIdentifier `json:"userIdentifiers"`
}

// UserIdentifier has exactly one of its fields.
type UserIdentifier struct {
	EmailAddress string   `json:"emailAddress,omitempty"`
	PhoneNumber  string   `json:"phoneNumber,omitempty"`
	Address      *Address `json:"address,omitempty"`
}

// Address is a hashed name with the clear region and postal code; Google
// requires all four.
type Address struct {
	GivenName  string `json:"givenName"`
	FamilyName string `json:"familyName"`
	RegionCode string `json:"regionCode"`
	PostalCode string `json:"postalCode"`
}

// Consent is Google's two consent signals.
type Consent struct {
	AdUserData        string `json:"adUserData,omitempty"`
	AdPersonalization string `json:"adPersonalization,omitempty"`
}

// Params are the inputs of BuildEvent.
type Params struct {
	Settings *model.GoogleSettings
	// Country is the site's ISO 3166-1 alpha-2 country: the phone's
	// default region and the address's region.
	Country string
	Lead    *model.Lead
	// Clicks are the lead's ad click ids; the first of gclid, gbraid,
	// wbraid is sent.
	Clicks model.ClickIDs
	// Kind is model.KindQualified or "stage:<name>".
	Kind string
	// At is when the stage happened; default the lead's submit time.
	At time.Time
	// Value and Currency are the stage's value; Currency defaults to the
	// site's.
	Value    float64
	Currency string
}

// ErrNotSent is wrapped by BuildEvent's errors for an event Google would
// refuse or could not match: it is never queued.
var ErrNotSent = errors.New("not sent to Google")

// BuildEvent builds a lead's conversion for Google and returns it with the
// conversion action it is counted under. The event names the action by
// its id in destinationReferences; Batch makes the destinations.
func BuildEvent(p Params) (Event, error) {
	if p.Settings == nil || p.Lead == nil {
		return Event{}, errors.New("google: build event: settings and lead are required")
	}
	l := p.Lead
	action := p.Settings.ConversionAction(p.Kind)
	if action == "" {
		return Event{}, fmt.Errorf("google: %s has no conversion action: %w", p.Kind, ErrNotSent)
	}
	if l.ID == "" {
		return Event{}, fmt.Errorf("google: build %s event: lead has no id", p.Kind)
	}
	at := p.At
	if at.IsZero() {
		at = l.SubmittedAt
	}
	if at.IsZero() {
		return Event{}, fmt.Errorf("google: build %s event for lead %s: no event time", p.Kind, l.ID)
	}
	e := Event{
		DestinationReferences: []string{action},
		TransactionID:         TransactionID(l.ID, p.Kind),
		EventTimestamp:        at.UTC().Format(time.RFC3339),
		EventSource:           eventSource(l.Source),
		AdIdentifiers:         adIdentifiers(p.Clicks),
		UserData:              userData(l, p.Country),
		Consent:               consent(l.Consent, p.Settings.Consent),
	}
	if p.Value > 0 {
		e.ConversionValue = p.Value
		e.Currency = strings.ToUpper(p.Currency)
		if e.Currency == "" {
			e.Currency = strings.ToUpper(p.Settings.Currency)
		}
	}
	if err := Check(&e); err != nil {
		return Event{}, fmt.Errorf("google: lead %s %s: %w", l.ID, p.Kind, err)
	}
	return e, nil
}

// TransactionID is the id Google deduplicates a lead's conversion on: the
// hex of the first 16 bytes of SHA-256("cleanads:google:"+lead+":"+kind).
// It never changes, so a retry or a replay cannot count twice, and it
// carries nothing of the person.
func TransactionID(lead model.LeadID, kind string) string {
	sum := sha256.Sum256([]byte("cleanads:google:" + string(lead) + ":" + kind))
	return hex.EncodeToString(sum[:16])
}

func eventSource(source string) string {
	switch source {
	case "", model.SourceWeb:
		return SourceWeb
	}
	return SourceOther
}

// adIdentifiers keeps one click id: gclid, else gbraid, else wbraid.
func adIdentifiers(c model.ClickIDs) *AdIdentifiers {
	switch {
	case c.GClid != "":
		return &AdIdentifiers{GClid: c.GClid}
	case c.GBraid != "":
		return &AdIdentifiers{GBraid: c.GBraid}
	case c.WBraid != "":
		return &AdIdentifiers{WBraid: c.WBraid}
	}
	return nil
}

// userData hashes the lead's e-mail, phone and, when a postal code is in
// its fields, its name and address; values that do not normalise are left
// out.
func userData(l *model.Lead, country string) *UserData {
	var ids []UserIdentifier
	if e, err := NormalizeEmail(l.Email); err == nil {
		ids = append(ids, UserIdentifier{EmailAddress: Hash(e)})
	}
	if ph, err := NormalizePhone(l.Phone, country); err == nil {
		ids = append(ids, UserIdentifier{PhoneNumber: Hash(ph)})
	}
	if a := address(l, country); a != nil {
		ids = append(ids, UserIdentifier{Address: a})
	}
	if len(ids) == 0 {
		return nil
	}
	return &UserData{UserIdentifiers: ids}
}

// address is sent only whole, as Google requires: given and family name,
// region and postal code.
func address(l *model.Lead, country string) *Address {
	first, last := l.FirstName, l.LastName
	if first == "" && last == "" {
		if f := strings.Fields(l.Name); len(f) > 1 {
			first, last = f[0], f[len(f)-1]
		}
	}
	region, err := NormalizeRegion(country)
	if err != nil {
		return nil
	}
	var postal string
	for _, k := range []string{"postal_code", "zip", "postcode", "zip_code"} {
		if v := l.Fields[k]; v != "" {
			postal = v
			break
		}
	}
	g, err1 := NormalizeGivenName(first)
	f, err2 := NormalizeFamilyName(last)
	pc, err3 := NormalizePostalCode(postal, region)
	if err1 != nil || err2 != nil || err3 != nil {
		return nil
	}
	return &Address{GivenName: Hash(g), FamilyName: Hash(f), RegionCode: region, PostalCode: pc}
}

// consent is the lead's own word when it gave one, else the site's
// default; nil when neither says.
func consent(lead *bool, def model.GoogleConsent) *Consent {
	if lead != nil {
		v := ConsentDenied
		if *lead {
			v = ConsentGranted
		}
		return &Consent{AdUserData: v, AdPersonalization: v}
	}
	c := &Consent{AdUserData: consentStatus(def.AdUserData), AdPersonalization: consentStatus(def.AdPersonalization)}
	if c.AdUserData == "" && c.AdPersonalization == "" {
		return nil
	}
	return c
}

func consentStatus(s string) string {
	switch s {
	case model.ConsentGranted:
		return ConsentGranted
	case model.ConsentDenied:
		return ConsentDenied
	}
	return ""
}

// CheckError is an event Google would refuse, found before sending.
type CheckError struct {
	Rule, Detail string
}

func (e *CheckError) Error() string { return "google check " + e.Rule + ": " + e.Detail }

// Unwrap makes every check failure an ErrNotSent.
func (e *CheckError) Unwrap() error { return ErrNotSent }

func failed(rule, format string, args ...any) error {
	return &CheckError{Rule: rule, Detail: fmt.Sprintf(format, args...)}
}

// Check finds what in an event would make Google refuse the whole request
// it travels in (fast fail): hashes that are not 64 lowercase hex digits,
// a region that is not two upper-case letters, more than one click id, a
// missing transaction id or timestamp, a value without a currency; and an
// event with neither a click id nor a user identifier, which nothing could
// match.
func Check(e *Event) error {
	if e.TransactionID == "" {
		return failed("transaction_id", "missing")
	}
	if _, err := time.Parse(time.RFC3339, e.EventTimestamp); err != nil {
		return failed("event_timestamp", "%q is not RFC 3339", e.EventTimestamp)
	}
	clicks := 0
	if a := e.AdIdentifiers; a != nil {
		for _, v := range []string{a.GClid, a.GBraid, a.WBraid} {
			if v != "" {
				clicks++
			}
		}
	}
	if clicks > 1 {
		return failed("ad_identifiers", "more than one of gclid, gbraid and wbraid")
	}
	ids := 0
	if e.UserData != nil {
		ids = len(e.UserData.UserIdentifiers)
		if ids > maxIdentifiers {
			return failed("user_identifiers", "%d identifiers, at most %d", ids, maxIdentifiers)
		}
		for i, u := range e.UserData.UserIdentifiers {
			if err := checkIdentifier(i, u); err != nil {
				return err
			}
		}
	}
	if clicks == 0 && ids == 0 {
		return failed("match", "neither a click id nor a user identifier: Google could not match it")
	}
	if e.ConversionValue < 0 {
		return failed("conversion_value", "negative")
	}
	if e.ConversionValue > 0 && !model.IsCurrencyCode(e.Currency) {
		return failed("currency", "a value needs an ISO 4217 currency, got %q", e.Currency)
	}
	if len(e.DestinationReferences) == 0 {
		return failed("destination", "no conversion action")
	}
	return nil
}

func checkIdentifier(i int, u UserIdentifier) error {
	n := 0
	if u.EmailAddress != "" {
		n++
		if !IsHash(u.EmailAddress) {
			return failed("email_address", "identifier %d is not a hex SHA-256", i)
		}
	}
	if u.PhoneNumber != "" {
		n++
		if !IsHash(u.PhoneNumber) {
			return failed("phone_number", "identifier %d is not a hex SHA-256", i)
		}
	}
	if a := u.Address; a != nil {
		n++
		if !IsHash(a.GivenName) || !IsHash(a.FamilyName) {
			return failed("address", "identifier %d: names are not hex SHA-256", i)
		}
		if _, err := NormalizeRegion(a.RegionCode); err != nil || a.RegionCode != strings.ToUpper(a.RegionCode) {
			return failed("address", "identifier %d: region %q", i, a.RegionCode)
		}
		if a.PostalCode == "" {
			return failed("address", "identifier %d: no postal code", i)
		}
	}
	if n != 1 {
		return failed("user_identifier", "identifier %d has %d values, exactly one is allowed", i, n)
	}
	return nil
}

// Target is the account a site's events go to.
type Target struct {
	OperatingAccountID string
	LoginAccountID     string
	ValidateOnly       bool
}

// NewRequest puts events (at most MaxBatch, all of one account) in one
// request, with a destination for each conversion action they name.
func NewRequest(t Target, events []Event) (*Request, error) {
	if len(events) == 0 {
		return nil, fmt.Errorf("google: no events: %w", ErrInvalidRequest)
	}
	if len(events) > MaxBatch {
		return nil, fmt.Errorf("google: %d events, more than %d: %w", len(events), MaxBatch, ErrInvalidRequest)
	}
	if t.OperatingAccountID == "" {
		return nil, fmt.Errorf("google: no operating account: %w", ErrInvalidRequest)
	}
	r := &Request{Events: events, ValidateOnly: t.ValidateOnly, Encoding: EncodingHex}
	seen := map[string]bool{}
	for _, e := range events {
		for _, ref := range e.DestinationReferences {
			if seen[ref] {
				continue
			}
			seen[ref] = true
			d := Destination{Reference: ref, ProductDestinationID: ref,
				OperatingAccount: ProductAccount{AccountType: AccountGoogleAds, AccountID: t.OperatingAccountID}}
			if t.LoginAccountID != "" {
				d.LoginAccount = &ProductAccount{AccountType: AccountGoogleAds, AccountID: t.LoginAccountID}
			}
			r.Destinations = append(r.Destinations, d)
		}
	}
	if len(r.Destinations) > MaxDestinations {
		return nil, fmt.Errorf("google: %d conversion actions in one request, more than %d: %w",
			len(r.Destinations), MaxDestinations, ErrInvalidRequest)
	}
	return r, nil
}
