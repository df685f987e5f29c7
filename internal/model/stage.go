package model

import (
	"sort"
	"strings"
	"time"
)

// StageQualified is the usual name of the CRM stage mapped to the site's
// qualified event. Any stage makes a review or rules-junk lead clean.
const StageQualified = "qualified"

// StageWon is the usual name of the CRM stage of a deal won: the campaign
// report and the dashboard count its leads as won and its values as
// revenue.
const StageWon = "won"

// WhatsAppSettings tie WhatsApp Business numbers to a site.
type WhatsAppSettings struct {
	// PhoneNumberIDs are the Cloud API phone_number_id values (digits, from
	// the webhook's metadata) of the site's WhatsApp numbers.
	PhoneNumberIDs []string `json:"phone_number_ids,omitempty" yaml:"phone_number_ids"`
	// BusinessAccountID is the WhatsApp Business Account (WABA) id the
	// numbers belong to; with DatasetID it turns on the events of
	// Click-to-WhatsApp leads.
	BusinessAccountID string `json:"business_account_id,omitempty" yaml:"business_account_id"`
	// DatasetID is the dataset (Events Manager) linked to the WABA: CTWA
	// leads' events go to /{dataset_id}/events.
	DatasetID string `json:"dataset_id,omitempty" yaml:"dataset_id"`
	// Events says what of CTWA leads is sent (WhatsAppSendLead,
	// WhatsAppSendQualified, WhatsAppSendStages); empty means all.
	Events []string `json:"events,omitempty" yaml:"events"`
	// LeadEvent and QualifiedEvent name those events for CTWA leads
	// (LeadSubmitted and QualifiedLead by default).
	LeadEvent      string `json:"lead_event,omitempty" yaml:"lead_event"`
	QualifiedEvent string `json:"qualified_event,omitempty" yaml:"qualified_event"`
	// Stages maps a CRM stage to the event name sent for CTWA leads where
	// meta.stages names one Meta refuses from a conversation (Schedule:
	// use QualifiedLead); value and currency stay meta.stages'.
	Stages map[string]string `json:"stages,omitempty" yaml:"stages"`
}

// HasPhoneNumberID tells whether the WhatsApp number id is one of the site's.
func (w WhatsAppSettings) HasPhoneNumberID(id string) bool {
	for _, v := range w.PhoneNumberIDs {
		if v == id {
			return true
		}
	}
	return false
}

// LeadStage is a CRM stage a lead reached, recorded once per lead and stage.
type LeadStage struct {
	LeadID LeadID
	// SiteID is the lead's site: the stage is counted in its counters
	// when it is recorded (it is not read back).
	SiteID    SiteID
	Stage     string
	At        time.Time // when the stage happened
	EventName string
	EventID   string
	// Value (nil when none), Currency and ActionSource are what the
	// stage's event carries, kept so that a stage held back can be sent
	// later as it came.
	Value        *float64
	Currency     string
	ActionSource string
	CreatedAt    time.Time
}

// OwnerSaidJunk tells whether the owner's word on the lead is junk: the one
// verdict a CRM stage does not overturn. Its stages are recorded and held
// back from Meta until the owner changes the word.
func (d Decision) OwnerSaidJunk() bool {
	return d.Verdict == VerdictJunk && d.DecidedBy == DecidedByOwner
}

// IsCurrencyCode tells whether s has the form of an ISO 4217 code: three
// capital letters, as Meta's and Google's APIs take a currency.
func IsCurrencyCode(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// StageMeeting is the usual name of the CRM stage of a meeting held with
// the lead.
const StageMeeting = "meeting"

// MaxStages is how many stages a site may have in the admin's stage editor.
const MaxStages = 20

// DefaultStages are the stages a new site starts with: a meeting (Meta's
// Schedule) and a deal won (Purchase), the won stage in currency (the
// site's, empty when unknown) with the value given when it is recorded.
func DefaultStages(currency string) map[string]StageEvent {
	return map[string]StageEvent{
		StageMeeting: {Event: "Schedule"},
		StageWon:     {Event: "Purchase", Currency: currency},
	}
}

// DefaultStageOrder is the order of DefaultStages.
func DefaultStageOrder() []string { return []string{StageMeeting, StageWon} }

// countryCurrencies are the currencies of the countries a new site most
// often is in; another country's site gets no default currency.
var countryCurrencies = map[string]string{
	"TR": "TRY", "US": "USD", "GB": "GBP", "DE": "EUR", "FR": "EUR", "NL": "EUR", "ES": "EUR",
	"IT": "EUR", "AT": "EUR", "BE": "EUR", "IE": "EUR", "PT": "EUR", "FI": "EUR", "GR": "EUR",
	"AZ": "AZN", "AE": "AED", "SA": "SAR", "CH": "CHF", "SE": "SEK", "NO": "NOK", "DK": "DKK",
	"PL": "PLN", "CA": "CAD", "AU": "AUD",
}

// CountryCurrency is the usual currency of a country (ISO 3166 alpha-2),
// "" when not known.
func CountryCurrency(country string) string {
	return countryCurrencies[strings.ToUpper(strings.TrimSpace(country))]
}

// StageNames are the site's Meta stages in the order the stage editor
// saved them, then any others by name.
func (s SiteSettings) StageNames() []string {
	out := make([]string, 0, len(s.Meta.Stages))
	seen := map[string]bool{}
	for _, n := range s.StageOrder {
		if _, ok := s.Meta.Stages[n]; ok && !seen[n] {
			out, seen[n] = append(out, n), true
		}
	}
	var rest []string
	for n := range s.Meta.Stages {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}
