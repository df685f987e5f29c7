// Package platform is the one shape of an ad platform a site's leads are
// sent to (Meta, Google Ads, TikTok): the interface the use cases queue
// through and the delivery runner sends through, the words of its
// failures, and the list of platforms there are.
//
// A platform is a package of its own (internal/capi with its Meta
// adapter, internal/google, internal/tiktok) with one value that
// implements Platform, and one line in internal/platforms that lists it.
// Nothing else in the program names a platform: the app layer asks every
// platform the site has on to Build each of a lead's events and queues
// what it gets, one outbox row per platform and event; the runner claims
// each platform's rows as their own share (a site and a platform) and
// hands them to the platform's Send through deliver.PlatformHandler,
// which records outcomes, retries, splits, pauses and expires as the
// failure's Class says; the admin UI renders a platform's settings from
// its Fields and shows a payload through its Redact.
//
// The package imports only model (and the phone number library, for a
// sample lead), so every layer can speak it.
package platform

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// Platform is an ad platform. Its methods must be safe for concurrent use.
// Its settings are Configurable's: Name is the platform's key (the outbox
// rows' destination, the pause's, the settings document's key: "meta",
// "google", "tiktok"), Label its name for people ("Meta", "Google Ads",
// "TikTok"), On whether the site sends to it (its settings are there and
// complete enough to build events), Fields and Validate its settings as
// the admin UI edits them (secrets stored sealed, never shown back), and
// SendTest one made-up lead event sent at once, marked as a test as the
// platform allows (a test event code, validate-only).
type Platform interface {
	Configurable
	// Build makes the platform's event of one of a lead's events, or
	// returns an error wrapping ErrSkip (see Skip) that says why the
	// platform takes no such event: a kind it has no mapping for, a lead
	// it could attribute to nothing. Any other error fails the queueing.
	Build(ctx context.Context, in Input) (*Event, error)
	// MaxAge is how long after an event happened the platform still takes
	// it (Meta: 7 days; Google: 90 days from the click). It bounds the
	// rows' deadline and how far in the past a stage may be recorded.
	MaxAge() time.Duration
	// BatchSize is the most events Send is handed at once.
	BatchSize() int
	// Send sends one site's events, at most BatchSize of them, and says
	// per row what became of it, in the rows' order. A refused request is
	// the platform's own to split, so that only the events at fault fail
	// (their Outcome.Err says why). An error instead of outcomes is a
	// request-level failure, classified by Classify: every row not yet
	// given an outcome is retried, held, parked or dead as its class says.
	Send(ctx context.Context, site *model.Site, rows []*model.Delivery) ([]Outcome, error)
	// Redact returns the payload as the owner may see it: what the
	// platform carries in clear (click ids, addresses) taken out, hashes
	// kept.
	Redact(payload json.RawMessage) json.RawMessage
	// Shrink returns what a finished event keeps once it can no longer
	// be sent, replayed or corrected (retention.event_days after it was
	// queued, and past its deadline): what the owner's view of it needs
	// (its name, time, value, and the names of the match keys it carried),
	// never the hashed keys or a clear value. It is a JSON object, {} when
	// the payload is not the platform's event; shrinking it again changes
	// nothing.
	Shrink(payload json.RawMessage) json.RawMessage
}

// Configurable is what is set per site on the site's admin page from its
// Fields: every Platform, and a lead source with settings of its own (a
// CRM connection). Its settings document is the site's
// Settings.Platforms[Name()], its secrets are sealed under SecretName.
type Configurable interface {
	Name() string
	Label() string
	// On tells whether the site's settings are complete enough to work.
	On(site *model.Site) bool
	Fields() []Field
	Validate(site *model.Site) []FieldError
	// SendTest tries the settings at once (a test event, a call the API
	// answers) and says what was sent and answered.
	SendTest(ctx context.Context, site *model.Site) (*TestResult, error)
}

// Input is one of a lead's events, as the use cases ask each platform to
// build it.
type Input struct {
	Site *model.Site
	Lead *model.Lead
	// Kind is model.KindLead, model.KindQualified or "stage:<name>".
	Kind string
	// At is when the event happened (the lead's submit, the stage's time).
	At time.Time
	// Value and Currency are a stage's value, when it brings one.
	Value    *float64
	Currency string
	// ActionSource is where the conversion happened when not on the
	// website ("system_generated", "physical_store", "phone_call").
	ActionSource string
	// Clicks are the ad click ids of the lead's visitor's latest visit
	// from an ad (the lead's own where it has them); read once per event
	// and shared by the platforms.
	Clicks model.ClickIDs
	// Cookies are the platform cookies the tracker kept for the visitor
	// (name to value: "_ttp", "_fbp").
	Cookies map[string]string
	// FromStage names the CRM stage the event stands for: set for a
	// stage's event, and for the qualified event when a stage is mapped
	// to it.
	FromStage string
	// Now is the time of the queueing.
	Now time.Time
	// Prepared is what the platform's Prepare made of the lead ahead of
	// the transaction (see Preparer); nil when it has none.
	Prepared any
}

// Preparer is a platform with work to do per lead outside the
// transaction that queues the lead's events (hashing its customer data):
// on SQLite the transaction holds the one writer.
type Preparer interface {
	Prepare(site *model.Site, lead *model.Lead) any
}

// CookieReader is a platform whose pixel sets first-party cookies that
// identify the browser at the platform (TikTok's _ttp): the browser sends
// them with the form to the tracker's subdomain, and the lead keeps them
// (Input.Cookies) until it is forgotten.
type CookieReader interface {
	Cookies() []string
}

