package model

import (
	"slices"
	"time"
)

// DestinationWebhook is the outbox destination of the outgoing webhooks:
// one row per event and endpoint, the endpoint's id in the row's PixelID.
const DestinationWebhook = "webhook"

// The events an outgoing webhook posts (docs/webhooks.md).
const (
	HookLeadReceived  = "lead.received"  // a new lead, with its first verdict and reasons
	HookVerdictChange = "lead.verdict"   // a lead's verdict changed
	HookQualified     = "lead.qualified" // a lead became clean (once per lead)
	HookStage         = "lead.stage"     // a CRM stage was recorded on a lead
	HookTest          = "webhook.test"   // the owner's "send a test event"
)

// HookEvents are the events an endpoint may choose, in the order the
// admin UI shows them.
var HookEvents = []string{HookLeadReceived, HookVerdictChange, HookQualified, HookStage}

// WebhookEndpoint is a URL a site's owner set to receive its leads' life.
type WebhookEndpoint struct {
	ID     string
	SiteID SiteID
	URL    string
	// Events are the events it receives (HookEvents); a test event always.
	Events []string
	// Secret signs each post; in clear only in memory (sealed at rest).
	Secret    string
	CreatedAt time.Time
}

// Wants reports whether the endpoint receives the event.
func (e *WebhookEndpoint) Wants(event string) bool {
	return event == HookTest || slices.Contains(e.Events, event)
}
