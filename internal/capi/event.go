package capi

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// Action sources Meta accepts in a server event's action_source.
const (
	SourceWebsite           = "website"
	SourceSystemGenerated   = "system_generated"
	SourcePhoneCall         = "phone_call"
	SourceChat              = "chat"
	SourceEmail             = "email"
	SourceApp               = "app"
	SourcePhysicalStore     = "physical_store"
	SourceBusinessMessaging = "business_messaging"
	SourceOther             = "other"
)

// Event is one server event as Meta's Conversions API takes it.
type Event struct {
	EventName        string         `json:"event_name"`
	EventTime        int64          `json:"event_time"` // Unix seconds
	EventID          string         `json:"event_id,omitempty"`
	ActionSource     string         `json:"action_source"`
	EventSourceURL   string         `json:"event_source_url,omitempty"`
	ReferrerURL      string         `json:"referrer_url,omitempty"`
	MessagingChannel string         `json:"messaging_channel,omitempty"`
	OptOut           bool           `json:"opt_out,omitempty"`
	UserData         UserData       `json:"user_data"`
	CustomData       map[string]any `json:"custom_data,omitempty"`
}

// UserData is an event's customer information. The hashed keys hold
// lowercase hex SHA-256 values (Meta accepts a list for each); the others
// are sent as they are.
type UserData struct {
	Email       []string `json:"em,omitempty"`
	Phone       []string `json:"ph,omitempty"`
	FirstName   []string `json:"fn,omitempty"`
	LastName    []string `json:"ln,omitempty"`
	Gender      []string `json:"ge,omitempty"`
	DateOfBirth []string `json:"db,omitempty"`
	City        []string `json:"ct,omitempty"`
	State       []string `json:"st,omitempty"`
	Zip         []string `json:"zp,omitempty"`
	Country     []string `json:"country,omitempty"`
	ExternalID  []string `json:"external_id,omitempty"`

	ClientIPAddress string `json:"client_ip_address,omitempty"`
	ClientUserAgent string `json:"client_user_agent,omitempty"`
	FBC             string `json:"fbc,omitempty"`
	FBP             string `json:"fbp,omitempty"`
	// LeadID is Meta's Lead Ads lead id, an int64 at Meta: it is written as
	// a JSON number straight from its digits, never through a float.
	LeadID         json.Number `json:"lead_id,omitempty"`
	CTWAClid       string      `json:"ctwa_clid,omitempty"`
	PageID         string      `json:"page_id,omitempty"`
	SubscriptionID string      `json:"subscription_id,omitempty"`
	FBLoginID      string      `json:"fb_login_id,omitempty"`

	// WhatsAppBusinessAccountID names the WhatsApp Business Account of a
	// business_messaging event on WhatsApp, with CTWAClid; neither is
	// hashed.
	WhatsAppBusinessAccountID string `json:"whatsapp_business_account_id,omitempty"`
}

// hashedLists returns the hashed keys in the order of HashedFields.
func (u *UserData) hashedLists() [11][]string {
	return [11][]string{u.Email, u.Phone, u.FirstName, u.LastName, u.Gender, u.DateOfBirth,
		u.City, u.State, u.Zip, u.Country, u.ExternalID}
}

// BuildParams are the inputs of BuildLeadEvent. Only Site and Lead are
// required; the rest have defaults.
type BuildParams struct {
	Site *model.Site
	Lead *model.Lead
	// Kind is the delivery kind (model.KindLead, model.KindQualified,
	// "stage:won", ...); default model.KindLead.
	Kind string
	// EventName defaults to the site's lead or qualified event name by Kind.
	EventName string
	// EventID defaults to the lead's own event id for model.KindLead (the
	// pixel shares it) and to QualifiedEventID for every other kind.
	EventID string
	// EventTime defaults to the lead's submit time.
	EventTime time.Time
	// ActionSource defaults to "website".
	ActionSource string
	// CustomData is merged over the site's configured custom_data.
	CustomData map[string]any
	// Contact is the lead's hashed customer data from HashContact, when
	// the caller builds several events of one lead; nil hashes it here.
	Contact *Contact
}

