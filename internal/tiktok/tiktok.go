// Package tiktok is the TikTok platform: a site's leads sent to TikTok's
// Events API 2.0 (POST /open_api/v1.3/event/track/). It owns the site's
// TikTok settings (platform.Platform's Fields and Validate), how a lead's
// events become TikTok events (web events to the pixel, qualified leads
// and CRM stages as CRM events to a CRM event set), normalising and
// hashing the contact as TikTok asks, sending a batch and sorting
// TikTok's answers into the platform's failure classes, the owner's view
// of a payload, and the test event.
//
// The facts it relies on, from TikTok's documentation and SDKs:
//
//   - One endpoint takes web, app, offline and CRM events: a request names
//     its event_source ("web" with a pixel code as event_source_id, "crm"
//     with a CRM event set id) and carries its events in data; the
//     Access-Token header authenticates it. A test_event_code at the top
//     marks the request's events as test events, shown in Events Manager's
//     Test events tab only.
//   - The answer is JSON {code, message, request_id, data}, with code 0 on
//     success; TikTok's error codes are in the body, the HTTP status is
//     usually 200 (the codes used here are listed at classify).
//   - A request takes up to 1,000 events, and one bad event fails the whole
//     request: a refused batch is halved until the bad event stands alone.
//   - email, phone and external_id are sent as lower-case hex SHA-256: the
//     e-mail trimmed and lower-cased, the phone in E.164 with its "+" and
//     country code; ttclid, the _ttp cookie, ip and user_agent in clear.
//   - The pixel and the Events API deduplicate an event sent by both when
//     they share the event name and event_id.
//   - "SubmitForm" was renamed "Lead" in TikTok's standard events (May
//     2025); the old name is still taken and mapped to the new.
//   - CRM events (lead quality postback) go to a CRM event set made in
//     Events Manager, with event_source "crm" and, for leads from TikTok's
//     Instant Forms, the TikTok lead id in lead.lead_id; TikTok matches
//     the others on the hashed e-mail and phone. Offline and CRM events
//     are taken up to 28 days after they happened.
package tiktok

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
)

// Name is the platform's key: outbox rows' destination, the settings
// document's key, the secrets' prefix.
const Name = "tiktok"

// DefaultBaseURL is TikTok's Business API.
const DefaultBaseURL = "https://business-api.tiktok.com"

// TrackPath is the Events API 2.0 endpoint, under the base URL.
const TrackPath = "/open_api/v1.3/event/track/"

// MaxBatch is the most events TikTok takes in one request.
const MaxBatch = 1000

// Event sources, as a request's event_source names them.
const (
	SourceWeb = "web"
	SourceCRM = "crm"
)

// How long after it happened an event is still sent. CRM events: TikTok
// takes offline and CRM events that happened within the last 28 days
// (also its longest click-through attribution window). Web events: the
// ttclid TikTok attributes them by is valid for 7 days, and a web event
// is worth most while the pixel's copy can still be deduplicated with
// it, so they are not sent after 7 days.
const (
	WebMaxAge = 7 * 24 * time.Hour
	CRMMaxAge = 28 * 24 * time.Hour
)

// The default event names.
const (
	// DefaultLeadEvent is TikTok's standard event for a form submitted
	// (named SubmitForm before May 2025).
	DefaultLeadEvent = "Lead"
	// DefaultQualifiedEvent is a custom event: in a CRM event set it is
	// mapped to a standard event in Events Manager.
	DefaultQualifiedEvent = "QualifiedLead"
)

// LeadEventSource is what CRM events say their leads' system is.
const LeadEventSource = "CleanAds"

// SecretAccessToken is the name of the access token among the site's
// TikTok secrets.
const SecretAccessToken = "access_token"

// SourceDetailLeadID is the key of a lead's SourceDetail that holds the
// TikTok lead id of a lead from TikTok's Instant Forms.
const SourceDetailLeadID = "tiktok_lead_id"

