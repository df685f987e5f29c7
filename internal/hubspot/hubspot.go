// Package hubspot is the HubSpot lead source: a site's HubSpot account
// posts its deals' and contacts' stage changes to
// POST /v1/webhooks/hubspot/{site}, and each change is recorded as the
// site's CRM stage of the lead the HubSpot contact is. It owns the webhook
// (its v3 signature), the site's HubSpot settings (a private app's access
// token and client secret, the stage mappings), the CRM reads through
// HubSpot's API and the worker that turns a change into a stage.
//
// The facts it relies on, from HubSpot's developer documentation:
//
//   - A webhook request is a POST whose body is a JSON array of events,
//     each with eventId, subscriptionId, portalId, appId, occurredAt
//     (milliseconds since the epoch), subscriptionType
//     ("deal.propertyChange", "contact.propertyChange"), attemptNumber,
//     objectId and, for a property change, propertyName and
//     propertyValue (for dealstage, the stage's internal id: "closedwon"
//     in the default pipeline, a number in pipelines of one's own).
//     HubSpot retries a delivery that is not answered 2xx in time, so the
//     same eventId can come twice.
//   - The request carries X-HubSpot-Signature-v3 and
//     X-HubSpot-Request-Timestamp (milliseconds). The signature is the
//     base64 HMAC-SHA256, keyed with the app's client secret, of the UTF-8
//     string method + URI + body + timestamp, where the URI is the full
//     address HubSpot posted to (https://host/path?query) with the
//     percent-escapes of : / ? @ ! $ ' ( ) * , ; decoded. A timestamp
//     older than 5 minutes is to be refused.
//   - CRM API v3, authorised by "Authorization: Bearer <private app
//     token>": GET /crm/v3/objects/deals/{id}?properties=...&associations=contacts
//     answers {id, properties, associations: {contacts: {results: [{id}]}}},
//     properties as strings (amount, closedate, dealstage,
//     deal_currency_code); GET /crm/v3/objects/contacts/{id}?properties=...
//     answers {id, properties} (email, phone, mobilephone, any custom
//     property). Errors are JSON {status, message, category,
//     correlationId}: 401 for a bad token, 403 for a missing scope, 404
//     for an object that does not exist, 429 when the app's rate limit is
//     spent, 5xx when HubSpot fails.
//   - A private app needs the scopes crm.objects.deals.read and
//     crm.objects.contacts.read for these reads.
package hubspot

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/source"
)

// Name is the source's key: its settings document, its secrets' prefix,
// its worker's outbox destination.
const Name = "hubspot"

// DefaultBaseURL is HubSpot's API.
const DefaultBaseURL = "https://api.hubapi.com"

// The names of the site's HubSpot secrets.
const (
	SecretAccessToken  = "access_token"
	SecretClientSecret = "client_secret"
)

// MaxAge is how old a webhook's timestamp may be (HubSpot's own advice).
const MaxAge = 5 * time.Minute

// Settings are a site's HubSpot settings, the document at
// SiteSettings.Platforms["hubspot"]; the token and the client secret are
// secrets.
type Settings struct {
	// DealStages maps a HubSpot deal stage id to the CleanAds stage it is
	// recorded as; a stage not here is ignored.
	DealStages map[string]string `json:"deal_stages,omitempty"`
	// LifecycleStages maps a HubSpot lifecycle stage (lead,
	// marketingqualifiedlead, salesqualifiedlead, opportunity, customer,
	// or a custom stage's id) to a CleanAds stage.
	LifecycleStages map[string]string `json:"lifecycle_stages,omitempty"`
	// LeadIDProperty is the contact property that holds the CleanAds lead
	// id or the Meta lead id of the contact's lead, when the site's forms
	// write one into HubSpot.
	LeadIDProperty string `json:"lead_id_property,omitempty"`
}

// stage returns the CleanAds stage a HubSpot value maps to in m, compared
// without case (stage ids are kept lower-cased).
func stage(m map[string]string, value string) string {
	if v, ok := m[value]; ok {
		return v
	}
	for k, v := range m {
		if strings.EqualFold(k, value) {
			return v
		}
	}
	return ""
}

// Source is HubSpot as a source.Worker and a platform.Configurable. It
// holds no state beyond its dependencies.
type Source struct {
	d    source.Deps
	base string
	http *http.Client
	now  func() time.Time
	log  *slog.Logger
}

// New returns the HubSpot source: its API at d's endpoint for "hubspot"
// (DefaultBaseURL unless overridden).
func New(d source.Deps) source.Source {
	c := d.HTTP
	if c == nil {
		c = &http.Client{Timeout: 30 * time.Second}
	}
	return &Source{d: d, base: strings.TrimRight(d.Endpoint(Name, DefaultBaseURL), "/"), http: c,
		now: d.Clock(), log: d.Log().With("source", Name)}
}

// Name is "hubspot".
func (*Source) Name() string { return Name }

// Label is "HubSpot".
func (*Source) Label() string { return "HubSpot" }

// Destination is the worker's outbox destination, "hubspot".
func (*Source) Destination() string { return Name }

// Handler does the worker's rows with the runner's retries and pauses.
func (s *Source) Handler() deliver.Handler { return deliver.NewPlatformHandler(s, s.d.Pauses) }

// BatchSize is how many changes one Send does: each is a few API reads.
func (*Source) BatchSize() int { return 10 }

