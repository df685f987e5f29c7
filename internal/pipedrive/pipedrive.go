// Package pipedrive is the Pipedrive lead source: a site's Pipedrive sends
// its deal changes to POST /v1/webhooks/pipedrive/{site} (webhooks v2,
// HTTP Basic auth), each change that matters (a deal moved to a mapped
// stage, won or lost) is queued as a job, and the worker reads the deal's
// person through Pipedrive's API, finds the lead by the person's e-mail,
// phone or a lead id field, and records the site's mapped stage on it
// (app.Service.AddEvent), which the ad platforms then receive.
package pipedrive

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/source"
)

// Name is the source's key: its settings, secrets and outbox destination.
const Name = "pipedrive"

// DefaultAPI is Pipedrive's API address; an API token works on it for
// every company.
const DefaultAPI = "https://api.pipedrive.com"

// The keys of the site's Pipedrive settings and secrets.
const (
	KeyToken       = "api_token"
	KeyUser        = "webhook_user"
	KeyPassword    = "webhook_password"
	KeyDomain      = "company_domain"
	KeyStages      = "stages"
	KeyWon         = "won_stage"
	KeyLost        = "lost_stage"
	KeyLeadIDField = "lead_id_field"
)

// Settings are a site's Pipedrive settings document.
type Settings struct {
	// Stages maps a Pipedrive stage id to the site's stage.
	Stages map[string]string `json:"stages,omitempty"`
	// Won and Lost are the site's stages a won or lost deal is.
	Won  string `json:"won_stage,omitempty"`
	Lost string `json:"lost_stage,omitempty"`
	// Domain is the company's Pipedrive subdomain (acme of
	// acme.pipedrive.com); empty uses DefaultAPI.
	Domain string `json:"company_domain,omitempty"`
	// User is the webhook's HTTP Basic auth user name.
	User string `json:"webhook_user,omitempty"`
	// LeadIDField is the API key of a deal or person custom field that
	// holds the CleanAds or Meta lead id.
	LeadIDField string `json:"lead_id_field,omitempty"`
}

// Source is the Pipedrive source and its worker.
type Source struct {
	d    source.Deps
	http *http.Client
}

// New returns the Pipedrive source. Its worker keeps pauses in d.Pauses.
func New(d source.Deps) source.Source {
	s := &Source{d: d, http: d.HTTP}
	if s.http == nil {
		s.http = &http.Client{Timeout: 20 * time.Second}
	}
	return s
}

// Name is the source's key.
func (*Source) Name() string { return Name }

// Label is its name for people.
func (*Source) Label() string { return "Pipedrive" }

// Destination is the worker's outbox destination.
func (*Source) Destination() string { return Name }

// Handler does the worker's rows through the platforms' handler.
func (s *Source) Handler() deliver.Handler { return deliver.NewPlatformHandler(s, s.d.Pauses) }

// BatchSize is how many jobs one Send does.
func (*Source) BatchSize() int { return 20 }

// Routes is the webhook.
func (s *Source) Routes() []source.Route {
	return []source.Route{{Pattern: "POST /v1/webhooks/pipedrive/{site}", Handler: s.receive, Body: 256 << 10}}
}

// settings returns the site's Pipedrive settings (zero when none).
func settings(site *model.Site) Settings {
	var st Settings
	_, _ = platform.Decode(site, Name, &st)
	return st
}

// On tells whether the site's Pipedrive is set up: the token, the
// webhook's user and password, and a stage to record.
func (s *Source) On(site *model.Site) bool {
	st := settings(site)
	return platform.Secret(site, Name, KeyToken) != "" && st.User != "" &&
		platform.Secret(site, Name, KeyPassword) != "" && (len(st.Stages) > 0 || st.Won != "" || st.Lost != "")
}

