package google

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"golang.org/x/oauth2"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
)

// Sender is the Data Manager API as the platform needs it; *Client is one.
type Sender interface {
	IngestAll(ctx context.Context, ts oauth2.TokenSource, t Target, events []Event) ([]Outcome, int, error)
	Status(ctx context.Context, ts oauth2.TokenSource, requestID string) (*StatusResponse, error)
}

// TokenFunc returns the token source of a site's Google credentials.
type TokenFunc func(site *model.Site) (oauth2.TokenSource, error)

// Platform is Google Ads (through the Data Manager API) as a platform: a
// lead's qualified event and its mapped stages become click conversions of
// the site's conversion actions, matched by the visitor's Google click and
// the lead's hashed e-mail and phone.
type Platform struct {
	sender Sender
	tokens TokenFunc
	now    func() time.Time
}

// NewPlatform returns Google as a platform, sending with sender under the
// credentials tokens gives for a site.
func NewPlatform(sender Sender, tokens TokenFunc, d platform.Deps) *Platform {
	return &Platform{sender: sender, tokens: tokens, now: d.Clock()}
}

// Name implements platform.Platform.
func (*Platform) Name() string { return model.DestinationGoogle }

// Label implements platform.Platform.
func (*Platform) Label() string { return "Google Ads" }

// On tells whether the site has a Google block with an operating account.
func (*Platform) On(site *model.Site) bool {
	g := Settings(site)
	return g != nil && g.OperatingAccountID != ""
}

// Settings are the site's Google settings: its google block from the
// config, else what the admin UI saved as its platform settings; nil when
// it has neither.
func Settings(site *model.Site) *model.GoogleSettings {
	if site.Settings.Google != nil {
		return site.Settings.Google
	}
	var g model.GoogleSettings
	if ok, err := platform.Decode(site, model.DestinationGoogle, &g); !ok || err != nil {
		return nil
	}
	return &g
}

// ReadsVisits: Google matches by the gclid, gbraid or wbraid of the
// visitor's latest visit from a Google ad.
func (*Platform) ReadsVisits() bool { return true }

// MaxAge is Google's longest click-through window.
func (*Platform) MaxAge() time.Duration { return model.GoogleMaxEventAge }

// BatchSize is Google's most events per request.
func (*Platform) BatchSize() int { return MaxBatch }

// sendMargin keeps a day of Google's 90 for the delivery worker.
const sendMargin = 24 * time.Hour

// Build makes Google's conversion of a lead's event: the qualified event
// and the mapped stages (the raw lead event and PageViews are not Google's),
// for a lead Google could attribute: a website lead, or another with a
// Google click id. Its deadline is the lead's submit time plus 90 days
// (the click came before it).
func (p *Platform) Build(_ context.Context, in platform.Input) (*platform.Event, error) {
	g, lead := Settings(in.Site), in.Lead
	if g.ConversionAction(in.Kind) == "" {
		return nil, platform.Skip("the site maps this event to no Google conversion action")
	}
	clicks := model.ClickIDs{GClid: in.Clicks.GClid, GBraid: in.Clicks.GBraid, WBraid: in.Clicks.WBraid}
	if lead.Source != "" && lead.Source != model.SourceWeb && clicks == (model.ClickIDs{}) {
		// A lead from a Meta Instant Form or a WhatsApp ad came from no
		// Google ad: Google could attribute it to nothing.
		return nil, platform.Skip("the lead came from no Google ad")
	}
	now := in.Now
	if now.IsZero() {
		now = p.now()
	}
	at := in.At
	if at.IsZero() {
		at = lead.SubmittedAt
	}
	submitted := lead.SubmittedAt
	if submitted.IsZero() {
		submitted = at
	}
	deadline := submitted.Add(model.GoogleMaxEventAge)
	if now.After(deadline.Add(-sendMargin)) {
		return nil, platform.TooOld("the lead came more than 90 days ago, and Google takes no older click conversion")
	}
	gp := Params{Settings: g, Country: in.Site.Settings.Country, Lead: lead, Kind: in.Kind, At: at, Clicks: clicks,
		Currency: in.Currency}
	if in.Value != nil {
		gp.Value = *in.Value
	}
	ev, err := BuildEvent(gp)
	if errors.Is(err, ErrNotSent) {
		return nil, platform.Skip(err.Error())
	}
	if err != nil {
		return nil, err
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("google: encode %s event: %w", in.Kind, err)
	}
	name, _ := model.StageOfKind(in.Kind)
	if name == "" {
		name = in.Kind
	}
	return &platform.Event{Name: name, ID: ev.TransactionID, Account: g.OperatingAccountID, Payload: payload,
		Deadline: deadline}, nil
}

