package app

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
	"github.com/cleanads/cleanads/internal/store"
)

// TypeStage is the LeadEventInput type of a CRM stage.
const TypeStage = "stage"

// LeadEventSource is what stage events say in custom_data.lead_event_source:
// the system the lead's stages come through.
const LeadEventSource = "CleanAds"

// stageSendMargin keeps an hour of Meta's 7 days for the delivery worker:
// a stage older than that could not be sent before it ages out.
const stageSendMargin = time.Hour

// stageActionSources are the action sources a stage may claim: the CRM
// itself, a call the team logged, a chat.
var stageActionSources = map[string]bool{
	capi.SourceSystemGenerated: true, capi.SourcePhoneCall: true, capi.SourceChat: true,
}

// stageCall is a stage call checked against the site's settings.
type stageCall struct {
	name     string
	ev       model.StageEvent
	at       time.Time
	value    *float64
	currency string
	source   string
	// shared is set when the stage's Meta event is the site's qualified
	// event: it is that event (same id), so Meta never counts it twice.
	shared bool
}

// checkStage validates a stage call: a stage the site maps, a value of 0 or
// more with a 3-letter currency, a known action source, an RFC 3339 time.
// Whether the time is inside Meta's window is checked later, so that a
// refusal can be recorded in the lead's history.
func (s *Service) checkStage(site *model.Site, in *LeadEventInput, now time.Time) (*stageCall, error) {
	stages := site.Settings.Meta.Stages
	if in.DurationS != 0 {
		return nil, model.Invalid("duration_s", `goes with "type": "call" only`)
	}
	name := strings.TrimSpace(in.Stage)
	if name == "" {
		return nil, model.Invalid("stage", "required with \"type\": \"stage\": "+stageNames(site))
	}
	ev, ok := stages[name]
	if !ok {
		// CRMs write stage names as they like: "Won" is "won".
		for k, v := range stages {
			if strings.EqualFold(k, name) {
				name, ev, ok = k, v, true
				break
			}
		}
	}
	if !ok {
		return nil, model.Invalid("stage", fmt.Sprintf("unknown stage %q: %s", in.Stage, stageNames(site)))
	}
	c := &stageCall{name: name, ev: ev, at: now, source: capi.SourceSystemGenerated,
		shared: ev.Event == site.Settings.Meta.QualifiedEventName()}
	switch {
	case in.Value != nil:
		if math.IsNaN(*in.Value) || math.IsInf(*in.Value, 0) || *in.Value < 0 {
			return nil, model.Invalid("value", "must be a number of 0 or more")
		}
		c.value = in.Value
	case ev.Value > 0:
		v := ev.Value
		c.value = &v
	}
	c.currency = strings.ToUpper(strings.TrimSpace(in.Currency))
	if c.currency == "" {
		c.currency = strings.ToUpper(ev.Currency)
	}
	if c.currency != "" && !model.IsCurrencyCode(c.currency) {
		return nil, model.Invalid("currency", fmt.Sprintf("want a 3-letter ISO 4217 code like EUR, got %q", in.Currency))
	}
	if c.value != nil && c.currency == "" {
		return nil, model.Invalid("currency", "required with a value: a 3-letter code like EUR (or set the stage's currency in meta.stages)")
	}
	if in.ActionSource != "" {
		if !stageActionSources[in.ActionSource] {
			return nil, model.Invalid("action_source", fmt.Sprintf("want system_generated, phone_call or chat, got %q", in.ActionSource))
		}
		c.source = in.ActionSource
	}
	if in.At != "" {
		t, err := time.Parse(time.RFC3339, in.At)
		if err != nil {
			return nil, model.Invalid("at", "want an RFC 3339 time like 2026-12-02T15:04:05Z")
		}
		c.at = t.UTC()
	}
	return c, nil
}

// stageNames says which stages a site has, for error messages.
func stageNames(site *model.Site) string {
	if len(site.Settings.Meta.Stages) == 0 {
		return fmt.Sprintf("site %q has no stages: map them in its meta.stages, e.g. {won: {event: Purchase}}", site.ID)
	}
	names := make([]string, 0, len(site.Settings.Meta.Stages))
	for k := range site.Settings.Meta.Stages {
		names = append(names, k)
	}
	sort.Strings(names)
	return fmt.Sprintf("site %q has %s", site.ID, strings.Join(names, ", "))
}

// StageTimeLimit is how long ago a stage may have happened and still be
// recorded for the site: the longest window of the platforms the site sends
// stages to (Meta takes events of the last 7 days; Google Ads takes a click's
// conversions for 90 days after the click), less the hour kept for the
// delivery worker. It is the one place that says so: the API's stage call,
// the admin's stage form and the CSV import are all held to it. Within it,
// each platform still takes only what its own window allows (a stage 30
// days old goes to Google alone, see googleTakesLate).
func StageTimeLimit(site *model.Site) time.Duration {
	limit := model.MaxEventAge
	if g := site.Settings.Google; g != nil && (len(g.Stages) > 0 || g.QualifiedConversionAction != "") {
		limit = max(limit, model.GoogleMaxEventAge)
	}
	return limit - stageSendMargin
}