// Settings are a site's TikTok settings, the document at
// SiteSettings.Platforms["tiktok"]. The access token is a secret.
type Settings struct {
	// PixelCode is the TikTok pixel of the site's website: web events go
	// there.
	PixelCode string `json:"pixel_code,omitempty"`
	// CRMEventSetID is the CRM event set qualified leads and stages go to;
	// empty sends them to the pixel as web events (website leads only).
	CRMEventSetID string `json:"crm_event_set_id,omitempty"`
	// Mode is model.ModeLive (the default), ModeTest (every request
	// carries TestEventCode) or ModeDryRun (nothing is sent).
	Mode          string `json:"mode,omitempty"`
	TestEventCode string `json:"test_event_code,omitempty"`
	// LeadEvent and QualifiedEvent name the raw lead's and the qualified
	// lead's events (DefaultLeadEvent, DefaultQualifiedEvent).
	LeadEvent      string `json:"lead_event,omitempty"`
	QualifiedEvent string `json:"qualified_event,omitempty"`
	// Stages maps a CRM stage to the event it is sent as; a stage not
	// here is not sent.
	Stages map[string]string `json:"stages,omitempty"`
}

func (s Settings) mode() string {
	if s.Mode == "" {
		return model.ModeLive
	}
	return s.Mode
}

func (s Settings) leadEvent() string {
	if e := strings.TrimSpace(s.LeadEvent); e != "" {
		return e
	}
	return DefaultLeadEvent
}

func (s Settings) qualifiedEvent() string {
	if e := strings.TrimSpace(s.QualifiedEvent); e != "" {
		return e
	}
	return DefaultQualifiedEvent
}

// Platform is TikTok as a platform.Platform. It holds no state of its own
// beyond its dependencies, so it is safe for concurrent use.
type Platform struct {
	base string
	http *http.Client
	now  func() time.Time
	log  *slog.Logger
}

// New returns the TikTok platform: its API at d's endpoint for "tiktok"
// (DefaultBaseURL unless overridden), through d.HTTP or a client of its
// own.
func New(d platform.Deps) platform.Platform {
	c := d.HTTP
	if c == nil {
		c = &http.Client{Timeout: 30 * time.Second}
	}
	return &Platform{
		base: strings.TrimRight(d.Endpoint(Name, DefaultBaseURL), "/"),
		http: c,
		now:  d.Clock(),
		log:  d.Log().With("platform", Name),
	}
}

// Name is "tiktok".
func (p *Platform) Name() string { return Name }

// Label is "TikTok".
func (p *Platform) Label() string { return "TikTok" }

// MaxAge is the longest any TikTok event is sent after it happened (a CRM
// event's); a web event's own deadline is sooner (WebMaxAge).
func (p *Platform) MaxAge() time.Duration { return CRMMaxAge }

// BatchSize is MaxBatch.
func (p *Platform) BatchSize() int { return MaxBatch }

// settings reads the site's TikTok settings; ok is false when it has none.
func settings(site *model.Site) (Settings, bool, error) {
	var s Settings
	if site == nil {
		return s, false, nil
	}
	ok, err := platform.Decode(site, Name, &s)
	return s, ok, err
}

func token(site *model.Site) string {
	return strings.TrimSpace(platform.Secret(site, Name, SecretAccessToken))
}

// On tells whether the site sends to TikTok: a pixel code or a CRM event
// set, and an access token.
func (p *Platform) On(site *model.Site) bool {
	s, ok, err := settings(site)
	if !ok || err != nil {
		return false
	}
	return (s.PixelCode != "" || s.CRMEventSetID != "") && token(site) != ""
}

// Cookies are the first-party cookie TikTok's pixel sets on the site's
// domain: _ttp, its browser id, which the tracker's subdomain receives
// with the form (platform.CookieReader).
func (p *Platform) Cookies() []string { return []string{"_ttp"} }

// PixelLeadEvent is the event t.js fires on the site's TikTok pixel
// (ttq) for a website lead, with the lead's event_id, so TikTok counts the
// browser's event and ours once (platform.PixelPairer); "" when the site
// has no TikTok pixel.
func (p *Platform) PixelLeadEvent(site *model.Site) string {
	s, ok, err := settings(site)
	if !ok || err != nil || s.PixelCode == "" || !p.On(site) {
		return ""
	}
	return s.leadEvent()
}

// ReadsVisits: TikTok matches by the ttclid of the visitor's latest visit
// from a TikTok ad (platform.VisitReader).
func (p *Platform) ReadsVisits() bool { return true }

