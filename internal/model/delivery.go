package model

import (
	"encoding/json"
	"fmt"
	"time"
)

// DeliveryState is where an outbox row stands.
type DeliveryState string

// The delivery states.
const (
	DeliveryPending DeliveryState = "pending" // due, never tried
	DeliveryRetry   DeliveryState = "retry"   // tried, failed transiently, due again at NextAt
	DeliverySent    DeliveryState = "sent"    // Meta accepted it
	DeliveryDead    DeliveryState = "dead"    // Meta rejected it, or it failed a pre-check
	DeliveryExpired DeliveryState = "expired" // its 7-day deadline passed unsent
	DeliveryPaused  DeliveryState = "paused"  // the site's token was refused; waits for a new one
	DeliveryDryRun  DeliveryState = "dry_run" // built for a dry_run site, never sent
)

// Delivery kinds: what caused the event.
const (
	KindPageView  = "pageview"
	KindLead      = "lead"
	KindQualified = "qualified"
	KindStage     = "stage" // Kind is "stage:<name>"
	KindTest      = "test"
)

// Destinations: where an outbox row goes, by name (Delivery.Destination).
// A new one is a name here, in Destinations, and a deliver.Handler
// registered with the runner under that name.
const (
	DestinationMeta        = "meta"         // Meta's Conversions API (every row before destinations)
	DestinationMetaLeadgen = "meta_leadgen" // a Lead Ads lead to fetch from the Graph API
)

// Destinations lists every destination.
func Destinations() []string {
	return []string{DestinationMeta, DestinationMetaLeadgen, DestinationGoogle}
}

// Share names one site's rows of one destination: the unit the runner
// claims, holds back and pauses. It is a key; deliver.Claim is the rows
// of a share the runner claimed.
type Share struct {
	Site        SiteID
	Destination string // empty: every destination of the site
}

// ClaimParams say what a claim of the outbox takes.
type ClaimParams struct {
	Owner           string
	Now, LeaseUntil time.Time
	Limit           int
	// Destinations are the destinations claimed (those the runner has a
	// handler for).
	Destinations []string
	// Skip leaves out shares the caller is still sending for or holds
	// back; a share with no destination leaves out the whole site.
	Skip []Share
}

// PageViewEvent is the event name of a KindPageView delivery.
const PageViewEvent = "PageView"

// MaxEventAge is Meta's limit on an event's age: one older event rejects a
// whole request.
const MaxEventAge = 7 * 24 * time.Hour

// Delivery is one event in the outbox and what became of it.
type Delivery struct {
	ID     string
	SiteID SiteID
	LeadID LeadID // empty for page views
	// Destination is where the row goes (DestinationMeta when empty).
	Destination string
	Kind        string
	EventName   string
	EventID     string
	PixelID     string
	// Payload is the server event exactly as it is sent (hashed values).
	Payload    json.RawMessage
	State      DeliveryState
	Attempts   int
	NextAt     time.Time
	DeadlineAt time.Time
	// LastError is Meta's message or our pre-check reason.
	LastError string
	// Response is Meta's last answer, as JSON.
	Response  json.RawMessage
	Mode      string // the mode it was sent in
	CreatedAt time.Time
	UpdatedAt time.Time
	SentAt    *time.Time
	// ShrunkAt is when retention shrank the finished event's payload to
	// what the owner's view needs (its platform's Shrink): it can no longer
	// be sent, replayed or redacted into anything but itself. Nil: whole.
	ShrunkAt *time.Time
	// Queued marks a PageView claimed from the PageView queue rather than
	// from the outbox: it has no row and no ID of its own until an outcome
	// other than sent moves it into the outbox.
	Queued bool
}

// ShrunkDays is how many whole days after it was queued a shrunk event's
// payload was shrunk (0 for one not shrunk).
func (d *Delivery) ShrunkDays() int {
	if d.ShrunkAt == nil {
		return 0
	}
	return int(d.ShrunkAt.Sub(d.CreatedAt) / (24 * time.Hour))
}

// ShrunkWords say in plain words that a shrunk event's detail was cleared,
// and when.
func (d *Delivery) ShrunkWords() string {
	return fmt.Sprintf("its detail (match keys, the request as sent) was cleared %d days after it was queued", d.ShrunkDays())
}