// stageTimeProblem says why a stage at the given time cannot be recorded for
// the site, in plain words, or "": it is in the future (beyond the clock
// skew Meta allows), or further back than StageTimeLimit.
func stageTimeProblem(site *model.Site, at, now time.Time) string {
	switch {
	case at.After(now.Add(capi.MaxClockSkew)):
		return "is in the future"
	case now.Sub(at) > StageTimeLimit(site):
		days := int((StageTimeLimit(site) + stageSendMargin) / (24 * time.Hour))
		who := "Meta takes no older event"
		if days > int(model.MaxEventAge/(24*time.Hour)) {
			who = "neither Meta (7 days) nor Google Ads (90 days after the click) takes an older one"
		}
		return fmt.Sprintf("is more than %d days ago: %s, so this stage is recorded but never sent", days, who)
	}
	return ""
}

// stageOutsideWindow says why a stage's time cannot go to Meta, or "".
func stageOutsideWindow(at, now time.Time) string {
	switch {
	case at.After(now.Add(capi.MaxClockSkew)):
		return "is in the future"
	case now.Sub(at) > model.MaxEventAge-stageSendMargin:
		return "is more than 7 days ago: Meta takes no older event, so this stage is recorded but never sent"
	}
	return ""
}

// addStage records a CRM stage of a lead and queues its Meta event, once per
// lead and stage: a repeated call changes nothing and answers the lead as it
// stands. A stage outside Meta's 7-day window is recorded in the lead's
// history and refused, unless Google still takes it (googleTakesLate): it
// then goes to Google alone. A stage is evidence that the person is real: a lead
// in review or judged junk by the rules becomes clean, decided by the CRM,
// and its qualified event goes before the stage's. A lead the owner called
// junk stays junk: the stage is recorded and held back from Meta until the
// owner changes the word.
func (s *Service) addStage(ctx context.Context, site *model.Site, id model.LeadID, in *LeadEventInput) (*model.Lead, error) {
	now := s.now().UTC()
	c, err := s.checkStage(site, in, now)
	if err != nil {
		return nil, err
	}
	var lead *model.Lead
	var refused error
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if lead, err = siteLead(ctx, tx, site, id); err != nil {
			return err
		}
		return s.applyStage(ctx, tx, site, lead, c, now, &refused)
	})
	if err != nil {
		return nil, err
	}
	if refused != nil {
		return nil, refused
	}
	s.wake()
	return lead, nil
}

// HeldOwnerJunk is the "held" value of a stage's history entry when the
// stage was kept from Meta because the owner had called the lead junk.
const HeldOwnerJunk = "owner_junk"