// Answer is what a Google row's response holds: the request that carried
// it, and Google's per-destination result once it has one.
type Answer struct {
	RequestID    string             `json:"requestId,omitempty"`
	ValidateOnly bool               `json:"validateOnly,omitempty"`
	Awaiting     bool               `json:"awaiting,omitempty"`
	Status       *DestinationStatus `json:"status,omitempty"`
}

// Send sends one site's rows to its Google Ads account, in requests of at
// most 2,000 events (IngestAll splits a refused one so that each event at
// fault fails alone). After an accepted request it asks for the request's
// status once and fails the rows of a conversion action Google failed; a
// request still processing leaves its rows awaiting, for Follow.
func (p *Platform) Send(ctx context.Context, site *model.Site, rows []*model.Delivery) ([]platform.Outcome, error) {
	g := Settings(site)
	if g == nil {
		return nil, &platform.Failure{Class: platform.Paused, Words: "the site no longer has Google settings"}
	}
	out := make([]platform.Outcome, len(rows))
	refs := make([]string, len(rows)) // each row's conversion action
	var live []int
	var events []Event
	for i, d := range rows {
		var e Event
		if err := json.Unmarshal(d.Payload, &e); err != nil {
			out[i].Err = fmt.Errorf("unreadable payload: %w", err)
			continue
		}
		if err := Check(&e); err != nil {
			out[i].Err = err
			continue
		}
		if len(e.DestinationReferences) > 0 {
			refs[i] = e.DestinationReferences[0]
		}
		live, events = append(live, i), append(events, e)
	}
	if len(live) == 0 {
		return out, nil
	}
	ts, err := p.tokens(site)
	if err != nil {
		return out, failure(err)
	}
	mode := g.Mode
	if mode == "" {
		mode = model.GoogleModeLive
	}
	t := Target{OperatingAccountID: g.OperatingAccountID, LoginAccountID: g.LoginAccountID,
		ValidateOnly: mode == model.GoogleModeValidate}
	res, _, sendErr := p.sender.IngestAll(ctx, ts, t, events)
	byRequest := map[string][]int{}
	for k, i := range live {
		o := res[k]
		switch {
		case o.Accepted:
			a, _ := json.Marshal(Answer{RequestID: o.RequestID, ValidateOnly: t.ValidateOnly, Awaiting: o.RequestID != ""})
			out[i] = platform.Outcome{Accepted: true, Response: a, Mode: mode}
			if o.RequestID != "" {
				byRequest[o.RequestID] = append(byRequest[o.RequestID], i)
			}
		case o.Err != nil:
			out[i].Err = o.Err
		}
	}
	// Google usually answers within seconds: one question now, and
	// Follow asks again about what is still processing.
	for id, idx := range byRequest {
		st, err := p.sender.Status(ctx, ts, id)
		if err != nil {
			continue
		}
		for _, i := range idx {
			a, failed, words := StatusOf(id, st, refs[i])
			out[i].Response, _ = json.Marshal(a)
			if failed {
				out[i] = platform.Outcome{Err: errors.New(words), Response: out[i].Response}
			} else if words != "" {
				// Google took the request only in part and names no
				// event: the row stays sent, and says so.
				out[i].Note = words
			}
		}
	}
	if sendErr != nil {
		return out, failure(sendErr)
	}
	return out, nil
}

// failure is a Google error in the platform's classes.
func failure(err error) error {
	switch Classify(err) {
	case ClassPause:
		return &platform.Failure{Class: platform.Paused, Words: PauseReason(err), Err: err}
	case ClassInvalid:
		return &platform.Failure{Class: platform.Refused, Err: err}
	}
	return &platform.Failure{Class: platform.Transient, RetryAfter: RetryAfter(err), Err: err}
}

