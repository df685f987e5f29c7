package model

import "time"

// Visitor is one browser as the tracker knows it on one site: the click
// identity minted for it (fbc, fbp), when it came and from where, and what
// it said about consent.
type Visitor struct {
	ID     string `json:"id"`
	SiteID SiteID `json:"site"`
	// FBC is Meta's click id fb.1.<ms>.<fbclid>; FBCAt is its creation time
	// (when the fbclid was first seen).
	FBC   string    `json:"fbc,omitempty"`
	FBCAt time.Time `json:"fbc_at,omitzero"`
	// FBP is Meta's browser id fb.1.<ms>.<random>.
	FBP           string    `json:"fbp,omitempty"`
	FirstSeen     time.Time `json:"first_seen"`
	LastSeen      time.Time `json:"last_seen"`
	LastIP        string    `json:"last_ip,omitempty"`
	LastUserAgent string    `json:"last_user_agent,omitempty"`
	// Consent is nil when the visitor never said (an implied-consent site).
	Consent *bool `json:"consent,omitempty"`
}

// ClickIDs are the ad click ids a landing URL can carry.
type ClickIDs struct {
	FBClid  string `json:"fbclid,omitempty"`
	GClid   string `json:"gclid,omitempty"`
	WBraid  string `json:"wbraid,omitempty"`
	GBraid  string `json:"gbraid,omitempty"`
	TTClid  string `json:"ttclid,omitempty"`
	MSClkid string `json:"msclkid,omitempty"`
}

// UTM are the utm_* campaign parameters of a landing URL.
type UTM struct {
	Source   string `json:"utm_source,omitempty"`
	Medium   string `json:"utm_medium,omitempty"`
	Campaign string `json:"utm_campaign,omitempty"`
	Term     string `json:"utm_term,omitempty"`
	Content  string `json:"utm_content,omitempty"`
}

// Visit is one page view collected by t.js, as it is stored: what matching
// and the click windows need (the visitor, the time, the landing URL's
// click ids and UTM tags), not the page, referrer, IP and user agent, which
// the PageView is built from at collect and the lead keeps of its own.
type Visit struct {
	SiteID    SiteID `json:"site"`
	VisitorID string `json:"visitor_id"`
	ClickIDs
	UTM
	At time.Time `json:"at"`
	// EventID is the PageView's event_id, shared by the pixel and the
	// server copy.
	EventID string `json:"event_id"`
	// LeadForms is how many lead forms t.js found on the page; nil when
	// the tracker did not say (t.v1.js).
	LeadForms *int `json:"lead_forms,omitempty"`
}

// ConsentAllows tells whether a visitor's consent (nil: they did not say)
// lets the site set cookies and send events to Meta: on a required-consent
// site only an explicit yes does; elsewhere anything but an explicit no.
func (s *Site) ConsentAllows(consent *bool) bool {
	if s.Settings.Consent == ConsentRequired {
		return consent != nil && *consent
	}
	return consent == nil || *consent
}