// applyStage does addStage's work inside tx. A refusal is put in *refused
// and the transaction still commits, so the history keeps it.
func (s *Service) applyStage(ctx context.Context, tx *store.Tx, site *model.Site, lead *model.Lead, c *stageCall, now time.Time, refused *error) error {
	hist := map[string]any{"stage": c.name, "at": c.at.Format(time.RFC3339), "event_name": c.ev.Event}
	// A stage already recorded answers as it stands, whatever this call's
	// time or value: it is a repeat, not a new stage.
	if has, err := s.hasStage(ctx, tx, lead.ID, c.name); err != nil || has {
		return err
	}
	kind := model.KindStage + ":" + c.name
	if c.shared {
		kind = model.KindQualified
	}
	// Too old for Meta is not too old for Google, which takes click
	// conversions for 90 days: a deal won after a week still teaches
	// Google's bidding, so such a stage is recorded and sent there only.
	why := stageTimeProblem(site, c.at, now)
	if why == "" {
		why = stageOutsideWindow(c.at, now)
	}
	googleOnly := why != "" && googleTakesLate(site, lead, kind, c.at, now)
	if why != "" && !googleOnly {
		hist["refused"] = "at " + why
		*refused = model.Invalid("at", fmt.Sprintf("%s %s", c.at.Format(time.RFC3339), why))
		return tx.HistoryInsert(ctx, &model.HistoryEntry{ID: s.ids.New("h_", now), LeadID: lead.ID, At: now,
			Kind: model.HistoryStage, Data: hist})
	}
	if googleOnly {
		hist["meta"] = "not sent: the stage is more than 7 days ago, too old for Meta; sent to Google Ads only"
	}
	// A Click-to-WhatsApp lead's stage goes under its messaging name; one
	// sent under the qualified event's name is that event, as a stage
	// mapped to the site's qualified event is.
	name, id := stageEvent(site, lead, eventSpec{Kind: kind, EventName: c.ev.Event})
	if qname, qid := stageEvent(site, lead, eventSpec{Kind: model.KindQualified}); !c.shared && id == qid {
		c.shared, kind, name = true, model.KindQualified, qname
	}
	hist["event_name"] = name
	st := &model.LeadStage{LeadID: lead.ID, SiteID: lead.SiteID, Stage: c.name, At: c.at, EventName: name,
		EventID: id, Value: c.value, Currency: c.currency, ActionSource: c.source, CreatedAt: now}
	spec := stageSpec(st, kind)
	// The stage's entry sorts before the verdict change it causes.
	hid := s.ids.New("h_", now)
	hist["event_id"] = st.EventID
	hist["action_source"] = c.source
	if c.value != nil {
		hist["value"] = *c.value
	}
	if c.currency != "" {
		hist["currency"] = c.currency
	}
	held := lead.OwnerSaidJunk()
	queued := false
	if !held && lead.Verdict != model.VerdictClean {
		// The CRM met the person: the lead is real. Its qualified event
		// (the stage's own when the stage is mapped to it) goes first.
		d := lead.Decision
		d.Verdict, d.DecidedBy = model.VerdictClean, model.DecidedByCRM
		evd := map[string]any{"stage": c.name, "at": c.at.Format(time.RFC3339)}
		d.Reasons = append(append(make([]model.Reason, 0, len(d.Reasons)+1), d.Reasons...), model.Reason{
			Code: qualify.CodeCRMQualified, Evidence: evd, Message: qualify.Message(qualify.CodeCRMQualified, "en", evd)})
		var q eventSpec
		if c.shared {
			q = spec
		}
		var err error
		if queued, err = s.setDecision(ctx, tx, site, lead, d, q, now); err != nil {
			return err
		}
		queued = queued && c.shared
	}
	inserted, err := tx.LeadStageInsert(ctx, st)
	if err != nil || !inserted {
		return err
	}
	switch {
	case held:
		hist["held"] = HeldOwnerJunk
	case googleOnly:
		if queued, err = s.queueGoogleOnly(ctx, tx, site, lead, spec, now); err != nil {
			return err
		}
	case !queued:
		// For a stage that is the qualified event of a lead already clean,
		// the qualified event is in the outbox already and this adds
		// nothing.
		if queued, err = s.queueEvent(ctx, tx, site, lead, spec, now); err != nil {
			return err
		}
		if !queued && c.shared {
			hist["note"] = "the lead's qualified event already stands for this stage: it is not sent twice"
		}
	}
	hist["queued"] = queued
	return tx.HistoryInsert(ctx, &model.HistoryEntry{ID: hid, LeadID: lead.ID, At: now,
		Kind: model.HistoryStage, Data: hist})
}

// stageSpec is the Meta event of a recorded stage of the given kind (a
// stage mapped to the site's qualified event is that event, at the stage's
// time).
func stageSpec(st *model.LeadStage, kind string) eventSpec {
	spec := eventSpec{Kind: kind, EventName: st.EventName, EventTime: st.At,
		ActionSource: st.ActionSource, CustomData: map[string]any{"event_source": "crm", "lead_event_source": LeadEventSource}}
	if spec.ActionSource == "" {
		// Stages recorded before their action source was kept.
		spec.ActionSource = capi.SourceSystemGenerated
	}
	if st.Value != nil {
		spec.CustomData["value"] = *st.Value
	}
	if st.Currency != "" {
		spec.CustomData["currency"] = st.Currency
	}
	return spec
}

// storedStageKind is the event kind a recorded stage was queued as: the
// qualified event when it was recorded with the qualified event's id (a
// stage mapped to it), else the stage's own.
func storedStageKind(site *model.Site, lead *model.Lead, st *model.LeadStage) string {
	if _, id := stageEvent(site, lead, eventSpec{Kind: model.KindQualified}); id == st.EventID {
		return model.KindQualified
	}
	return model.KindStage + ":" + st.Stage
}

