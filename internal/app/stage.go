package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/google"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
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
	stages := s.siteStages(site)
	if in.DurationS != 0 {
		return nil, model.Invalid("duration_s", `goes with "type": "call" only`)
	}
	name := strings.TrimSpace(in.Stage)
	if name == "" {
		return nil, model.Invalid("stage", "required with \"type\": \"stage\": "+s.stageNames(site))
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
		return nil, model.Invalid("stage", fmt.Sprintf("unknown stage %q: %s", in.Stage, s.stageNames(site)))
	}
	c := &stageCall{name: name, ev: ev, at: now, source: capi.SourceSystemGenerated,
		shared: ev.Event != "" && ev.Event == site.Settings.Meta.QualifiedEventName()}
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

// siteStages are the stages the site maps to an event of any platform:
// Meta's (with their value rules), and those only another platform maps.
func (s *Service) siteStages(site *model.Site) map[string]model.StageEvent {
	out := make(map[string]model.StageEvent, len(site.Settings.Meta.Stages))
	for k, v := range site.Settings.Meta.Stages {
		out[k] = v
	}
	for _, p := range s.platforms {
		if p.Name() == model.DestinationMeta || !p.On(site) {
			continue
		}
		for _, name := range platformStages(site, p) {
			if _, ok := out[name]; !ok {
				out[name] = model.StageEvent{}
			}
		}
	}
	return out
}

// platformStages are the stages a platform's settings map: Google's
// stages, or any stages field of a platform's settings document.
func platformStages(site *model.Site, p platform.Platform) []string {
	var names []string
	if p.Name() == model.DestinationGoogle {
		if g := google.Settings(site); g != nil {
			for k := range g.Stages {
				names = append(names, k)
			}
		}
		return names
	}
	var doc map[string]json.RawMessage
	if ok, err := platform.Decode(site, p.Name(), &doc); !ok || err != nil {
		return nil
	}
	for _, f := range p.Fields() {
		var m map[string]string
		if f.Kind == platform.FieldStages && json.Unmarshal(doc[f.Key], &m) == nil {
			for k := range m {
				names = append(names, k)
			}
		}
	}
	return names
}

// HasStage tells whether name is one of the site's stages (mapped to an
// event of any platform): what a lead source's stage mapping must name,
// or the stage it records is refused.
func (s *Service) HasStage(site *model.Site, name string) bool {
	_, ok := s.siteStages(site)[name]
	return ok
}

// stageNames says which stages a site has, for error messages.
func (s *Service) stageNames(site *model.Site) string {
	stages := s.siteStages(site)
	if len(stages) == 0 {
		return fmt.Sprintf("site %q has no stages: add them in the admin's Stages section of the site (or its meta.stages), e.g. won = Purchase, or in another platform's settings", site.ID)
	}
	names := make([]string, 0, len(stages))
	for k := range stages {
		names = append(names, k)
	}
	sort.Strings(names)
	return fmt.Sprintf("site %q has %s", site.ID, strings.Join(names, ", "))
}

// StageTimeLimit is how long ago a stage may have happened and still be
// recorded for the site: the longest window of the platforms the site has
// on (Meta 7 days, Google Ads 90 days after the click, TikTok 28 days for
// CRM events), less the hour kept for the delivery worker. The API's stage
// call, the admin's stage form and the CSV import are held to it; within
// it each platform takes only what its own window allows.
func (s *Service) StageTimeLimit(site *model.Site) time.Duration {
	limit := model.MaxEventAge
	for _, p := range s.platforms {
		if p.On(site) {
			limit = max(limit, p.MaxAge())
		}
	}
	return limit - stageSendMargin
}

