package capi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
)

// StageLeadEventSource is what Meta's stage events say in
// custom_data.lead_event_source: the system the lead's stages come through.
const StageLeadEventSource = "CleanAds"

// sendMargin keeps an hour of Meta's 7 days for the delivery worker: an
// event older than that could not be sent before it ages out.
const sendMargin = time.Hour

// Meta is Meta's Conversions API as a platform: a site's pixel (and, for
// Click-to-WhatsApp leads, its WhatsApp Business Account's dataset). Its
// rows go through deliver.PlatformHandler as every platform's do; what is
// Meta's own is said through platform's optional interfaces: each row is
// pre-checked before it is sent (Check), a site in mode dry_run keeps its
// events unsent (Mode), and a token the owner replaced while Meta
// refused the old one does not pause the site (NewCredentials).
type Meta struct {
	sender Sender
	now    func() time.Time
}

// Sender posts one request of events to a pixel; *Client is one.
type Sender interface {
	Send(ctx context.Context, req SendRequest) (*Response, error)
}

// NewMeta returns Meta as a platform sending with sender (nil: SendTest
// and Send fail with a plain error).
func NewMeta(sender Sender, d platform.Deps) *Meta {
	return &Meta{sender: sender, now: d.Clock()}
}

// Name implements platform.Platform.
func (*Meta) Name() string { return model.DestinationMeta }

// Label implements platform.Platform.
func (*Meta) Label() string { return "Meta" }

// On tells whether the site sends to Meta: it has a pixel, or sends its
// Click-to-WhatsApp leads' events, or its Meta mode is dry_run (the
// default), where the events are built and kept to show what Meta would
// get (the demo's site, a site being set up) without being sent.
func (*Meta) On(site *model.Site) bool {
	m := site.Settings.Meta
	return m.PixelID != "" || m.Mode == model.ModeDryRun || m.Mode == "" || site.Settings.WhatsApp.SendsCTWA()
}

// MaxAge is Meta's limit on an event's age.
func (*Meta) MaxAge() time.Duration { return model.MaxEventAge }

// BatchSize is Meta's most events per request.
func (*Meta) BatchSize() int { return MaxBatch }

// Prepare hashes a new lead's customer data once, ahead of the
// transaction that queues its events (see platform.Preparer); its phone is
// the PhoneKey intake set.
func (*Meta) Prepare(site *model.Site, lead *model.Lead) any {
	return HashContactKeys(lead, site.Settings.Country)
}

// IsCTWA tells whether a lead came from a Click-to-WhatsApp ad: its
// events go to the WhatsApp Business Account's dataset.
func IsCTWA(lead *model.Lead) bool {
	return lead.Source == model.SourceWhatsApp && lead.SourceDetail[model.DetailCTWAClid] != ""
}

// StageEventName is the name of the Meta event a kind of a lead's event is
// sent under (the pixel's, or a Click-to-WhatsApp lead's messaging
// event), and its event id; both are empty for a stage Meta has no event
// for.
func StageEventName(site *model.Site, lead *model.Lead, kind string) (name, id string) {
	if IsCTWA(lead) {
		_, name = MessagingKind(site, kind)
		if name == "" {
			return "", ""
		}
		return name, MessagingEventID(lead.ID, name)
	}
	switch stage, isStage := model.StageOfKind(kind); {
	case isStage:
		name = site.Settings.Meta.Stages[stage].Event
	case kind == model.KindLead:
		name = site.Settings.Meta.LeadEventName()
	default:
		name = site.Settings.Meta.QualifiedEventName()
	}
	if name == "" {
		return "", ""
	}
	if kind == model.KindLead {
		return name, lead.EventID
	}
	return name, QualifiedEventID(lead.ID, kind)
}

// MessagingKind says what of a Click-to-WhatsApp lead an event kind is
// (model.WhatsAppSendLead, ...) and the name the site sends it under; what
// is empty for a kind that is never sent (a test event).
func MessagingKind(site *model.Site, kind string) (what, name string) {
	w := site.Settings.WhatsApp
	switch {
	case kind == model.KindLead:
		return model.WhatsAppSendLead, w.LeadEventName()
	case kind == model.KindQualified:
		return model.WhatsAppSendQualified, w.QualifiedEventName()
	case strings.HasPrefix(kind, model.KindStage+":"):
		return model.WhatsAppSendStages, w.StageEventName(strings.TrimPrefix(kind, model.KindStage+":"), site.Settings.Meta)
	}
	return "", ""
}