// PixelPairer is a platform whose browser pixel the tracker fires a lead
// with, under the lead's own event_id, so the platform counts the browser's
// event and the server's once: PixelLeadEvent is the event's name for the
// site ("" when the site sends the platform no website leads).
type PixelPairer interface {
	PixelLeadEvent(site *model.Site) string
}

// VisitReader is a platform that matches a lead by its visitor's earlier
// ad clicks or cookies: Input.Clicks and Input.Cookies are read (one query
// per lead) only when a platform the site has on is one.
type VisitReader interface {
	ReadsVisits() bool
}

// Checker is a platform that checks each stored row again before it is
// sent (its payload may have been redacted since, or queued by an older
// version): Check returns nil for a row that may go, an error wrapping
// ErrTooOld for one too old for the platform (the row expires), any other
// error for one the platform would refuse (the row is dead with the
// error's words, and the Response of a *Failure in it). Rows queued
// moments ago and checked then (model.Delivery.Queued) are not checked
// again.
type Checker interface {
	Check(site *model.Site, d *model.Delivery, now time.Time) error
}

// Moded is a platform a site sends to in a mode (Meta's live, test or
// dry_run): every row handed to Send, or checked and refused, is marked
// with the site's Mode; in model.ModeDryRun the rows are built, checked
// and kept (state dry_run), and Send is never called.
type Moded interface {
	Mode(site *model.Site) string
}

// Rekeyer is a platform whose credentials are the site's own, which the
// owner may replace while a request is in flight: when a request is
// refused as Paused, the site is read again and, if NewCredentials says
// they changed, the rows go again at once with the new ones rather than
// pause on the old.
type Rekeyer interface {
	NewCredentials(was, now *model.Site) bool
}

// Stage returns the stage's name for a "stage:<name>" kind.
func (in Input) Stage() (string, bool) { return model.StageOfKind(in.Kind) }

// Event is a platform's event of a lead's event, ready for the outbox.
type Event struct {
	// Name is the event's name at the platform ("Lead", "QualifiedLead",
	// a conversion action's label).
	Name string
	// ID is the event's deduplication key at the platform (the event_id
	// shared with the pixel, Google's transaction id).
	ID string
	// Account is where it goes (pixel, operating account, pixel code):
	// rows are sent in batches of one account.
	Account string
	// Payload is the event exactly as it is sent.
	Payload json.RawMessage
	// Deadline is when the platform stops taking it.
	Deadline time.Time
}

// ErrSkip marks a platform that takes no such event; Skip says why.
var ErrSkip = errors.New("not sent")

// ErrTooOld marks an event older than the platform takes (it is also an
// ErrSkip); TooOld says so.
var ErrTooOld = errors.New("too old")

// TooOld returns an error that is both ErrSkip and ErrTooOld, with the
// platform's words.
func TooOld(why string) error { return &skipError{why: why, old: true} }

// Skip returns an ErrSkip error with the reason in words.
func Skip(why string) error { return &skipError{why: why} }

type skipError struct {
	why string
	old bool
}

func (e *skipError) Error() string { return "not sent: " + e.why }
func (e *skipError) Is(target error) bool {
	return target == ErrSkip || (e.old && target == ErrTooOld)
}

// SkipWords returns a skip's words, without the "not sent: " prefix.
func SkipWords(err error) string {
	if e, ok := err.(*skipError); ok {
		return e.why
	}
	return err.Error()
}

// Outcome is what became of one sent row.
type Outcome struct {
	// Accepted: the platform took the event.
	Accepted bool
	// Err is why the platform refused this event alone (the row is dead
	// with these words); nil with Accepted false leaves the row to the
	// request-level error.
	Err error
	// Response is the platform's answer as kept on the row.
	Response json.RawMessage
	// Mode is the mode it was sent in ("live", "test", "validate"); an
	// accepted outcome in mode "dry_run" was not sent (the row is kept as
	// dry_run).
	Mode string
	// Note is kept on an accepted row as its last words: the platform
	// took the request only in part, say.
	Note string
}

// TestResult is what a SendTest sent and what the platform answered.
type TestResult struct {
	// Account is where the test went; Code the test code it carried.
	Account string          `json:"account"`
	Code    string          `json:"test_code,omitempty"`
	Event   json.RawMessage `json:"event"`
	Answer  json.RawMessage `json:"answer,omitempty"`
}

// Field is one of a platform's settings, as the admin UI edits it. The
// platform's settings document (SiteSettings.Platforms[name]) is a JSON
// object keyed by its fields' keys: a text or choice field's value is a
// string, a stages field's an object of stage name to event name. A
// secret is not in the document: it is Site.Secrets[SecretName(name,
// key)].
type Field struct {
	// Key is the setting's key in the platform's settings document, or
	// the secret's name.
	Key   string
	Label string
	Help  string
	Kind  FieldKind
	// Choices are the values a FieldChoice takes.
	Choices []string
	// Required: the platform is not on without it.
	Required bool
}

// FieldKind is how a setting is edited.
type FieldKind int

// The kinds of fields.
const (
	FieldText   FieldKind = iota // one line of text
	FieldSecret                  // sealed with secret_key, never shown back
	FieldChoice                  // one of Choices
	FieldStages                  // a stage's event per line: "won = CompletePayment"
)

// FieldError is a problem with one setting.
type FieldError struct {
	Key     string
	Message string
}

func (e FieldError) Error() string { return e.Key + ": " + e.Message }

// Shrunk is a platform's shrunk event as JSON: the fields it keeps, with
// the names of the match keys the event carried (match_keys, sorted) when
// it had any. An object that cannot be encoded becomes {}.
func Shrunk(kept map[string]any, matchKeys []string) json.RawMessage {
	if len(matchKeys) > 0 {
		slices.Sort(matchKeys)
		kept["match_keys"] = slices.Compact(matchKeys)
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}