// Fields are the settings on the site's page.
func (*Source) Fields() []platform.Field {
	return []platform.Field{
		{Key: KeyToken, Label: "API token", Kind: platform.FieldSecret, Required: true,
			Help: "In Pipedrive: Personal preferences → API. CleanAds reads deals and persons with it."},
		{Key: KeyUser, Label: "Webhook user name", Kind: platform.FieldText, Required: true,
			Help: "Choose one and type it as the webhook's HTTP Auth username in Pipedrive."},
		{Key: KeyPassword, Label: "Webhook password", Kind: platform.FieldSecret, Required: true,
			Help: "Choose a long one and type it as the webhook's HTTP Auth password in Pipedrive."},
		{Key: KeyStages, Label: "Stage mapping", Kind: platform.FieldStages,
			Help: "One Pipedrive stage id = CleanAds stage per line, e.g. 3 = meeting. The id is in the stage's address in Pipedrive."},
		{Key: KeyWon, Label: "Won deals are stage", Kind: platform.FieldText,
			Help: "The CleanAds stage a won deal records (with its value and currency), e.g. won."},
		{Key: KeyLost, Label: "Lost deals are stage", Kind: platform.FieldText,
			Help: "The CleanAds stage a lost deal records; empty: lost deals are not sent."},
		{Key: KeyDomain, Label: "Company domain", Kind: platform.FieldText,
			Help: "Only if API calls must go to your company's address: acme for acme.pipedrive.com."},
		{Key: KeyLeadIDField, Label: "Lead id field", Kind: platform.FieldText,
			Help: "Optional: the API key of a deal or person field that holds the CleanAds or Meta lead id."},
	}
}

var (
	stageID   = regexp.MustCompile(`^[1-9][0-9]{0,18}$`)
	subdomain = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
)

// Validate checks the site's Pipedrive settings.
func (s *Source) Validate(site *model.Site) []platform.FieldError {
	var out []platform.FieldError
	st := settings(site)
	for id, stage := range st.Stages {
		if !stageID.MatchString(id) {
			out = append(out, platform.FieldError{Key: KeyStages,
				Message: "Write each Pipedrive stage as its id number, e.g. 3 = meeting."})
		}
		if strings.TrimSpace(stage) == "" {
			out = append(out, platform.FieldError{Key: KeyStages, Message: "Every stage id needs a CleanAds stage."})
		}
	}
	if s.d.App != nil {
		unknown := map[string]bool{}
		for _, stage := range st.Stages {
			if stage = strings.TrimSpace(stage); stage != "" && !s.d.App.HasStage(site, stage) {
				unknown[KeyStages] = true
			}
		}
		for key, stage := range map[string]string{KeyWon: st.Won, KeyLost: st.Lost} {
			if stage = strings.TrimSpace(stage); stage != "" && !s.d.App.HasStage(site, stage) {
				unknown[key] = true
			}
		}
		for _, key := range []string{KeyStages, KeyWon, KeyLost} {
			if unknown[key] {
				out = append(out, platform.FieldError{Key: key, Message: source.UnknownStage})
			}
		}
	}
	if len(st.Stages) == 0 && st.Won == "" && st.Lost == "" {
		out = append(out, platform.FieldError{Key: KeyStages, Message: "Map at least one stage, or say which stage won deals are."})
	}
	if st.Domain != "" && !subdomain.MatchString(st.Domain) {
		out = append(out, platform.FieldError{Key: KeyDomain, Message: "Write only the subdomain: acme for acme.pipedrive.com."})
	}
	if u := st.User; u != "" && strings.ContainsAny(u, ":") {
		out = append(out, platform.FieldError{Key: KeyUser, Message: "A user name cannot hold a colon."})
	}
	if p := platform.Secret(site, Name, KeyPassword); p != "" && len(p) < 12 {
		out = append(out, platform.FieldError{Key: KeyPassword, Message: "Use at least 12 characters."})
	}
	return out
}

// base is the API address for the site: the configured override (the
// tests' stand-in), else the company's domain, else DefaultAPI.
func (s *Source) base(site *model.Site) string {
	if v := s.d.Endpoints[Name]; v != "" {
		return strings.TrimRight(v, "/")
	}
	if d := settings(site).Domain; d != "" {
		return "https://" + d + ".pipedrive.com"
	}
	return DefaultAPI
}

