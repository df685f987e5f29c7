package model

import (
	"strings"
	"time"
)

// What a Click-to-WhatsApp lead's SourceDetail holds, by key. Every value is
// what the webhook said, as a string.
const (
	DetailCTWAClid       = "ctwa_clid"        // the ad click id, referral.ctwa_clid
	DetailAdID           = "ad_id"            // referral.source_id: the ad (or post) clicked
	DetailAdSourceType   = "ad_source_type"   // referral.source_type: "ad" or "post"
	DetailAdSourceURL    = "ad_source_url"    // referral.source_url
	DetailAdHeadline     = "ad_headline"      // referral.headline
	DetailWABAID         = "waba_id"          // the WhatsApp Business Account (entry.id)
	DetailPhoneNumberID  = "phone_number_id"  // the business number that received it
	DetailWhatsAppUserID = "whatsapp_user_id" // the sender's business-scoped user id
)

// DetailCookiePrefix prefixes the SourceDetail keys of a website lead's
// platform cookies ("cookie._ttp"): browser ids of the ad platforms'
// pixels, kept for matching and forgotten with the person.
const DetailCookiePrefix = "cookie."

// Cookies are a lead's platform cookies by name.
func (l *Lead) Cookies() map[string]string {
	var out map[string]string
	for k, v := range l.SourceDetail {
		if name, ok := strings.CutPrefix(k, DetailCookiePrefix); ok {
			if out == nil {
				out = map[string]string{}
			}
			out[name] = v
		}
	}
	return out
}

// What a site sends to its WhatsApp Business Account's dataset, in
// WhatsAppSettings.Events.
const (
	WhatsAppSendLead      = "lead"      // the lead event (LeadSubmitted) for every CTWA lead not judged junk
	WhatsAppSendQualified = "qualified" // the qualified event (QualifiedLead) once the lead is clean
	WhatsAppSendStages    = "stages"    // the CRM stages, each as its mapped event
)

// MessagingEventNames are the event names Meta's Conversions API for
// Business Messaging takes from a WhatsApp conversation
// (action_source business_messaging); Meta refuses any other name,
// standard (Lead, Schedule, ...) or custom.
var MessagingEventNames = []string{
	"LeadSubmitted", "QualifiedLead", "Purchase", "InitiateCheckout", "AddToCart", "ViewContent",
	"OrderCreated", "OrderShipped", "OrderDelivered", "OrderCanceled", "OrderReturned", "CartAbandoned",
	"RatingProvided", "ReviewProvided",
}

// IsMessagingEventName tells whether Meta takes name from a business
// messaging conversation.
func IsMessagingEventName(name string) bool {
	for _, n := range MessagingEventNames {
		if n == name {
			return true
		}
	}
	return false
}

// SendsCTWA tells whether the site sends its Click-to-WhatsApp leads'
// events: it names the WhatsApp Business Account and its dataset.
func (w WhatsAppSettings) SendsCTWA() bool {
	return w.BusinessAccountID != "" && w.DatasetID != ""
}

// Sends tells whether the site sends what (WhatsAppSendLead, ...) of its
// CTWA leads; no Events list means all of them.
func (w WhatsAppSettings) Sends(what string) bool {
	if !w.SendsCTWA() {
		return false
	}
	if len(w.Events) == 0 {
		return true
	}
	for _, e := range w.Events {
		if e == what {
			return true
		}
	}
	return false
}

// LeadEventName is the name of a CTWA lead's lead event, LeadSubmitted by
// default.
func (w WhatsAppSettings) LeadEventName() string {
	return or(w.LeadEvent, "LeadSubmitted")
}

// QualifiedEventName is the name of a CTWA lead's qualified event,
// QualifiedLead by default.
func (w WhatsAppSettings) QualifiedEventName() string {
	return or(w.QualifiedEvent, "QualifiedLead")
}

// StageEventName is the event a CRM stage of a CTWA lead is sent as: the
// site's WhatsApp stage map first, else the stage's meta.stages event.
func (w WhatsAppSettings) StageEventName(stage string, meta MetaSettings) string {
	if n, ok := w.Stages[stage]; ok {
		return n
	}
	for k, n := range w.Stages {
		if strings.EqualFold(k, stage) {
			return n
		}
	}
	return meta.Stages[stage].Event
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// WhatsAppConversation is a Click-to-WhatsApp conversation of a site: the
// lead its first message started, by one of the sender's keys.
type WhatsAppConversation struct {
	SiteID SiteID
	// Sender is "user:<business-scoped user id>" or "phone:<digits>".
	Sender    string
	LeadID    LeadID
	StartedAt time.Time
	// BusinessWroteAt is the first time the business was seen writing to
	// the sender after StartedAt; nil until then.
	BusinessWroteAt *time.Time
	// Messages counts the sender's messages in the conversation.
	Messages int
	LastAt   time.Time
}
