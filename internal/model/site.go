package model

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strings"
	"time"
	"unicode"
)

// SiteID identifies a site (an advertiser's website), e.g. "dent".
type SiteID string

// Delivery modes of a site.
const (
	ModeLive   = "live"    // events go to Meta
	ModeTest   = "test"    // events go to Meta with the site's test_event_code
	ModeDryRun = "dry_run" // events are built and stored, never sent
)

// Consent settings of a site.
const (
	ConsentImplied  = "implied"  // a visitor consents unless they say no
	ConsentRequired = "required" // nothing is set or sent until the visitor says yes
)

// Site is one advertiser website and everything that decides how its leads
// are judged and sent.
type Site struct {
	ID   SiteID
	Name string
	// APIKeyHash is the SHA-256 (hex) of the site's API key; the key itself
	// is never stored.
	APIKeyHash string
	// Pinned sites come from the config file: the file wins at every start.
	Pinned   bool
	Settings SiteSettings
	// AccessToken is Meta's access token for the pixel, in clear text in
	// memory only.
	AccessToken string
	// PausedReason is set when Meta refused the token: delivery for the
	// site waits until the token changes.
	PausedReason string
	PausedAt     time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
	// LeadAds are the site's Lead Ads secrets, in clear text in memory
	// only.
	LeadAds LeadAdsSecrets
	// Secrets are the site's platform secrets by "platform.key" (a TikTok
	// access token is "tiktok.access_token"), in clear text in memory
	// only; the store keeps them sealed with secret_key.
	Secrets map[string]string
}

// SiteSettings are the editable settings of a site, stored as one document.
type SiteSettings struct {
	Origins      []string     `json:"origins" yaml:"origins"`
	Country      string       `json:"country" yaml:"country"`
	CookieDomain string       `json:"cookie_domain,omitempty" yaml:"cookie_domain"`
	ThankYouURL  string       `json:"thank_you_url,omitempty" yaml:"thank_you_url"`
	Consent      string       `json:"consent,omitempty" yaml:"consent"`
	Meta         MetaSettings `json:"meta" yaml:"meta"`
	Qualify      Qualify      `json:"qualify" yaml:"qualify"`
	// WhatsApp names the WhatsApp Business numbers whose inbound messages
	// are evidence about the site's leads.
	WhatsApp WhatsAppSettings `json:"whatsapp,omitempty" yaml:"whatsapp"`
	// Google is where qualified leads and stages go in Google Ads; nil
	// sends nothing to Google.
	Google *GoogleSettings `json:"google,omitempty" yaml:"-"`
	// LeadAds names the site's Facebook Pages whose Instant Forms are a
	// lead source.
	LeadAds LeadAdsSettings `json:"lead_ads,omitempty" yaml:"lead_ads"`
	// CallTokenHash is the SHA-256 (hex) of the site's call-webhook token,
	// a narrower secret than the API key for call trackers; empty when the
	// site has none.
	CallTokenHash string `json:"call_token_hash,omitempty" yaml:"-"`
	// Platforms are the settings documents of the ad platforms that have
	// no field of their own here, by platform name (package platform):
	// each platform reads its own.
	Platforms map[string]json.RawMessage `json:"platforms,omitempty" yaml:"-"`
	// StagesEdited is set once Meta.Stages were saved in the admin UI's
	// stage editor: from then on they win over the config file's
	// meta.stages, which a start would otherwise write over them.
	StagesEdited bool `json:"stages_edited,omitempty" yaml:"-"`
	// StageOrder is the order the stage editor lists the stages in (a
	// pipeline's, meeting before won); names missing from it come after,
	// by name.
	StageOrder []string `json:"stage_order,omitempty" yaml:"-"`
}

// MetaSettings say where and how a site's events go to Meta.
type MetaSettings struct {
	PixelID        string `json:"pixel_id,omitempty" yaml:"pixel_id"`
	Mode           string `json:"mode,omitempty" yaml:"mode"`
	TestEventCode  string `json:"test_event_code,omitempty" yaml:"test_event_code"`
	LeadEvent      string `json:"lead_event,omitempty" yaml:"lead_event"`
	QualifiedEvent string `json:"qualified_event,omitempty" yaml:"qualified_event"`
	// PageView sends the server copy of the pixel's PageView; nil means on
	// when a pixel is configured.
	PageView *bool `json:"page_view,omitempty" yaml:"page_view"`
	// CustomData is added to the custom_data of every lead event.
	CustomData map[string]string `json:"custom_data,omitempty" yaml:"custom_data"`
	// Stages maps a CRM stage name to the Meta event it becomes.
	Stages map[string]StageEvent `json:"stages,omitempty" yaml:"stages"`
}