// Contact is a lead's customer data, normalised and hashed as Meta wants
// it (nil where empty or invalid). Hashing costs a phone number parse and
// six SHA-256: the events of one lead share one Contact.
type Contact struct {
	Email, Phone, FirstName, LastName, ExternalID, Country []string
	// City, State and Zip are hashed from the lead's answers of those
	// names (model.AnswerCity, ...), when it has them: a Lead Ads form
	// asks for them.
	City, State, Zip []string
}

// HashContact hashes a lead's e-mail, phone (with the site's country),
// first and last name (split from Name when only that is given: first
// word, last word), external id and country.
func HashContact(l *model.Lead, country string) *Contact {
	first, last := l.FirstName, l.LastName
	if first == "" && last == "" {
		first, last = SplitName(l.Name)
	}
	c := &Contact{
		Email:      hashedList(FieldEmail, l.Email, country),
		Phone:      hashedList(FieldPhone, l.Phone, country),
		FirstName:  hashedList(FieldFirstName, first, country),
		LastName:   hashedList(FieldLastName, last, country),
		ExternalID: hashedList(FieldExternalID, l.ExternalID, country),
		Country:    hashedList(FieldCountry, country, country),
	}
	addressKeys(c, l, country)
	return c
}

// HashContactKeys is HashContact for a new lead whose PhoneKey is
// NormalizePhone's answer for its Phone and country ("" when it refused
// the phone), as intake sets it: the phone is not normalised again.
func HashContactKeys(l *model.Lead, country string) *Contact {
	c := HashContact(&model.Lead{Email: l.Email, FirstName: l.FirstName, LastName: l.LastName, Name: l.Name,
		ExternalID: l.ExternalID, Fields: l.Fields}, country)
	if l.PhoneKey != "" {
		if h, err := hashNormalized(FieldPhone, l.PhoneKey); err == nil {
			c.Phone = []string{h}
		}
	}
	return c
}

// addressKeys hashes the lead's city, state, zip and country answers into
// c; the lead's own country wins over the site's when it is a valid one.
func addressKeys(c *Contact, l *model.Lead, country string) {
	if len(l.Fields) == 0 {
		return
	}
	c.City = hashedList(FieldCity, l.Fields[model.AnswerCity], country)
	c.State = hashedList(FieldState, l.Fields[model.AnswerState], country)
	c.Zip = hashedList(FieldZip, l.Fields[model.AnswerZip], country)
	if own := hashedList(FieldCountry, l.Fields[model.AnswerCountry], country); own != nil {
		c.Country = own
	}
}

