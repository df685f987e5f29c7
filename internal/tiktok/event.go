package tiktok

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nyaruka/phonenumbers"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
)

// Request is the body of an Events API 2.0 request.
type Request struct {
	EventSource   string `json:"event_source"`
	EventSourceID string `json:"event_source_id"`
	// TestEventCode marks every event of the request as a test event.
	TestEventCode string `json:"test_event_code,omitempty"`
	// Data are the events, each a row's payload as it was built.
	Data []json.RawMessage `json:"data"`
}

// Event is one event of a request's data: a row's payload.
type Event struct {
	Event      string      `json:"event"`
	EventTime  int64       `json:"event_time"` // Unix seconds
	EventID    string      `json:"event_id"`
	User       User        `json:"user"`
	Page       *Page       `json:"page,omitempty"`
	Properties *Properties `json:"properties,omitempty"`
	// Lead is the TikTok lead of a CRM event, for leads from TikTok's
	// Instant Forms.
	Lead *Lead `json:"lead,omitempty"`
}

// User is who the event is of. Email, Phone and ExternalID are lower-case
// hex SHA-256; the rest is in clear, and Redact takes it out.
type User struct {
	Email      string `json:"email,omitempty"`
	Phone      string `json:"phone,omitempty"`
	ExternalID string `json:"external_id,omitempty"`
	TTClid     string `json:"ttclid,omitempty"`
	TTP        string `json:"ttp,omitempty"`
	IP         string `json:"ip,omitempty"`
	UserAgent  string `json:"user_agent,omitempty"`
}

// Page is where a web event happened.
type Page struct {
	URL      string `json:"url,omitempty"`
	Referrer string `json:"referrer,omitempty"`
}

// Properties carry a stage's value.
type Properties struct {
	Value    *float64 `json:"value,omitempty"`
	Currency string   `json:"currency,omitempty"`
}

// Lead names a TikTok lead in a CRM event.
type Lead struct {
	LeadID          string `json:"lead_id,omitempty"`
	LeadEventSource string `json:"lead_event_source,omitempty"`
}

// Build makes the TikTok event of one of a lead's events:
//   - the raw lead event of a website lead goes to the pixel as a web
//     event, with the lead's event id (the one the TikTok pixel was given,
//     so TikTok counts the two once), the click id, the _ttp cookie, IP,
//     user agent and page;
//   - a qualified lead or a mapped stage goes to the CRM event set as a
//     CRM event (with the TikTok lead id of an Instant Form lead), or,
//     when the site has no CRM event set, to the pixel as a web event for
//     a website lead;
//   - anything else is skipped with the reason.
//
// The e-mail, phone and external id are hashed as TikTok asks (hashEmail,
// hashPhone).
func (p *Platform) Build(ctx context.Context, in platform.Input) (*platform.Event, error) {
	if in.Site == nil || in.Lead == nil {
		return nil, fmt.Errorf("tiktok: build: site and lead are required")
	}
	s, ok, err := settings(in.Site)
	if err != nil {
		return nil, fmt.Errorf("tiktok: build: %w", err)
	}
	if !ok {
		return nil, platform.Skip("the site has no TikTok settings")
	}
	l := in.Lead
	fromWeb := l.Source == "" || l.Source == model.SourceWeb
	var name string
	switch in.Kind {
	case model.KindLead:
		if !fromWeb {
			// TikTok counts its own Instant Form leads; a lead from
			// elsewhere (Meta's forms, WhatsApp) is no conversion of a
			// TikTok ad on the website.
			return nil, platform.Skip("only website leads are sent to TikTok as leads; its qualified leads and stages are sent as CRM events")
		}
		if s.PixelCode == "" {
			return nil, platform.Skip("the site has no TikTok pixel code for website leads")
		}
		name = s.leadEvent()
	case model.KindQualified:
		name = s.qualifiedEvent()
	default:
		stage, ok := in.Stage()
		if !ok {
			return nil, platform.Skip(fmt.Sprintf("TikTok takes no %q events", in.Kind))
		}
		if name = strings.TrimSpace(s.Stages[stage]); name == "" {
			return nil, platform.Skip(fmt.Sprintf("the stage %q is not among the TikTok stages", stage))
		}
	}

	source := SourceWeb
	if in.Kind != model.KindLead {
		switch {
		case s.CRMEventSetID != "":
			source = SourceCRM
		case fromWeb && s.PixelCode != "":
		default:
			return nil, platform.Skip("a lead that did not come from the website is sent to TikTok as a CRM event: give the CRM event set ID")
		}
	}

	at := in.At
	if at.IsZero() {
		at = l.SubmittedAt
	}
	if at.IsZero() {
		return nil, fmt.Errorf("tiktok: build %s event for lead %s: no event time", in.Kind, l.ID)
	}
	e := Event{Event: name, EventTime: at.Unix(), EventID: eventID(l, in.Kind)}
	if e.EventID == "" {
		return nil, fmt.Errorf("tiktok: build %s event: the lead has neither an id nor an event id", in.Kind)
	}
	country := in.Site.Settings.Country
	e.User = User{Email: hashEmail(l.Email), Phone: hashPhone(l.Phone, country), ExternalID: hashExternalID(l.ExternalID),
		TTClid: strings.TrimSpace(in.Clicks.TTClid)}
	if e.User.Phone == "" && l.PhoneKey != "" {
		// The phone as intake normalised it: digits with the country
		// code, for a number the site's country could not place.
		e.User.Phone = hashPhone("+"+l.PhoneKey, "")
	}
	if in.Value != nil && model.IsCurrencyCode(in.Currency) {
		v := *in.Value
		e.Properties = &Properties{Value: &v, Currency: in.Currency}
	}
	maxAge := WebMaxAge
	account := s.PixelCode
	if source == SourceWeb {
		e.User.TTP = strings.TrimSpace(in.Cookies["_ttp"])
		e.User.IP, e.User.UserAgent = l.ClientIP, l.UserAgent
		pg := Page{URL: l.PageURL, Referrer: l.Referrer}
		if pg.URL == "" && len(in.Site.Settings.Origins) > 0 {
			// A lead the site's own server posted without its page: the
			// form was on the site's origin.
			pg.URL = in.Site.Settings.Origins[0] + "/"
		}
		if pg != (Page{}) {
			e.Page = &pg
		}
	} else {
		maxAge, account = CRMMaxAge, crmAccount(s.CRMEventSetID)
		e.Lead = &Lead{LeadEventSource: LeadEventSource}
		if id := strings.TrimSpace(l.SourceDetail[SourceDetailLeadID]); id != "" {
			e.Lead.LeadID = id
		}
	}
	payload, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("tiktok: build: %w", err)
	}
	return &platform.Event{Name: name, ID: e.EventID, Account: account, Payload: payload, Deadline: at.Add(maxAge)}, nil
}