// StatusOf reads Google's result of a request for the conversion action
// ref: the row's answer, whether Google failed it, and words for a failure
// or a partial success ("" when it succeeded or is still processing).
func StatusOf(requestID string, res *StatusResponse, ref string) (a Answer, failed bool, words string) {
	a = Answer{RequestID: requestID, Awaiting: true}
	for i := range res.PerDestination {
		ds := &res.PerDestination[i]
		if ds.Destination.ProductDestinationID != ref && ds.Destination.Reference != ref {
			continue
		}
		a = Answer{RequestID: requestID, Status: ds}
		switch ds.RequestStatus {
		case StatusProcessing, StatusUnknown, "":
			a.Awaiting = true
		case StatusFailed:
			return a, true, "Google failed the request for conversion action " + ref + reasons(*ds)
		case StatusPartialSuccess:
			return a, false, partialWords(ref, *ds)
		}
	}
	return a, false, ""
}

// partialWords says what Google's PARTIAL_SUCCESS of a request means for
// one of its rows: how many of the request's events failed and why, and
// that Google does not say which.
func partialWords(ref string, ds DestinationStatus) string {
	total := ""
	if ds.EventsIngestionStatus != nil && ds.EventsIngestionStatus.RecordCount != "" {
		total = " of " + string(ds.EventsIngestionStatus.RecordCount)
	}
	var n int64
	if ds.ErrorInfo != nil {
		for _, c := range ds.ErrorInfo.ErrorCounts {
			k, _ := c.RecordCount.Int64()
			n += k
		}
	}
	return fmt.Sprintf("Google took the request for conversion action %s only in part: %d%s events failed%s. "+
		"Google does not say which: this event may be one of them", ref, n, total, reasons(ds))
}

func reasons(ds DestinationStatus) string {
	if ds.ErrorInfo == nil || len(ds.ErrorInfo.ErrorCounts) == 0 {
		return ""
	}
	s := ":"
	for _, c := range ds.ErrorInfo.ErrorCounts {
		s += fmt.Sprintf(" %s (%s)", c.Reason, c.RecordCount)
	}
	return s
}

