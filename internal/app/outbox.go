package app

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// eventSpec says which event of a lead to queue; empty fields take
// capi.BuildLeadEvent's defaults.
type eventSpec struct {
	Kind         string
	EventName    string
	EventTime    time.Time
	ActionSource string
	CustomData   map[string]any
	// Contact is the lead's hashed customer data, shared by its events;
	// nil hashes it for this event.
	Contact *capi.Contact
}

// queueEvent builds a lead's server event and puts it in the outbox, in the
// caller's transaction. The event id comes from the lead (its own for the
// raw lead event, derived for every other kind), so queueing the same event
// twice is a no-op. Nothing is queued for a lead whose consent the site's
// consent setting does not allow. It reports whether a row was added.
func (s *Service) queueEvent(ctx context.Context, tx *store.Tx, site *model.Site, lead *model.Lead, spec eventSpec, now time.Time) (bool, error) {
	ctwa := isCTWA(lead)
	if !ctwa && site.Settings.Meta.PixelID == "" && site.Settings.WhatsApp.SendsCTWA() {
		// A site that sends only its WhatsApp leads' events has no
		// pixel for the others.
		return false, nil
	}
	if !mayQueueLead(site, lead) {
		return false, nil
	}
	if lead.Source == model.SourceLeadAds {
		spec = conversionLeads(site, spec, now)
	}
	if spec.Kind == model.KindQualified {
		// Meta reads the lead's status from custom_data; ours says who
		// qualified it.
		cd := map[string]any{"lead_status": "qualified", "qualified_by": lead.DecidedBy}
		for k, v := range spec.CustomData {
			cd[k] = v
		}
		spec.CustomData = cd
	}
	if ctwa {
		return s.queueMessagingEvent(ctx, tx, site, lead, spec, now)
	}
	ev, err := capi.BuildLeadEvent(capi.BuildParams{Site: site, Lead: lead, Kind: spec.Kind, EventName: spec.EventName,
		EventTime: spec.EventTime, ActionSource: spec.ActionSource, CustomData: spec.CustomData, Contact: spec.Contact})
	if err != nil {
		return false, fmt.Errorf("app: build %s event: %w", spec.Kind, err)
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return false, fmt.Errorf("app: encode %s event: %w", spec.Kind, err)
	}
	at := time.Unix(ev.EventTime, 0)
	inserted, err := tx.DeliveryInsert(ctx, &model.Delivery{
		ID: s.ids.New("dl_", now), SiteID: site.ID, LeadID: lead.ID, Kind: spec.Kind,
		EventName: ev.EventName, EventID: ev.EventID, PixelID: site.Settings.Meta.PixelID, Payload: payload,
		State: model.DeliveryPending, NextAt: now, DeadlineAt: at.Add(model.MaxEventAge),
		CreatedAt: now, UpdatedAt: now,
	})
	if err != nil || !inserted {
		return inserted, err
	}
	_, err = s.queueGoogle(ctx, tx, site, lead, spec, ev.EventName, at, now)
	return true, err
}
