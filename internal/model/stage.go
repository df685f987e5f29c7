package model

import "time"

// StageQualified is the usual name of the CRM stage mapped to the site's
// qualified event. Any stage makes a review or rules-junk lead clean.
const StageQualified = "qualified"

// WhatsAppSettings tie WhatsApp Business numbers to a site.
type WhatsAppSettings struct {
	// PhoneNumberIDs are the Cloud API phone_number_id values (digits, from
	// the webhook's metadata) of the site's WhatsApp numbers.
	PhoneNumberIDs []string `json:"phone_number_ids,omitempty" yaml:"phone_number_ids"`
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
	LeadID    LeadID
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