// Build makes Meta's event of a lead's event: the pixel's server event,
// shaped for Conversion Leads for an Instant Form's lead and as a
// business-messaging event for a Click-to-WhatsApp lead. A stage the site
// maps to no Meta event, a site without a pixel for a website lead, and an
// event older than Meta's 7 days are not sent.
func (m *Meta) Build(_ context.Context, in platform.Input) (*platform.Event, error) {
	site, lead := in.Site, in.Lead
	now := in.Now
	if now.IsZero() {
		now = m.now()
	}
	at := in.At
	cd := map[string]any{}
	if in.FromStage != "" {
		// A stage (or the qualified event a stage stands for) comes
		// from the CRM.
		cd["event_source"], cd["lead_event_source"] = "crm", StageLeadEventSource
		if in.Value != nil {
			cd["value"] = *in.Value
		}
		if in.Currency != "" {
			cd["currency"] = in.Currency
		}
	}
	if in.Kind == model.KindQualified {
		// Meta reads the lead's status from custom_data; ours says who
		// qualified it.
		cd["lead_status"], cd["qualified_by"] = "qualified", lead.DecidedBy
	}
	source := in.ActionSource
	if lead.Source == model.SourceLeadAds {
		// Conversion Leads: the CRM's events about an Instant Form lead.
		source = SourceSystemGenerated
		if at.IsZero() {
			at = now
		}
		cd["event_source"], cd["lead_event_source"] = "crm", site.Settings.LeadAds.EventSource()
	}
	if at.IsZero() {
		at = lead.SubmittedAt
	}
	if now.Sub(at) > model.MaxEventAge-sendMargin {
		return nil, platform.TooOld("the event is more than 7 days old, and Meta takes none older")
	}
	if IsCTWA(lead) {
		return m.buildMessaging(in, at, cd)
	}
	if m := site.Settings.Meta; m.PixelID == "" && (m.Mode == model.ModeLive || m.Mode == model.ModeTest || site.Settings.WhatsApp.SendsCTWA()) {
		// A site that sends only its WhatsApp leads' events has no
		// pixel for the others.
		return nil, platform.Skip("the site has no Meta pixel")
	}
	name, id := StageEventName(site, lead, in.Kind)
	if name == "" {
		return nil, platform.Skip("the site maps this stage to no Meta event")
	}
	contact, _ := in.Prepared.(*Contact)
	ev, err := BuildLeadEvent(BuildParams{Site: site, Lead: lead, Kind: in.Kind, EventName: name, EventID: id,
		EventTime: at, ActionSource: source, CustomData: cd, Contact: contact})
	if err != nil {
		return nil, fmt.Errorf("capi: build %s event: %w", in.Kind, err)
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("capi: encode %s event: %w", in.Kind, err)
	}
	t := time.Unix(ev.EventTime, 0)
	return &platform.Event{Name: ev.EventName, ID: ev.EventID, Account: site.Settings.Meta.PixelID,
		Payload: payload, Deadline: t.Add(model.MaxEventAge)}, nil
}

// buildMessaging is Build for a Click-to-WhatsApp lead: the event goes to
// the WhatsApp Business Account's dataset, under the name the site's
// whatsapp settings give its kind, if the site sends that kind. Its event
// id comes from the lead and the event name, so each lead has at most one
// event of a name in the outbox, ever.
func (m *Meta) buildMessaging(in platform.Input, at time.Time, cd map[string]any) (*platform.Event, error) {
	w := in.Site.Settings.WhatsApp
	what, name := MessagingKind(in.Site, in.Kind)
	if what == "" || !w.Sends(what) || !model.IsMessagingEventName(name) {
		// Config validation refuses such a name; a site edited since
		// sends nothing rather than an event Meta would refuse.
		return nil, platform.Skip("the site sends no such event of its WhatsApp leads")
	}
	// event_source and lead_event_source are Conversion Leads' (website
	// and Instant Form leads): not for a conversation.
	delete(cd, "event_source")
	delete(cd, "lead_event_source")
	ev, err := BuildMessagingEvent(MessagingParams{Lead: in.Lead, EventName: name, EventTime: at,
		BusinessAccountID: w.BusinessAccountID, CustomData: cd})
	if err != nil {
		return nil, fmt.Errorf("capi: build %s event: %w", in.Kind, err)
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("capi: encode %s event: %w", in.Kind, err)
	}
	return &platform.Event{Name: ev.EventName, ID: ev.EventID, Account: w.DatasetID, Payload: payload,
		Deadline: at.Add(model.MaxEventAge)}, nil
}

