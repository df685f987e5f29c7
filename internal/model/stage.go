package model

import "time"

// StageQualified is the CRM stage that also makes a lead clean.
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
	CreatedAt time.Time
}