// StageEvent is the Meta event a CRM stage is sent as, with an optional fixed
// value used when the stage call brings none.
type StageEvent struct {
	Event    string  `json:"event" yaml:"event"`
	Value    float64 `json:"value,omitempty" yaml:"value"`
	Currency string  `json:"currency,omitempty" yaml:"currency"`
}

// Qualify holds a site's qualification settings; zero values mean the
// defaults of the qualify package.
type Qualify struct {
	ReviewFrom      int            `json:"review_from,omitempty" yaml:"review_from"`
	JunkFrom        int            `json:"junk_from,omitempty" yaml:"junk_from"`
	MinFillMS       int            `json:"min_fill_ms,omitempty" yaml:"min_fill_ms"`
	DuplicateWindow Duration       `json:"duplicate_window,omitempty" yaml:"duplicate_window"`
	ReviewTimeout   Duration       `json:"review_timeout,omitempty" yaml:"review_timeout"`
	Weights         map[string]int `json:"weights,omitempty" yaml:"weights"`
	// Phrases adds phrases per list and language, e.g.
	// {"vendor": {"tr": ["reklam ajansı"]}}.
	Phrases map[string]map[string][]string `json:"phrases,omitempty" yaml:"phrases"`
	// Services are the words of the services the site sells ("implant",
	// "diş beyazlatma"): named in a message the built-in model reads as a
	// request, they are evidence of one (qualify's SERVICE_NAMED).
	Services []string `json:"services,omitempty" yaml:"services"`
	// TextModel sets the model the site learns from the owner's word.
	TextModel TextModelSettings `json:"text_model,omitempty" yaml:"text_model"`
}

// TextModelSettings set a site's text model (qualify.TextModel).
type TextModelSettings struct {
	// Enabled nil means on: trained, and shown in shadow until enough leads
	// are judged; false turns it off (not trained, not computed).
	Enabled *bool `json:"enabled,omitempty" yaml:"enabled"`
	// MaxPoints caps the points it gives or takes; 0 means the default.
	MaxPoints int `json:"max_points,omitempty" yaml:"max_points"`
}

// On tells whether the site's text model is on.
func (t TextModelSettings) On() bool { return t.Enabled == nil || *t.Enabled }

// LeadEventName is the raw lead event's name, "Lead" by default.
func (m MetaSettings) LeadEventName() string {
	if m.LeadEvent == "" {
		return "Lead"
	}
	return m.LeadEvent
}

// QualifiedEventName is the qualified event's name, "QualifiedLead" by default.
func (m MetaSettings) QualifiedEventName() string {
	if m.QualifiedEvent == "" {
		return "QualifiedLead"
	}
	return m.QualifiedEvent
}

// SendsPageView tells whether the server copy of PageView is sent.
func (m MetaSettings) SendsPageView() bool {
	if m.PageView != nil {
		return *m.PageView && m.PixelID != ""
	}
	return m.PixelID != ""
}

// AllowsOrigin tells whether origin (scheme://host[:port]) is one of the
// site's own.
func (s *Site) AllowsOrigin(origin string) bool {
	for _, o := range s.Settings.Origins {
		if o == origin {
			return true
		}
	}
	return false
}

// HashAPIKey returns the stored form of an API key: its SHA-256 in hex. Keys
// are long random secrets, so a fast hash is enough; a slow one would only
// slow every API call.
func HashAPIKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// SafeRedirect checks a URL the server would send a browser to (a form's
// _redirect, the thank-you page) and returns it in canonical form. Only an
// absolute http(s) URL on one of the site's origins passes: no
// scheme-relative //host, no userinfo (user@host hides the real host from
// a reader), no backslash or control character (browsers read \ as /, so
// a parser and a browser could disagree on the host), no javascript: or
// other scheme.
func (s *Site) SafeRedirect(raw string) (string, bool) {
	if raw == "" || len(raw) > 2048 || strings.ContainsAny(raw, "\\") || strings.IndexFunc(raw, func(r rune) bool {
		return r <= ' ' || r == 0x7f || unicode.IsSpace(r)
	}) >= 0 {
		return "", false
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "" || u.User != nil || u.Host == "" {
		return "", false
	}
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if !s.AllowsOrigin(u.Scheme + "://" + u.Host) {
		return "", false
	}
	return u.String(), true
}