// metaMode is the site's Meta mode; dry_run when none is set.
func metaMode(site *model.Site) string {
	if m := site.Settings.Meta.Mode; m != "" {
		return m
	}
	return model.ModeDryRun
}

// Mode is the site's Meta mode, dry_run when none is set (see
// platform.Moded): in dry_run its events are built, checked and kept,
// never sent.
func (*Meta) Mode(site *model.Site) string { return metaMode(site) }

// Check reads a stored row's event and checks it against Meta's rules
// (Precheck) before it is sent: an event too old for Meta wraps
// platform.ErrTooOld; any other failure carries the rule as the row's
// response, {"precheck":{"rule":...,"detail":...}} (see platform.Checker).
// The event is read by readEvent, a scan of the fields Precheck reads,
// and by json.Unmarshal only when readEvent is unsure of it: the same
// verdicts, a quarter of the instructions.
func (*Meta) Check(_ *model.Site, d *model.Delivery, now time.Time) error {
	var ev Event
	var err error
	if !readEvent(d.Payload, &ev) {
		// Not sure of it without encoding/json, which decides and words
		// any error.
		ev = Event{}
		if jerr := json.Unmarshal(d.Payload, &ev); jerr != nil {
			err = &PrecheckError{Rule: "payload", Detail: "stored payload is not an event: " + jerr.Error()}
		}
	}
	if err == nil {
		if err = Precheck(&ev, now); err == nil {
			return nil
		}
	}
	if pe := (*PrecheckError)(nil); errors.As(err, &pe) && pe.Rule == RuleEventTimeOld {
		return tooOld{pe}
	}
	return &platform.Failure{Class: platform.Refused, Err: err, Response: precheckJSON(err)}
}

// tooOld is a pre-check's refusal of an event older than Meta takes: the
// row expires, with the pre-check's words.
type tooOld struct{ *PrecheckError }

func (e tooOld) Is(target error) bool { return target == platform.ErrTooOld }
func (e tooOld) Unwrap() error        { return e.PrecheckError }

// NewCredentials tells whether the site's access token changed (see
// platform.Rekeyer): Meta's refusal of the old one then pauses nothing.
func (*Meta) NewCredentials(was, now *model.Site) bool { return was.AccessToken != now.AccessToken }