// SendTest reads the token's user (GET /v1/users/me) and says who
// Pipedrive took the token for, or its refusal.
func (s *Source) SendTest(ctx context.Context, site *model.Site) (*platform.TestResult, error) {
	var me struct {
		Name        string `json:"name"`
		CompanyName string `json:"company_name"`
		CompanyDom  string `json:"company_domain"`
	}
	req, _ := json.Marshal(map[string]string{"request": "GET /v1/users/me"})
	res := &platform.TestResult{Event: req}
	if err := s.get(ctx, site, "/v1/users/me", &me); err != nil {
		return res, err
	}
	res.Account = me.CompanyDom
	res.Answer, _ = json.Marshal(map[string]string{"user": me.Name, "company": me.CompanyName})
	return res, nil
}

// get reads path of Pipedrive's API with the site's token into the
// answer's data, classifying a failure: 401 and 403 pause the site's
// Pipedrive for the owner, 429 throttles, 5xx and network errors retry,
// 404 is model.ErrNotFound.
func (s *Source) get(ctx context.Context, site *model.Site, path string, data any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base(site)+path, nil)
	if err != nil {
		return &platform.Failure{Class: platform.Refused, Words: "the Pipedrive address is wrong", Err: err}
	}
	req.Header.Set("x-api-token", platform.Secret(site, Name, KeyToken))
	req.Header.Set("Accept", "application/json")
	resp, err := s.http.Do(req)
	if err != nil {
		return &platform.Failure{Class: platform.Transient, Words: "Pipedrive could not be reached", Err: err}
	}
	defer resp.Body.Close()
	var body struct {
		Success bool            `json:"success"`
		Data    json.RawMessage `json:"data"`
		Error   string          `json:"error"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 4<<20))
	decErr := dec.Decode(&body)
	words := strings.TrimSpace(body.Error)
	if words == "" {
		words = resp.Status
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return &platform.Failure{Class: platform.Paused, Err: fmt.Errorf("pipedrive answered %d: %s", resp.StatusCode, words),
			Words: "Pipedrive refused the API token: paste a new one from Pipedrive's Personal preferences → API into the site's Pipedrive section"}
	case resp.StatusCode == http.StatusTooManyRequests:
		return &platform.Failure{Class: platform.Throttled, Words: "Pipedrive asked to slow down", RetryAfter: retryAfter(resp.Header),
			Err: fmt.Errorf("pipedrive answered 429: %s", words)}
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("pipedrive has no %s: %w", path, model.ErrNotFound)
	case resp.StatusCode >= 500:
		return &platform.Failure{Class: platform.Transient, Words: "Pipedrive failed", Err: fmt.Errorf("pipedrive answered %d: %s", resp.StatusCode, words)}
	case resp.StatusCode != http.StatusOK:
		return &platform.Failure{Class: platform.Refused, Words: "Pipedrive refused the request", Err: fmt.Errorf("pipedrive answered %d: %s", resp.StatusCode, words)}
	case decErr != nil || !body.Success:
		return &platform.Failure{Class: platform.Transient, Words: "Pipedrive's answer was unreadable", Err: fmt.Errorf("%s: %v", words, decErr)}
	}
	if err := json.Unmarshal(body.Data, data); err != nil {
		return &platform.Failure{Class: platform.Transient, Words: "Pipedrive's answer was unreadable", Err: err}
	}
	return nil
}

// retryAfter is the wait a 429 asks for: Retry-After, else Pipedrive's
// x-ratelimit-reset (seconds until the window resets).
func retryAfter(h http.Header) time.Duration {
	for _, k := range []string{"Retry-After", "X-Ratelimit-Reset"} {
		if n, err := strconv.Atoi(strings.TrimSpace(h.Get(k))); err == nil && n > 0 {
			return time.Duration(n) * time.Second
		}
	}
	return 0
}

var (
	_ source.Worker         = (*Source)(nil)
	_ platform.Configurable = (*Source)(nil)
	_ deliver.Batches       = (*Source)(nil)
)