// settings reads the site's HubSpot settings; ok is false when it has none.
func settings(site *model.Site) (Settings, bool, error) {
	var st Settings
	if site == nil {
		return st, false, nil
	}
	ok, err := platform.Decode(site, Name, &st)
	return st, ok, err
}

func secret(site *model.Site, key string) string {
	return strings.TrimSpace(platform.Secret(site, Name, key))
}

// On tells whether the site receives from HubSpot: the access token and
// the client secret are set.
func (s *Source) On(site *model.Site) bool {
	if _, _, err := settings(site); err != nil {
		return false
	}
	return secret(site, SecretAccessToken) != "" && secret(site, SecretClientSecret) != ""
}

// Fields are the HubSpot settings as the admin UI edits them.
func (s *Source) Fields() []platform.Field {
	return []platform.Field{
		{Key: SecretAccessToken, Label: "Private app access token", Kind: platform.FieldSecret, Required: true,
			Help: "HubSpot > Settings > Integrations > Private apps > your app > Auth: the access token. The app needs the scopes crm.objects.deals.read and crm.objects.contacts.read."},
		{Key: SecretClientSecret, Label: "Client secret", Kind: platform.FieldSecret, Required: true,
			Help: "On the same Auth tab: the client secret. HubSpot signs its webhooks with it; a post it does not sign is refused."},
		{Key: "deal_stages", Label: "Deal stages", Kind: platform.FieldStages,
			Help: "One per line: HubSpot deal stage id = CleanAds stage, e.g. appointmentscheduled = meeting and closedwon = won. A won deal's amount is sent as the value. Stages not listed are ignored."},
		{Key: "lifecycle_stages", Label: "Lifecycle stages", Kind: platform.FieldStages,
			Help: "One per line: HubSpot lifecycle stage = CleanAds stage, e.g. salesqualifiedlead = qualified. Stages not listed are ignored."},
		{Key: "lead_id_property", Label: "Lead id property",
			Help: "The internal name of a contact property that holds the CleanAds lead id or the Meta lead id, e.g. cleanads_lead_id. Empty: leads are found by the contact's e-mail and phone."},
	}
}

// Validate checks the site's HubSpot settings, each problem on its field.
func (s *Source) Validate(site *model.Site) []platform.FieldError {
	st, ok, err := settings(site)
	if err != nil {
		return []platform.FieldError{{Key: "deal_stages", Message: "the HubSpot settings cannot be read: " + err.Error()}}
	}
	if !ok && secret(site, SecretAccessToken) == "" && secret(site, SecretClientSecret) == "" {
		return nil
	}
	var errs []platform.FieldError
	add := func(key, msg string, args ...any) {
		errs = append(errs, platform.FieldError{Key: key, Message: fmt.Sprintf(msg, args...)})
	}
	if secret(site, SecretAccessToken) == "" {
		add(SecretAccessToken, "paste the access token of the HubSpot private app")
	}
	if secret(site, SecretClientSecret) == "" {
		add(SecretClientSecret, "paste the client secret of the HubSpot private app: webhooks are checked with it")
	}
	if len(st.DealStages) == 0 && len(st.LifecycleStages) == 0 {
		add("deal_stages", "map at least one HubSpot deal stage or lifecycle stage to a CleanAds stage, e.g. closedwon = won")
	}
	for key, m := range map[string]map[string]string{"deal_stages": st.DealStages, "lifecycle_stages": st.LifecycleStages} {
		unknown := false
		for from, to := range m {
			if strings.TrimSpace(from) == "" || strings.TrimSpace(to) == "" {
				add(key, "each line is a HubSpot stage = a CleanAds stage, neither empty")
			} else if s.d.App != nil && !s.d.App.HasStage(site, strings.TrimSpace(to)) {
				unknown = true
			}
		}
		if unknown {
			add(key, source.UnknownStage)
		}
	}
	if p := st.LeadIDProperty; p != "" && !isPropertyName(p) {
		add("lead_id_property", "a property's internal name is lower-case letters, digits and _, e.g. cleanads_lead_id, not %q", p)
	}
	return errs
}

func isPropertyName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return s != ""
}

// SendTest reads one contact with the site's token and says whether
// HubSpot took it.
func (s *Source) SendTest(ctx context.Context, site *model.Site) (*platform.TestResult, error) {
	token := secret(site, SecretAccessToken)
	if token == "" {
		return nil, model.Invalid(SecretAccessToken, "paste the access token of the HubSpot private app first")
	}
	path := "/crm/v3/objects/contacts?limit=1&properties=email"
	sent, _ := json.Marshal(map[string]string{"method": http.MethodGet, "url": s.base + path})
	var answer json.RawMessage
	if err := s.get(ctx, token, path, &answer); err != nil {
		return nil, err
	}
	return &platform.TestResult{Account: "HubSpot CRM", Event: sent, Answer: answer}, nil
}

// interface checks
var (
	_ source.Worker         = (*Source)(nil)
	_ platform.Configurable = (*Source)(nil)
	_ deliver.Batches       = (*Source)(nil)
)

// stageInput is the stage call of a change.
func stageInput(name string, at time.Time, value *float64, currency string) *app.LeadEventInput {
	return &app.LeadEventInput{Type: app.TypeStage, Stage: name, At: at.UTC().Format(time.RFC3339), Value: value,
		Currency: currency}
}