// Send posts rows of one pixel (or dataset) to Meta in the site's mode,
// splitting a refused request in halves until each refused event is alone
// (it fails with Meta's words) while the rest go through. A refused token
// pauses; a rate limit is throttled; anything else transient. A site in
// dry run sends nothing: its rows are accepted in mode dry_run.
func (m *Meta) Send(ctx context.Context, site *model.Site, rows []*model.Delivery) ([]platform.Outcome, error) {
	out := make([]platform.Outcome, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	mode := metaMode(site)
	switch {
	case mode == model.ModeDryRun:
		for i := range out {
			out[i] = platform.Outcome{Accepted: true, Mode: mode}
		}
		return out, nil
	case m.sender == nil:
		return nil, &platform.Failure{Class: platform.Transient, Words: "no Meta client is configured"}
	case site.AccessToken == "":
		return nil, &platform.Failure{Class: platform.Paused, Words: "no Meta access token is set for the site"}
	case mode == model.ModeTest && site.Settings.Meta.TestEventCode == "":
		return nil, &platform.Failure{Class: platform.Paused, Words: "mode test needs the site's test_event_code"}
	case mode != model.ModeLive && mode != model.ModeTest:
		return nil, &platform.Failure{Class: platform.Paused, Words: fmt.Sprintf("unknown delivery mode %q", mode)}
	}
	// A pixel change leaves queued events with the pixel they were made
	// for; a row without one goes to the site's.
	pixel := rows[0].PixelID
	if pixel == "" {
		pixel = site.Settings.Meta.PixelID
	}
	req := SendRequest{PixelID: pixel, AccessToken: site.AccessToken}
	if mode == model.ModeTest {
		req.TestEventCode = site.Settings.Meta.TestEventCode
	}
	return out, m.send(ctx, req, rows, out, mode)
}

func (m *Meta) send(ctx context.Context, req SendRequest, rows []*model.Delivery, out []platform.Outcome, mode string) error {
	req.Events = make([]json.RawMessage, len(rows))
	for i, d := range rows {
		req.Events[i] = d.Payload
	}
	resp, err := m.sender.Send(ctx, req)
	if err == nil {
		for i := range rows {
			out[i] = platform.Outcome{Accepted: true, Response: resp.Raw, Mode: mode}
		}
		return nil
	}
	switch Classify(err) {
	case ClassAuth:
		return &platform.Failure{Class: platform.Paused, Words: "Meta refused the access token: " + err.Error(), Err: err,
			Response: ErrorJSON(err)}
	case ClassThrottled:
		return &platform.Failure{Class: platform.Throttled, RetryAfter: RetryAfter(err), Err: err, Response: ErrorJSON(err)}
	case ClassRejected:
		if len(rows) == 1 {
			out[0] = platform.Outcome{Err: err, Response: ErrorJSON(err)}
			return nil
		}
		h := len(rows) / 2
		if err := m.send(ctx, req, rows[:h], out[:h], mode); err != nil {
			return err
		}
		return m.send(ctx, req, rows[h:], out[h:], mode)
	}
	return &platform.Failure{Class: platform.Transient, RetryAfter: RetryAfter(err), Err: err, Response: ErrorJSON(err)}
}

// ErrorJSON is Meta's error, or ours, as kept in a row's response:
// {"error":{"message":...,"class":...}} with Meta's status, codes and
// fbtrace_id when Meta answered.
func ErrorJSON(err error) json.RawMessage {
	if err == nil {
		return nil
	}
	e := map[string]any{"message": err.Error(), "class": Classify(err).String()}
	var ae *APIError
	if errors.As(err, &ae) {
		e["status"], e["code"], e["error_subcode"] = ae.Status, ae.Code, ae.Subcode
		e["message"], e["type"], e["fbtrace_id"] = ae.Message, ae.Type, ae.FBTraceID
		if ae.UserMsg != "" {
			e["error_user_msg"] = ae.UserMsg
		}
		if ae.IsTransient {
			e["is_transient"] = true
		}
	}
	b, _ := json.Marshal(map[string]any{"error": e})
	return b
}

// precheckJSON is a pre-check's failure as kept in a row's response.
func precheckJSON(err error) json.RawMessage {
	var pe *PrecheckError
	if !errors.As(err, &pe) {
		return ErrorJSON(err)
	}
	b, _ := json.Marshal(map[string]any{"precheck": map[string]string{"rule": pe.Rule, "detail": pe.Detail}})
	return b
}

// Redact removes the clear values from a Meta event (user_data's clear
// keys and the page URL); the hashed match keys stay. A payload that is
// not an event object becomes {}.
func (*Meta) Redact(p json.RawMessage) json.RawMessage {
	var ev map[string]json.RawMessage
	if err := json.Unmarshal(p, &ev); err != nil {
		return json.RawMessage(`{}`)
	}
	delete(ev, "event_source_url")
	if raw, ok := ev["user_data"]; ok {
		var ud map[string]json.RawMessage
		if err := json.Unmarshal(raw, &ud); err == nil {
			for _, k := range clearUserData {
				delete(ud, k)
			}
			b, _ := json.Marshal(ud)
			ev["user_data"] = b
		} else {
			delete(ev, "user_data")
		}
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

// Shrink keeps what the owner's view of a finished Meta event needs: its
// name, time, action source and messaging channel, the value, currency and
// sources of its custom data, and the names of the match keys it carried
// (match_keys), not their values. A payload that is not an event becomes {}.
func (*Meta) Shrink(p json.RawMessage) json.RawMessage {
	var ev map[string]json.RawMessage
	if json.Unmarshal(p, &ev) != nil || ev["event_name"] == nil {
		return json.RawMessage(`{}`)
	}
	kept := map[string]any{}
	for _, k := range []string{"event_name", "event_time", "action_source", "messaging_channel"} {
		if v, ok := ev[k]; ok {
			kept[k] = v
		}
	}
	var custom map[string]json.RawMessage
	if json.Unmarshal(ev["custom_data"], &custom) == nil {
		c := map[string]json.RawMessage{}
		for _, k := range []string{"value", "currency", "lead_event_source", "event_source"} {
			if v, ok := custom[k]; ok {
				c[k] = v
			}
		}
		if len(c) > 0 {
			kept["custom_data"] = c
		}
	}
	// An event shrunk before has its keys' names only; a whole one its
	// user_data, of which the keys that hold something are kept: the
	// coverage counters' recount reads these names as keys it carried
	// (model.CoverageCounts).
	var keys []string
	_ = json.Unmarshal(ev["match_keys"], &keys)
	var ud map[string]json.RawMessage
	if json.Unmarshal(ev["user_data"], &ud) == nil {
		for k, v := range ud {
			if model.MatchKeyPresent(v) {
				keys = append(keys, k)
			}
		}
	}
	return platform.Shrunk(kept, keys)
}

// clearUserData are the values a server event carries unhashed: the
// visitor's IP and user agent, the click ids (fbc, fbp, a
// Click-to-WhatsApp ctwa_clid) and a Lead Ads lead_id, each of which names
// the person at Meta.
var clearUserData = []string{"client_ip_address", "client_user_agent", "fbc", "fbp", "ctwa_clid", "lead_id"}

// Fields are none: Meta's settings have their own section of the site page
// (pixel, mode, test event code, access token), and the config's meta block.
func (*Meta) Fields() []platform.Field { return nil }

// Validate checks what Build and Send need of Meta's settings.
func (*Meta) Validate(site *model.Site) []platform.FieldError {
	m := site.Settings.Meta
	var errs []platform.FieldError
	for _, r := range m.PixelID {
		if r < '0' || r > '9' {
			errs = append(errs, platform.FieldError{Key: "pixel_id", Message: "a pixel id is digits only"})
			break
		}
	}
	switch m.Mode {
	case "", model.ModeLive, model.ModeTest, model.ModeDryRun:
	default:
		errs = append(errs, platform.FieldError{Key: "mode", Message: "want live, test or dry_run"})
	}
	if m.Mode == model.ModeTest && m.TestEventCode == "" {
		errs = append(errs, platform.FieldError{Key: "test_event_code", Message: "mode test needs the test event code from Events Manager"})
	}
	return errs
}

var (
	_ platform.Platform = (*Meta)(nil)
	_ platform.Checker  = (*Meta)(nil)
	_ platform.Moded    = (*Meta)(nil)
	_ platform.Rekeyer  = (*Meta)(nil)
)

// SendTest sends one made-up lead event for the site to Meta at once,
// with the site's test_event_code, so the advertiser sees it in Events
// Manager's Test Events tab before going live. Nothing is stored. An
// error from Meta comes back with the result (what was sent) and is an
// *APIError.
func (m *Meta) SendTest(ctx context.Context, site *model.Site) (*platform.TestResult, error) {
	s := site.Settings.Meta
	switch {
	case m.sender == nil:
		return nil, ErrNoSender
	case s.TestEventCode == "":
		return nil, model.Invalid("test_event_code", "the site has none: copy it from Events Manager's Test Events tab into meta.test_event_code")
	case s.PixelID == "":
		return nil, model.Invalid("pixel_id", "the site has no pixel id")
	case site.AccessToken == "":
		return nil, model.Invalid("access_token", "the site has no Meta access token")
	}
	now := m.now().UTC()
	lead := platform.SampleLead(site, now)
	ev, err := BuildLeadEvent(BuildParams{Site: site, Lead: lead, Kind: model.KindLead,
		CustomData: map[string]any{"lead_event_source": "CleanAds send-test"}})
	if err != nil {
		return nil, err
	}
	if err := Precheck(&ev, now); err != nil {
		return nil, err
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("capi: encode test event: %w", err)
	}
	res := &platform.TestResult{Account: s.PixelID, Code: s.TestEventCode, Event: payload}
	resp, err := m.sender.Send(ctx, SendRequest{PixelID: s.PixelID, AccessToken: site.AccessToken,
		TestEventCode: s.TestEventCode, Events: []json.RawMessage{payload}})
	if err != nil {
		return res, err
	}
	res.Answer = resp.Raw
	return res, nil
}

// ErrNoSender is returned by SendTest when Meta has no client.
var ErrNoSender = errors.New("capi: no Meta client configured")