// addStage records a CRM stage of a lead and queues its event for every
// platform the site has on, once per lead and stage: a repeated call
// changes nothing and answers the lead as it stands. Each platform takes a
// stage within its own window (Meta's 7 days, Google's 90 from the
// click); a stage no platform of the site takes any more, or one in the
// future, is recorded in the lead's history and refused. A stage is evidence that the person is real: a lead
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
	if c.at.After(now.Add(capi.MaxClockSkew)) {
		return s.refuseStage(ctx, tx, lead, hist, c, "is in the future", now, refused)
	}
	stageSpecNow := eventSpec{Kind: kind, EventTime: c.at, ActionSource: c.source, Value: c.value, Currency: c.currency, FromStage: c.name}
	if old, err := s.tooOldForAll(ctx, site, lead, stageSpecNow, now); err != nil {
		return err
	} else if old != "" {
		return s.refuseStage(ctx, tx, lead, hist, c, "is too old: "+old, now, refused)
	}
	// A Click-to-WhatsApp lead's stage goes under its messaging name; one
	// sent under the qualified event's name is that event, as a stage
	// mapped to the site's qualified event is.
	name, id := stageEvent(site, lead, kind, c.name)
	if qname, qid := capi.StageEventName(site, lead, model.KindQualified); !c.shared && qid != "" && id == qid {
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
	if err := s.queueHooks(ctx, tx, lead, []hookEvent{{Type: model.HookStage, Key: "stage:" + st.Stage, Stage: st}}, now); err != nil {
		return err
	}
	switch {
	case held:
		hist["held"] = HeldOwnerJunk
	case !queued:
		// For a stage that is the qualified event of a lead already clean,
		// the qualified event is in the outbox already and this adds
		// nothing.
		r, err := s.queueEvents(ctx, tx, site, lead, []eventSpec{spec}, now)
		if err != nil {
			return err
		}
		queued = r.Rows > 0
		if n := r.note(); n != "" {
			hist["note"] = n
		}
		if !queued && c.shared {
			hist["note"] = "the lead's qualified event already stands for this stage: it is not sent twice"
		}
	}
	hist["queued"] = queued
	return tx.HistoryInsert(ctx, &model.HistoryEntry{ID: hid, LeadID: lead.ID, At: now,
		Kind: model.HistoryStage, Data: hist})
}

// stageSpec is the event of a recorded stage of the given kind (a stage
// mapped to the site's qualified event is that event, at the stage's
// time).
func stageSpec(st *model.LeadStage, kind string) eventSpec {
	spec := eventSpec{Kind: kind, EventTime: st.At, ActionSource: st.ActionSource, Value: st.Value,
		Currency: st.Currency, FromStage: st.Stage}
	if spec.ActionSource == "" {
		// Stages recorded before their action source was kept.
		spec.ActionSource = capi.SourceSystemGenerated
	}
	return spec
}

// stageEvent is the name and id a stage is recorded with: its Meta
// event's (a Click-to-WhatsApp lead's messaging event's), else the
// stage's own name and the id every platform derives from the lead and
// the kind.
func stageEvent(site *model.Site, lead *model.Lead, kind, stage string) (name, id string) {
	if name, id = capi.StageEventName(site, lead, kind); name != "" {
		return name, id
	}
	return stage, capi.QualifiedEventID(lead.ID, kind)
}

// refuseStage records in the lead's history that a stage was refused, and
// why; the transaction still commits.
func (s *Service) refuseStage(ctx context.Context, tx *store.Tx, lead *model.Lead, hist map[string]any, c *stageCall, why string, now time.Time, refused *error) error {
	hist["refused"] = "at " + why
	*refused = model.Invalid("at", fmt.Sprintf("%s %s", c.at.Format(time.RFC3339), why))
	return tx.HistoryInsert(ctx, &model.HistoryEntry{ID: s.ids.New("h_", now), LeadID: lead.ID, At: now,
		Kind: model.HistoryStage, Data: hist})
}

// tooOldForAll says, in the platforms' words, why no platform of the site
// that would take the event takes it any more ("" when one still does, or
// none would take it whatever its age).
func (s *Service) tooOldForAll(ctx context.Context, site *model.Site, lead *model.Lead, spec eventSpec, now time.Time) (string, error) {
	var old []string
	for _, p := range s.platforms {
		if !p.On(site) {
			continue
		}
		in := platform.Input{Site: site, Lead: lead, Kind: spec.Kind, At: spec.EventTime, Value: spec.Value,
			Currency: spec.Currency, ActionSource: spec.ActionSource, FromStage: spec.FromStage, Now: now}
		_, err := p.Build(ctx, in)
		switch {
		case err == nil:
			return "", nil
		case errors.Is(err, platform.ErrTooOld):
			old = append(old, fmt.Sprintf("%s takes no event older than %d days", p.Label(), int(p.MaxAge().Hours()/24)))
		case errors.Is(err, platform.ErrSkip):
		default:
			return "", err
		}
	}
	return strings.Join(old, "; "), nil
}

// storedStageKind is the event kind a recorded stage was queued as: the
// qualified event when it was recorded with the qualified event's id (a
// stage mapped to it), else the stage's own.
func storedStageKind(site *model.Site, lead *model.Lead, st *model.LeadStage) string {
	if _, id := capi.StageEventName(site, lead, model.KindQualified); id != "" && id == st.EventID {
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
		// Each platform takes what its window still allows.
		ok, err := s.queueEvent(ctx, tx, site, lead, stageSpec(&stages[i], storedStageKind(site, lead, &stages[i])), now)
		if err != nil {
			return 0, err
		}
		if ok {
			n++
		}
	}
	return n, nil
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