// Fields are the TikTok settings as the admin UI edits them.
func (p *Platform) Fields() []platform.Field {
	return []platform.Field{
		{Key: "pixel_code", Label: "Pixel code",
			Help: "The TikTok pixel of this website (Events Manager > Web: the code under the pixel's name). Website leads are sent to it."},
		{Key: "crm_event_set_id", Label: "CRM event set ID",
			Help: "A CRM event set made in Events Manager (Connect data source > CRM). Qualified leads and stages are sent to it; without one they go to the pixel, for website leads only."},
		{Key: SecretAccessToken, Label: "Access token", Kind: platform.FieldSecret, Required: true,
			Help: "Generated in Events Manager on the pixel's or event set's Settings tab (Events API > Generate access token)."},
		{Key: "mode", Label: "Mode", Kind: platform.FieldChoice,
			Choices: []string{model.ModeLive, model.ModeTest, model.ModeDryRun},
			Help:    "live sends events; test sends them with the test event code (they show only under Test events); dry_run builds them without sending."},
		{Key: "test_event_code", Label: "Test event code",
			Help: "From Events Manager > the pixel > Test events. Needed for test mode and for sending a test event."},
		{Key: "lead_event", Label: "Lead event",
			Help: "The event a website lead is sent as. Default Lead (TikTok's standard event, formerly SubmitForm); use the name your TikTok pixel fires so the two are counted once."},
		{Key: "qualified_event", Label: "Qualified lead event",
			Help: "The event a qualified lead is sent as. Default QualifiedLead; in a CRM event set, map it to a standard event in Events Manager."},
		{Key: "stages", Label: "Stages", Kind: platform.FieldStages,
			Help: "One stage per line: stage = event, e.g. won = Purchase. A stage not listed is not sent to TikTok."},
	}
}

// Validate checks the site's TikTok settings, each problem on its field.
func (p *Platform) Validate(site *model.Site) []platform.FieldError {
	s, ok, err := settings(site)
	if err != nil {
		return []platform.FieldError{{Key: "pixel_code", Message: "the TikTok settings cannot be read: " + err.Error()}}
	}
	if !ok {
		return nil
	}
	var errs []platform.FieldError
	add := func(key, msg string, args ...any) {
		errs = append(errs, platform.FieldError{Key: key, Message: fmt.Sprintf(msg, args...)})
	}
	switch {
	case s.PixelCode == "" && s.CRMEventSetID == "":
		add("pixel_code", "give the pixel code, the CRM event set ID, or both")
	case s.PixelCode != "" && !isCode(s.PixelCode):
		add("pixel_code", "a pixel code is letters and digits only, as Events Manager shows it (e.g. C4ABCD1234EFGH5678IJ)")
	}
	if s.CRMEventSetID != "" && !isDigits(s.CRMEventSetID) {
		add("crm_event_set_id", "a CRM event set ID is digits only, as Events Manager shows it")
	}
	if token(site) == "" {
		add(SecretAccessToken, "paste the access token generated in TikTok Events Manager")
	}
	switch s.Mode {
	case "", model.ModeLive, model.ModeDryRun:
	case model.ModeTest:
		if s.TestEventCode == "" {
			add("test_event_code", "test mode needs the test event code from Events Manager's Test events tab")
		}
	default:
		add("mode", "choose live, test or dry_run, not %q", s.Mode)
	}
	if s.TestEventCode != "" && !isCode(s.TestEventCode) {
		add("test_event_code", "a test event code is letters and digits only")
	}
	if why := eventNameProblem(s.LeadEvent); s.LeadEvent != "" && why != "" {
		add("lead_event", "%s", why)
	}
	if why := eventNameProblem(s.QualifiedEvent); s.QualifiedEvent != "" && why != "" {
		add("qualified_event", "%s", why)
	}
	for stage, event := range s.Stages {
		if strings.TrimSpace(stage) == "" || stage != strings.ToLower(stage) {
			add("stages", "stage names are lower case and not empty, not %q", stage)
		}
		if why := eventNameProblem(event); why != "" {
			add("stages", "stage %q: %s", stage, why)
		}
	}
	return errs
}

// eventNameProblem says what is wrong with an event name, or "".
func eventNameProblem(name string) string {
	switch {
	case strings.TrimSpace(name) == "":
		return "the event name is empty"
	case name != strings.TrimSpace(name):
		return "the event name starts or ends with a space"
	case len(name) > 100:
		return "the event name is longer than 100 characters"
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "the event name has a control character"
	}
	return ""
}

func isCode(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

var _ platform.Platform = (*Platform)(nil)