// BuildLeadEvent builds the server event for a lead: hashed e-mail, phone
// (with the site's country), first and last name (split from Name when only
// that is given: first word, last word), external id and country; fbc (the
// lead's, or minted from its fbclid at the submit time), fbp, IP and user
// agent as they are; event_source_url for website events. Values that are
// empty or invalid are left out.
func BuildLeadEvent(p BuildParams) (Event, error) {
	if p.Site == nil || p.Lead == nil {
		return Event{}, errors.New("capi: build event: site and lead are required")
	}
	l, s := p.Lead, p.Site
	kind := p.Kind
	if kind == "" {
		kind = model.KindLead
	}
	e := Event{
		EventName:    p.EventName,
		EventID:      p.EventID,
		ActionSource: p.ActionSource,
	}
	if e.EventName == "" {
		e.EventName = s.Settings.Meta.QualifiedEventName()
		if kind == model.KindLead {
			e.EventName = s.Settings.Meta.LeadEventName()
		}
	}
	if e.EventID == "" {
		if kind == model.KindLead {
			e.EventID = l.EventID
		} else {
			if l.ID == "" {
				return Event{}, fmt.Errorf("capi: build %s event: lead has no id", kind)
			}
			e.EventID = QualifiedEventID(l.ID, kind)
		}
	}
	if e.EventID == "" {
		return Event{}, fmt.Errorf("capi: build %s event for lead %s: no event id", kind, l.ID)
	}
	if e.ActionSource == "" {
		e.ActionSource = SourceWebsite
	}
	at := p.EventTime
	if at.IsZero() {
		at = l.SubmittedAt
	}
	if at.IsZero() {
		return Event{}, fmt.Errorf("capi: build %s event for lead %s: no event time", kind, l.ID)
	}
	e.EventTime = at.Unix()
	if e.ActionSource == SourceWebsite {
		e.EventSourceURL = l.PageURL
		if e.EventSourceURL == "" && len(s.Settings.Origins) > 0 {
			// A lead the site's own server posted without the page: Meta
			// refuses a website event without a URL, and the site's
			// origin is where the form was.
			e.EventSourceURL = s.Settings.Origins[0] + "/"
		}
	}

	c := p.Contact
	if c == nil {
		c = HashContact(l, s.Settings.Country)
	}
	u := &e.UserData
	u.Email, u.Phone, u.FirstName, u.LastName = c.Email, c.Phone, c.FirstName, c.LastName
	u.ExternalID, u.Country = c.ExternalID, c.Country
	u.City, u.State, u.Zip = c.City, c.State, c.Zip
	u.ClientIPAddress = l.ClientIP
	u.ClientUserAgent = l.UserAgent
	u.FBC = l.FBC
	if u.FBC == "" && l.FBClid != "" && !l.SubmittedAt.IsZero() {
		u.FBC = MintFBC(l.FBClid, l.SubmittedAt)
	}
	u.FBP = l.FBP
	if id, ok := leadAdsID(l.LeadAdsID); ok {
		u.LeadID = id
	}

	if len(s.Settings.Meta.CustomData) > 0 || len(p.CustomData) > 0 {
		e.CustomData = make(map[string]any, len(s.Settings.Meta.CustomData)+len(p.CustomData))
		for k, v := range s.Settings.Meta.CustomData {
			e.CustomData[k] = v
		}
		maps.Copy(e.CustomData, p.CustomData)
	}
	return e, nil
}

// hashedList hashes one value for field, or returns nil when it is empty or
// invalid (Meta's rule: drop, never hash).
func hashedList(field, value, country string) []string {
	if value == "" {
		return nil
	}
	h, err := HashField(field, value, country)
	if err != nil {
		return nil
	}
	return []string{h}
}

// leadAdsID checks a Lead Ads lead id is a positive int64 written in digits.
func leadAdsID(s string) (json.Number, bool) {
	s = strings.TrimSpace(s)
	if s == "" || s[0] == '0' {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return "", false
		}
	}
	if _, err := strconv.ParseInt(s, 10, 64); err != nil {
		return "", false
	}
	return json.Number(s), true
}

// SplitName splits a full name into a first name (the first word) and a last
// name (the last word); a single word is a first name only.
func SplitName(name string) (first, last string) {
	f := strings.Fields(name)
	switch len(f) {
	case 0:
		return "", ""
	case 1:
		return f[0], ""
	}
	return f[0], f[len(f)-1]
}

// MintFBC makes Meta's click-id cookie value fb.1.<ms>.<fbclid> from an
// fbclid and the time it was first seen. The fbclid is never altered.
func MintFBC(fbclid string, firstSeen time.Time) string {
	return "fb.1." + strconv.FormatInt(firstSeen.UnixMilli(), 10) + "." + fbclid
}

// QualifiedEventID derives the event id of a server-only event from the lead
// and the event kind: the first 128 bits of
// SHA-256("cleanads:"+lead+":"+kind), shaped as a version-8 UUID. It never
// changes, so a retry or a replay cannot count twice at Meta.
func QualifiedEventID(leadID model.LeadID, kind string) string {
	sum := sha256.Sum256([]byte("cleanads:" + string(leadID) + ":" + kind))
	var b [16]byte
	copy(b[:], sum[:16])
	b[6] = b[6]&0x0f | 0x80 // version 8: custom
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	return model.FormatUUID(b)
}
