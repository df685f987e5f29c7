package model

import (
	"slices"
	"strings"
)

// LeadAdsSettings say which Facebook Pages' Instant Forms are a site's lead
// source, and how their answers become a lead. The secrets (the Page or
// system-user token, the app secret, the verify token) are in
// Site.LeadAds, stored sealed.
type LeadAdsSettings struct {
	// PageIDs are the Pages whose leadgen webhooks and forms are the
	// site's (digits, as Meta writes them).
	PageIDs []string `json:"page_ids,omitempty" yaml:"page_ids"`
	// LeadEventSource is custom_data.lead_event_source of the site's
	// Conversion Leads events: the CRM's name; default "CleanAds".
	LeadEventSource string `json:"lead_event_source,omitempty" yaml:"lead_event_source"`
	// Fields maps a form question's key to where its answer goes, for
	// every form: a lead field (email, phone, name, first_name, last_name,
	// message, city, state, zip, country) or "-" to drop it. A key not
	// mapped goes to the lead's answers (Fields) under its own key.
	Fields map[string]string `json:"fields,omitempty" yaml:"fields"`
	// Forms overrides Fields per form id.
	Forms map[string]LeadAdsForm `json:"forms,omitempty" yaml:"forms"`
	// Backfill turns the periodic read of the forms' leads off when false
	// (nil: on), for a Page whose token may not list its forms.
	Backfill *bool `json:"backfill,omitempty" yaml:"backfill"`
}

// LeadAdsForm is one form's own mapping.
type LeadAdsForm struct {
	Fields map[string]string `json:"fields,omitempty" yaml:"fields"`
}

// LeadAdsSecrets are a site's Lead Ads secrets, in clear text in memory
// only.
type LeadAdsSecrets struct {
	// AccessToken is the Page (or system-user) token the leads are read
	// with.
	AccessToken string `json:"access_token,omitempty"`
	// AppSecret signs the webhooks and makes each call's appsecret_proof.
	AppSecret string `json:"app_secret,omitempty"`
	// VerifyToken is what Meta echoes in the webhook's GET handshake.
	VerifyToken string `json:"verify_token,omitempty"`
}

// DefaultLeadEventSource is custom_data.lead_event_source when the site
// names none.
const DefaultLeadEventSource = "CleanAds"

// LeadAdsTargets lists the lead fields a form answer can be mapped to.
func LeadAdsTargets() []string {
	return []string{"email", "phone", "name", "first_name", "last_name", "message", "city", "state", "zip", "country"}
}

// Enabled tells whether the site takes Lead Ads leads.
func (l LeadAdsSettings) Enabled() bool { return len(l.PageIDs) > 0 }

// HasPage tells whether the Page is one of the site's.
func (l LeadAdsSettings) HasPage(id string) bool { return slices.Contains(l.PageIDs, id) }

// EventSource is the site's lead_event_source.
func (l LeadAdsSettings) EventSource() string {
	if s := strings.TrimSpace(l.LeadEventSource); s != "" {
		return s
	}
	return DefaultLeadEventSource
}

// BackfillOn tells whether the forms' leads are read periodically.
func (l LeadAdsSettings) BackfillOn() bool { return l.Backfill == nil || *l.Backfill }

// Target is where a form's answer with the question key goes: the form's
// mapping, then the site's, then "" (the lead's answers, by its key).
func (l LeadAdsSettings) Target(formID, key string) string {
	if t, ok := l.Forms[formID].Fields[key]; ok {
		return t
	}
	return l.Fields[key]
}

// Keys of a Lead Ads lead's SourceDetail.
const (
	DetailPage         = "page_id"
	DetailForm         = "form_id"
	DetailFormName     = "form_name"
	DetailAd           = "ad_id"
	DetailAdName       = "ad_name"
	DetailAdSet        = "adset_id"
	DetailAdSetName    = "adset_name"
	DetailCampaign     = "campaign_id"
	DetailCampaignName = "campaign_name"
	DetailOrganic      = "is_organic"
	DetailPlatform     = "platform"
	DetailCreated      = "created_time"
	DetailVia          = "via" // webhook or backfill
	// DetailClick is where an erased web lead came from (a store.Attribution's
	// Click, with its campaign, ad set and ad in the keys above): erasure
	// takes the page, click ids and visitor that told it, and keeps this.
	DetailClick = "click"
)

// FormTimed tells whether the lead's source has a form the rules can time
// and a honeypot to fill: a web form does; an Instant Form (Meta's form,
// pre-filled) and a WhatsApp message do not, so a missing fill time is no
// evidence either way.
func (l *Lead) FormTimed() bool { return l.Source == "" || l.Source == SourceWeb }

// Answers a lead's Fields may hold under these keys, which the match keys
// read (ct, st, zp, country): a Lead Ads form's address questions land here.
const (
	AnswerCity    = "city"
	AnswerState   = "state"
	AnswerZip     = "zip"
	AnswerCountry = "country"
)