// releaseHeld sends what a junk verdict held back, now that the lead is
// clean: its events cancelled when it was called junk, and the stages
// recorded while it was, each while still inside Meta's window. Event ids
// are the lead's and the kind's, so nothing goes twice. It returns how many
// events it queued.
func (s *Service) releaseHeld(ctx context.Context, tx *store.Tx, site *model.Site, lead *model.Lead, now time.Time) (int, error) {
	n, err := tx.DeliveryRequeueCancelled(ctx, lead.ID, cancelledJunk, now, now.Add(stageSendMargin))
	if err != nil {
		return 0, err
	}
	stages, err := tx.LeadStagesByLead(ctx, lead.ID)
	if err != nil {
		return 0, err
	}
	for i := range stages {
		kind := storedStageKind(site, lead, &stages[i])
		queue := s.queueEvent
		if stageOutsideWindow(stages[i].At, now) != "" {
			if !googleTakesLate(site, lead, kind, stages[i].At, now) {
				continue
			}
			queue = s.queueGoogleOnly
		}
		ok, err := queue(ctx, tx, site, lead, stageSpec(&stages[i], kind), now)
		if err != nil {
			return 0, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// googleTakesLate tells whether a stage at the given time, too old for
// Meta, is one Google still takes: the site sends the kind to Google, the
// stage is not in the future, and the lead came within Google's 90 days
// (with the margin Meta's window keeps for the delivery worker).
func googleTakesLate(site *model.Site, lead *model.Lead, kind string, at, now time.Time) bool {
	if site.Settings.Google.ConversionAction(kind) == "" || at.After(now.Add(capi.MaxClockSkew)) {
		return false
	}
	since := lead.SubmittedAt
	if since.IsZero() || since.After(at) {
		since = at
	}
	return now.Sub(since) <= model.GoogleMaxEventAge-stageSendMargin
}

// hasStage tells whether the lead already reached the stage.
func (s *Service) hasStage(ctx context.Context, tx *store.Tx, id model.LeadID, stage string) (bool, error) {
	list, err := tx.LeadStagesByLead(ctx, id)
	if err != nil {
		return false, err
	}
	for _, st := range list {
		if st.Stage == stage {
			return true, nil
		}
	}
	return false, nil
}

// LeadRef names a lead the way a CRM knows it; the first key set that
// matches a lead of the site wins, in the order of the fields.
type LeadRef struct {
	ID         string `json:"id"`
	EventID    string `json:"event_id"`
	ExternalID string `json:"external_id"`
	LeadAdsID  string `json:"lead_id"`
	Email      string `json:"email"`
	Phone      string `json:"phone"`
	// WhatsAppUserID is the person's WhatsApp business-scoped user id, as
	// a WhatsApp inbox names a Click-to-WhatsApp lead.
	WhatsAppUserID string `json:"whatsapp_user_id"`
}

// FindLead returns the site's newest lead named by ref. E-mail and phone
// are normalised as leads store them, so any formatting finds the lead.
func (s *Service) FindLead(ctx context.Context, site *model.Site, ref LeadRef) (*model.Lead, error) {
	var keys []store.LeadLookup
	add := func(k store.LeadLookup) { keys = append(keys, k) }
	if v := strings.TrimSpace(ref.ID); v != "" {
		add(store.LeadLookup{ID: model.LeadID(v)})
	}
	if v := strings.TrimSpace(ref.EventID); v != "" {
		add(store.LeadLookup{EventID: v})
	}
	if v := strings.TrimSpace(ref.ExternalID); v != "" {
		add(store.LeadLookup{ExternalID: v})
	}
	if v := strings.TrimSpace(ref.LeadAdsID); v != "" {
		add(store.LeadLookup{LeadAdsID: v})
	}
	if ref.Email != "" {
		k, err := capi.NormalizeEmail(ref.Email)
		if err != nil {
			return nil, model.Invalid("lead.email", "not an e-mail address")
		}
		add(store.LeadLookup{EmailKey: k})
	}
	if ref.Phone != "" {
		k, err := capi.NormalizePhone(ref.Phone, site.Settings.Country)
		if err != nil {
			return nil, model.Invalid("lead.phone", "not a phone number")
		}
		add(store.LeadLookup{PhoneKey: k})
	}
	wa := strings.TrimSpace(ref.WhatsAppUserID)
	if len(keys) == 0 && wa == "" {
		return nil, model.Invalid("lead", "name the lead by id, event_id, external_id, lead_id, email, phone or whatsapp_user_id")
	}
	for _, k := range keys {
		l, err := s.db.LeadFind(ctx, site.ID, k)
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, model.ErrNotFound) {
			return nil, err
		}
	}
	if wa != "" {
		l, err := s.leadByWhatsAppUser(ctx, site, wa)
		if !errors.Is(err, model.ErrNotFound) {
			return l, err
		}
	}
	return nil, fmt.Errorf("no lead of site %s matches: %w", site.ID, model.ErrNotFound)
}

// AddEvent records an event about a lead named the way a CRM knows it
// (POST /v1/events): a stage or evidence, as AddLeadEvent does.
func (s *Service) AddEvent(ctx context.Context, site *model.Site, ref LeadRef, in *LeadEventInput) (*model.Lead, error) {
	lead, err := s.FindLead(ctx, site, ref)
	if err != nil {
		return nil, err
	}
	return s.AddLeadEvent(ctx, site, lead.ID, in)
}
