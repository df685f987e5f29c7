package model

import "time"

// DestinationGoogle names the outbox rows that go to Google Ads through the
// Data Manager API.
const DestinationGoogle = "google"

// GoogleMaxEventAge is how long after its click Google Ads takes a click
// conversion: 90 days, the longest click-through window a conversion
// action can have. A Google row's deadline is the lead's submit time plus
// this (the click came before), Meta's 7 days being Meta's own.
const GoogleMaxEventAge = 90 * 24 * time.Hour

// DeadlineWords says in words the window a destination's row must be sent
// within (its deadline_at): each platform's own, for the messages that
// say a row is past it.
func DeadlineWords(destination string) string {
	switch destination {
	case DestinationGoogle:
		return "Google's 90-day window for click conversions"
	case DestinationMetaLeadgen:
		return "the 90 days Meta keeps a Lead Ads lead"
	case DestinationWebhook:
		return "the 3 days a webhook is retried"
	}
	return "Meta's 7-day window"
}

// Google modes of a site.
const (
	GoogleModeLive     = "live"     // events go to Google Ads
	GoogleModeValidate = "validate" // sent with validateOnly: Google checks them, records nothing
)

// Consent values of a site's default Google consent.
const (
	ConsentGranted = "granted"
	ConsentDenied  = "denied"
)

// GoogleSettings say where a site's qualified leads and CRM stages go in
// Google Ads. The credentials are not here: they stay in the config (the
// file, its *_file twins or the environment), never in the database.
type GoogleSettings struct {
	// OperatingAccountID is the Google Ads customer id the conversions
	// belong to, digits only.
	OperatingAccountID string `json:"operating_account_id" yaml:"operating_account_id"`
	// LoginAccountID is the manager account the credentials reach the
	// operating account through; empty when they reach it directly.
	LoginAccountID string `json:"login_account_id,omitempty" yaml:"login_account_id"`
	// QualifiedConversionAction is the conversion action id the qualified
	// event is counted under.
	QualifiedConversionAction string `json:"qualified_conversion_action" yaml:"qualified_conversion_action"`
	// Stages maps a CRM stage to its conversion action id; a stage without
	// one is not sent to Google.
	Stages map[string]string `json:"stages,omitempty" yaml:"stages"`
	// Currency is the ISO 4217 code of stage values that bring none.
	Currency string `json:"currency,omitempty" yaml:"currency"`
	// Consent is what is sent when the lead did not say.
	Consent GoogleConsent `json:"consent" yaml:"consent"`
	// Mode is live (default) or validate.
	Mode string `json:"mode,omitempty" yaml:"mode"`
	// Credentials is a fingerprint of the config's credentials (never
	// the credentials): when it or any other setting here changes, the
	// site's Google pause is lifted and the parked rows go again.
	Credentials string `json:"credentials,omitempty" yaml:"-"`
}

// GoogleConsent is a default for Google's two consent signals, each
// "granted" or "denied"; empty sends none.
type GoogleConsent struct {
	AdUserData        string `json:"ad_user_data,omitempty" yaml:"ad_user_data"`
	AdPersonalization string `json:"ad_personalization,omitempty" yaml:"ad_personalization"`
}

// ConversionAction returns the conversion action id of a delivery kind
// (KindQualified, "stage:won"), or "" when the kind is not sent to Google.
func (g *GoogleSettings) ConversionAction(kind string) string {
	if g == nil {
		return ""
	}
	if kind == KindQualified {
		return g.QualifiedConversionAction
	}
	if stage, ok := StageOfKind(kind); ok {
		return g.Stages[stage]
	}
	return ""
}

// StageOfKind returns the stage's name of a "stage:<name>" delivery kind.
func StageOfKind(kind string) (string, bool) {
	const p = KindStage + ":"
	if len(kind) > len(p) && kind[:len(p)] == p {
		return kind[len(p):], true
	}
	return "", false
}
