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
	ev, err := s.metaEvent(ctx, tx, site, lead, spec, now)
	if err != nil || ev.row == nil {
		return ev.queued, err
	}
	inserted, err := tx.DeliveryInsert(ctx, ev.row)
	if err != nil || !inserted {
		return inserted, err
	}
	_, err = s.queueGoogle(ctx, tx, site, lead, ev.spec, ev.row.EventName, ev.at, now)
	return true, err
}

// queueEvents is queueEvent for several events of a lead, their rows for
// Meta put in the outbox in one statement (DeliveryInsertAll: on SQLite a
// statement has a fixed cost on the one writer, and a clean lead queues
// two), each inserted one followed by its Google twin.
func (s *Service) queueEvents(ctx context.Context, tx *store.Tx, site *model.Site, lead *model.Lead, specs []eventSpec, now time.Time) error {
	evs := make([]metaEvent, 0, len(specs))
	rows := make([]*model.Delivery, 0, len(specs))
	for _, spec := range specs {
		ev, err := s.metaEvent(ctx, tx, site, lead, spec, now)
		if err != nil {
			return err
		}
		if ev.row != nil {
			evs, rows = append(evs, ev), append(rows, ev.row)
		}
	}
	inserted, err := tx.DeliveryInsertAll(ctx, rows)
	if err != nil {
		return err
	}
	for i, ev := range evs {
		if !inserted[i] {
			continue
		}
		if _, err := s.queueGoogle(ctx, tx, site, lead, ev.spec, ev.row.EventName, ev.at, now); err != nil {
			return err
		}
	}
	return nil
}

// metaEvent is a lead's event for Meta made ready for its outbox row.
type metaEvent struct {
	// row is the outbox row to insert, nil when there is none: nothing is
	// queued, or the event went its own way (queued says whether it was
	// queued there, as a Click-to-WhatsApp lead's event is).
	row    *model.Delivery
	queued bool
	spec   eventSpec // as shaped for the lead's source
	at     time.Time // the event's time
}

// metaEvent builds a lead's event for Meta, as queueEvent queues it.
func (s *Service) metaEvent(ctx context.Context, tx *store.Tx, site *model.Site, lead *model.Lead, spec eventSpec, now time.Time) (metaEvent, error) {
	ctwa := isCTWA(lead)
	if !ctwa && site.Settings.Meta.PixelID == "" && site.Settings.WhatsApp.SendsCTWA() {
		// A site that sends only its WhatsApp leads' events has no
		// pixel for the others.
		return metaEvent{}, nil
	}
	if !mayQueueLead(site, lead) {
		return metaEvent{}, nil
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
		queued, err := s.queueMessagingEvent(ctx, tx, site, lead, spec, now)
		return metaEvent{queued: queued}, err
	}
	ev, err := capi.BuildLeadEvent(capi.BuildParams{Site: site, Lead: lead, Kind: spec.Kind, EventName: spec.EventName,
		EventTime: spec.EventTime, ActionSource: spec.ActionSource, CustomData: spec.CustomData, Contact: spec.Contact})
	if err != nil {
		return metaEvent{}, fmt.Errorf("app: build %s event: %w", spec.Kind, err)
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return metaEvent{}, fmt.Errorf("app: encode %s event: %w", spec.Kind, err)
	}
	at := time.Unix(ev.EventTime, 0)
	return metaEvent{row: &model.Delivery{
		ID: s.ids.New("dl_", now), SiteID: site.ID, LeadID: lead.ID, Kind: spec.Kind,
		EventName: ev.EventName, EventID: ev.EventID, PixelID: site.Settings.Meta.PixelID, Payload: payload,
		State: model.DeliveryPending, NextAt: dueAt(lead, now), DeadlineAt: at.Add(model.MaxEventAge),
		CreatedAt: now, UpdatedAt: now,
	}, spec: spec, at: at}, nil
}