// eventID is the event's deduplication key: the lead's own event id for
// the raw lead event (the TikTok pixel was given the same), and for any
// other kind the lead's event id and the kind, so a retry or a replay is
// the same event to TikTok.
func eventID(l *model.Lead, kind string) string {
	if kind == model.KindLead && l.EventID != "" {
		return l.EventID
	}
	base := l.EventID
	if base == "" {
		base = string(l.ID)
	}
	if base == "" {
		return ""
	}
	return base + ":" + kind
}

// crmAccount is the outbox account of a CRM event set: rows are batched by
// account, and a batch's account says which event source it goes to.
func crmAccount(id string) string { return SourceCRM + ":" + id }

// parseAccount returns a row account's event source and id.
func parseAccount(account string) (source, id string) {
	if id, ok := strings.CutPrefix(account, SourceCRM+":"); ok {
		return SourceCRM, id
	}
	return SourceWeb, account
}

// sha256Hex is the lower-case hex SHA-256 of s.
func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// hashed returns s lower-cased when it is already a SHA-256 in hex: a
// value hashed upstream is passed on, never hashed twice.
func hashed(s string) (string, bool) {
	if len(s) != 64 {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return "", false
		}
	}
	return strings.ToLower(s), true
}

// NormalizeEmail is an e-mail address as TikTok hashes it: trimmed and
// lower-cased. It reports false for a value that is no address (no "@"
// with text on both sides, or white space inside).
func NormalizeEmail(s string) (string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	at := strings.LastIndexByte(s, '@')
	if at <= 0 || at == len(s)-1 || strings.ContainsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' }) {
		return "", false
	}
	return s, true
}

// NormalizePhone is a phone number as TikTok hashes it: E.164, the "+"
// and country code first, digits only ("+905324128719"). country (ISO
// 3166 alpha-2) places a number written without its country code; a
// number that libphonenumber cannot read as a possible number of some
// country is refused (false): a wrong hash only misleads matching.
func NormalizePhone(s, country string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", false
	}
	region := strings.ToUpper(strings.TrimSpace(country))
	if region == "" || phonenumbers.GetCountryCodeForRegion(region) == 0 {
		region = "ZZ"
	}
	n, err := phonenumbers.Parse(s, region)
	if err != nil || !phonenumbers.IsPossibleNumber(n) {
		return "", false
	}
	return phonenumbers.Format(n, phonenumbers.E164), true
}

func hashEmail(s string) string {
	if h, ok := hashed(strings.TrimSpace(s)); ok {
		return h
	}
	n, ok := NormalizeEmail(s)
	if !ok {
		return ""
	}
	return sha256Hex(n)
}

func hashPhone(s, country string) string {
	if h, ok := hashed(strings.TrimSpace(s)); ok {
		return h
	}
	n, ok := NormalizePhone(s, country)
	if !ok {
		return ""
	}
	return sha256Hex(n)
}

// hashExternalID hashes the lead's id in the advertiser's systems, trimmed;
// its case is the advertiser's and is kept.
func hashExternalID(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if h, ok := hashed(s); ok {
		return h
	}
	return sha256Hex(s)
}
