package model

import "time"

// LeadID identifies a stored lead.
type LeadID string

// Verdict is the qualification outcome of a lead.
type Verdict string

// The verdicts.
const (
	VerdictClean  Verdict = "clean"  // forward to Meta
	VerdictReview Verdict = "review" // hold for evidence
	VerdictJunk   Verdict = "junk"   // never forward; kept and reversible
)

// Who decided a verdict.
const (
	DecidedByRules    = "rules"
	DecidedByEvidence = "evidence"
	DecidedByOwner    = "owner"
	DecidedByCRM      = "crm"
)

// Who measured a lead's fill time (Lead.FillBy).
const (
	FillByTracker = "tracker" // in the visitor's browser: the lead came to the public endpoint
	FillByBackend = "backend" // the site's own server, posting the lead with its API key
)

// Lead sources: where a lead came from.
const (
	SourceWeb      = "web"      // a form on the site, through t.js or a form post
	SourceLeadAds  = "lead_ads" // a Meta Instant Form, by the leadgen webhook or backfill
	SourceWhatsApp = "whatsapp" // a Click-to-WhatsApp conversation's first message
)

// Reason is one explainable contribution to a lead's junk score.
type Reason struct {
	Code     string         `json:"code"`
	Points   int            `json:"points"`
	Final    bool           `json:"final,omitempty"`
	Evidence map[string]any `json:"evidence,omitempty"`
	Message  string         `json:"message,omitempty"`
}

// Decision is a verdict with everything needed to explain and replay it.
type Decision struct {
	Verdict      Verdict  `json:"verdict"`
	Score        int      `json:"score"`
	Reasons      []Reason `json:"reasons"`
	RulesVersion string   `json:"rules_version"`
	DecidedBy    string   `json:"decided_by"`
}

// Lead is one form submission as stored, with its current decision.
type Lead struct {
	ID     LeadID `json:"id"`
	SiteID SiteID `json:"site"`
	// EventID is the id shared with the browser pixel for the raw lead
	// event; made once at submit.
	EventID   string `json:"event_id"`
	VisitorID string `json:"visitor_id,omitempty"`

	Email     string            `json:"email,omitempty"`
	Phone     string            `json:"phone,omitempty"`
	Name      string            `json:"name,omitempty"`
	FirstName string            `json:"first_name,omitempty"`
	LastName  string            `json:"last_name,omitempty"`
	Message   string            `json:"message,omitempty"`
	Fields    map[string]string `json:"fields,omitempty"`

	PageURL    string `json:"page_url,omitempty"`
	Referrer   string `json:"referrer,omitempty"`
	FBC        string `json:"fbc,omitempty"`
	FBP        string `json:"fbp,omitempty"`
	FBClid     string `json:"fbclid,omitempty"`
	GClid      string `json:"gclid,omitempty"`
	ExternalID string `json:"external_id,omitempty"`
	// Source is where the lead came from (SourceWeb, SourceLeadAds, ...);
	// empty means SourceWeb.
	Source string `json:"source,omitempty"`
	// SourceDetail is what the source says about the lead: form, ad, ad
	// set and campaign ids and names, the click id of a WhatsApp ad, ...
	SourceDetail map[string]string `json:"source_detail,omitempty"`
	// LeadAdsID is the Meta Lead Ads lead id (up to 17+ digits, kept as a
	// string).
	LeadAdsID string `json:"lead_id,omitempty"`
	// Consent is nil when the page did not say.
	Consent *bool `json:"consent,omitempty"`
	// FillMS is milliseconds from first interaction to submit; nil when
	// unknown.
	FillMS *int64 `json:"fill_ms,omitempty"`
	// FillBy says who measured FillMS: FillByTracker or FillByBackend; empty
	// when there is no fill time (and for leads stored before it was kept).
	FillBy    string `json:"fill_by,omitempty"`
	Honeypot  string `json:"hp,omitempty"`
	ClientIP  string `json:"client_ip,omitempty"`
	UserAgent string `json:"user_agent,omitempty"`

	// EmailKey and PhoneKey are the normalised e-mail and phone (digits
	// with country code) used for look-ups and duplicates.
	EmailKey string `json:"-"`
	PhoneKey string `json:"-"`

	SubmittedAt time.Time `json:"submitted_at"`
	ReceivedAt  time.Time `json:"received_at"`

	Decision
	// ReviewUntil is when a review lead expires unconfirmed.
	ReviewUntil *time.Time `json:"review_until,omitempty"`
	// ReviewExpiredAt is when a review lead's wait ran out unconfirmed.
	ReviewExpiredAt *time.Time `json:"review_expired_at,omitempty"`
	// OpenUntil, when set, is until when the lead takes a later attempt of
	// its form (a browser's lead that no form plugin confirmed); its lead
	// events wait until then. Nil: the lead is final.
	OpenUntil *time.Time `json:"open_until,omitempty"`
}

// HistoryEntry is one event in a lead's life: a verdict change, evidence, a
// stage.
type HistoryEntry struct {
	ID     string         `json:"id"`
	LeadID LeadID         `json:"lead_id"`
	At     time.Time      `json:"at"`
	Kind   string         `json:"kind"`
	Data   map[string]any `json:"data,omitempty"`
}

// History kinds.
const (
	HistoryVerdict  = "verdict"
	HistoryEvidence = "evidence"
	HistoryStage    = "stage"
)