// Redact removes what a Google event carries in clear: its click ids and
// the postal code and region of an address (the name's hashes go with
// them: Google takes an address only whole). The hashed e-mail and phone
// stay, as Meta's hashed keys do.
func (*Platform) Redact(p json.RawMessage) json.RawMessage {
	var ev map[string]json.RawMessage
	if err := json.Unmarshal(p, &ev); err != nil {
		return json.RawMessage(`{}`)
	}
	delete(ev, "adIdentifiers")
	if raw, ok := ev["userData"]; ok {
		var ud UserData
		if json.Unmarshal(raw, &ud) != nil {
			delete(ev, "userData")
		} else {
			kept := ud.UserIdentifiers[:0]
			for _, u := range ud.UserIdentifiers {
				if u.Address == nil {
					kept = append(kept, u)
				}
			}
			ud.UserIdentifiers = kept
			ev["userData"], _ = json.Marshal(ud)
		}
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

// Shrink keeps what the owner's view of a finished Google event needs:
// its time, value, currency and source, and the names of the identifiers
// and click id it carried (match_keys), not their values. A payload that
// is not an event becomes {}.
func (*Platform) Shrink(p json.RawMessage) json.RawMessage {
	var ev struct {
		Event
		MatchKeys []string `json:"match_keys"`
	}
	if json.Unmarshal(p, &ev) != nil || ev.EventTimestamp == "" {
		return json.RawMessage(`{}`)
	}
	kept := map[string]any{"eventTimestamp": ev.EventTimestamp}
	if ev.Currency != "" {
		kept["currency"] = ev.Currency
	}
	if ev.ConversionValue != 0 {
		kept["conversionValue"] = ev.ConversionValue
	}
	if ev.EventSource != "" {
		kept["eventSource"] = ev.EventSource
	}
	keys := ev.MatchKeys
	if a := ev.AdIdentifiers; a != nil {
		for k, v := range map[string]string{"gclid": a.GClid, "gbraid": a.GBraid, "wbraid": a.WBraid} {
			if v != "" {
				keys = append(keys, k)
			}
		}
	}
	if ev.UserData != nil {
		for _, u := range ev.UserData.UserIdentifiers {
			switch {
			case u.EmailAddress != "":
				keys = append(keys, "emailAddress")
			case u.PhoneNumber != "":
				keys = append(keys, "phoneNumber")
			case u.Address != nil:
				keys = append(keys, "address")
			}
		}
	}
	return platform.Shrunk(kept, keys)
}

// SendTest builds a sample qualified event for the site (an e-mail on
// example.com and an example number of the site's country, hashed as
// Google wants them) and sends it with validateOnly: Google checks the
// account, the conversion action, the credentials and the payload, and
// records nothing.
func (p *Platform) SendTest(ctx context.Context, site *model.Site) (*platform.TestResult, error) {
	g := Settings(site)
	if g == nil || g.OperatingAccountID == "" {
		return nil, model.Invalid("google", "the site has no Google settings: set the operating account, the conversion actions and the credentials")
	}
	kind := model.KindQualified
	if g.QualifiedConversionAction == "" {
		for stage := range g.Stages {
			kind = model.KindStage + ":" + stage
			break
		}
	}
	now := p.now().UTC()
	lead := platform.SampleLead(site, now)
	ev, err := BuildEvent(Params{Settings: g, Country: site.Settings.Country, Lead: lead, Kind: kind, At: now})
	if err != nil {
		return nil, err
	}
	t := Target{OperatingAccountID: g.OperatingAccountID, LoginAccountID: g.LoginAccountID, ValidateOnly: true}
	req, err := NewRequest(t, []Event{ev})
	if err != nil {
		return nil, err
	}
	shown, _ := json.Marshal(req)
	res := &platform.TestResult{Account: g.OperatingAccountID, Code: "validateOnly", Event: shown}
	ts, err := p.tokens(site)
	if err != nil {
		return res, failure(err)
	}
	out, _, err := p.sender.IngestAll(ctx, ts, t, []Event{ev})
	if err != nil {
		return res, failure(err)
	}
	if len(out) == 1 && out[0].Err != nil {
		return res, out[0].Err
	}
	res.Answer = json.RawMessage(`{"validated":true}`)
	return res, nil
}

// Fields are Google's settings as the admin UI edits them, for a site
// made there (a config site's google block wins); the credentials are
// secrets, sealed.
func (*Platform) Fields() []platform.Field {
	return []platform.Field{
		{Key: "operating_account_id", Label: "Google Ads customer id", Help: "The account the conversions belong to, digits only (123-456-7890 is 1234567890).", Required: true},
		{Key: "login_account_id", Label: "Manager account id", Help: "The manager account the credentials reach the customer through; empty when they reach it directly."},
		{Key: "qualified_conversion_action", Label: "Qualified lead conversion action id", Help: "Google Ads > Goals > Conversions: the action's id (ctId in its URL)."},
		{Key: "stages", Label: "Stages", Help: "One stage per line with its conversion action id: won = 987654321.", Kind: platform.FieldStages},
		{Key: "currency", Label: "Currency", Help: "The ISO 4217 code of stage values that bring none, e.g. EUR."},
		{Key: "mode", Label: "Mode", Kind: platform.FieldChoice, Choices: []string{model.GoogleModeLive, model.GoogleModeValidate},
			Help: "validate: Google checks every event and records nothing."},
		{Key: "client_id", Label: "OAuth client id", Kind: platform.FieldSecret},
		{Key: "client_secret", Label: "OAuth client secret", Kind: platform.FieldSecret},
		{Key: "refresh_token", Label: "OAuth refresh token", Kind: platform.FieldSecret,
			Help: "From authorising the OAuth client for the datamanager scope; or give a service account key instead."},
		{Key: "service_account_json", Label: "Service account key (JSON)", Kind: platform.FieldSecret},
	}
}

// Validate checks the site's Google settings.
func (*Platform) Validate(site *model.Site) []platform.FieldError {
	g := Settings(site)
	if g == nil {
		return nil
	}
	var errs []platform.FieldError
	digits := func(key, v string) {
		for _, r := range v {
			if r < '0' || r > '9' {
				errs = append(errs, platform.FieldError{Key: key, Message: "digits only, without dashes"})
				return
			}
		}
	}
	digits("operating_account_id", g.OperatingAccountID)
	digits("login_account_id", g.LoginAccountID)
	digits("qualified_conversion_action", g.QualifiedConversionAction)
	for stage, action := range g.Stages {
		if action == "" {
			errs = append(errs, platform.FieldError{Key: "stages", Message: "stage " + stage + " has no conversion action id"})
			continue
		}
		digits("stages", action)
	}
	if g.Currency != "" && !model.IsCurrencyCode(g.Currency) {
		errs = append(errs, platform.FieldError{Key: "currency", Message: "a 3-letter code like EUR"})
	}
	switch g.Mode {
	case "", model.GoogleModeLive, model.GoogleModeValidate:
	default:
		errs = append(errs, platform.FieldError{Key: "mode", Message: "live or validate"})
	}
	return errs
}

var _ platform.Platform = (*Platform)(nil)
