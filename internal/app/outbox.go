package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/store"
)

// eventSpec says which event of a lead to queue; each platform the site
// has on builds its own from it (platform.Input).
type eventSpec struct {
	Kind string
	// EventTime is when it happened; zero means the lead's submit time.
	EventTime    time.Time
	ActionSource string
	// Value and Currency are a stage's.
	Value    *float64
	Currency string
	// FromStage names the CRM stage the event stands for.
	FromStage string
	// Prepared is what the platforms' Prepare made of the lead ahead of
	// the transaction, by platform name; nil when there is none.
	Prepared map[string]any
}

// sent is what queueing a lead's events did: the rows added, and each
// platform's reason for an event it did not take because it was too old.
type sent struct {
	Rows int
	// TooOld are the platforms' words for an event too old for them, as
	// "not sent to Meta: ...".
	TooOld []string
	// To are the labels of the platforms a row was added for.
	To []string
}

// note says in words where an event went when some platform found it too
// old ("" when none did): sentences joined by "; ", each translated on its
// own on the lead's page.
func (r sent) note() string {
	if len(r.TooOld) == 0 {
		return ""
	}
	s := strings.Join(r.TooOld, "; ")
	if len(r.To) > 0 {
		s += "; sent to " + strings.Join(r.To, ", ") + " only"
	}
	return s
}

// prepare asks the platforms that have per-lead work (hashing) to do it,
// ahead of the transaction.
func (s *Service) prepare(site *model.Site, lead *model.Lead) map[string]any {
	var out map[string]any
	for _, p := range s.platforms {
		if pr, ok := p.(platform.Preparer); ok && p.On(site) {
			if out == nil {
				out = map[string]any{}
			}
			out[p.Name()] = pr.Prepare(site, lead)
		}
	}
	return out
}

// queueEvent queues one event of a lead for every platform the site has on
// that takes it, in the caller's transaction, and reports whether a row
// was added. Event ids come from the lead and the kind, so queueing the
// same event twice is a no-op. Nothing is queued for a lead whose consent
// the site's consent setting does not allow.
func (s *Service) queueEvent(ctx context.Context, tx *store.Tx, site *model.Site, lead *model.Lead, spec eventSpec, now time.Time) (bool, error) {
	r, err := s.queueEvents(ctx, tx, site, lead, []eventSpec{spec}, now)
	return r.Rows > 0, err
}

// queueEvents is queueEvent for several events of a lead, their rows put
// in the outbox in one statement (DeliveryInsertAll: on SQLite a
// statement has a fixed cost on the one writer, and a clean lead queues
// two per platform). Each platform builds each event on its own: one
// that skips an event (no mapping, too old for it) holds none of the
// others.
func (s *Service) queueEvents(ctx context.Context, tx *store.Tx, site *model.Site, lead *model.Lead, specs []eventSpec, now time.Time) (sent, error) {
	var r sent
	rows, labels, err := s.eventRows(ctx, tx, site, lead, specs, now, &r)
	if err != nil || len(rows) == 0 {
		return r, err
	}
	inserted, err := tx.DeliveryInsertAll(ctx, rows)
	if err != nil {
		return r, err
	}
	for i, ok := range inserted {
		if ok {
			r.Rows++
			if !slices.Contains(r.To, labels[i]) {
				r.To = append(r.To, labels[i])
			}
		}
	}
	return r, nil
}

// eventRows are queueEvents's outbox rows, not yet inserted, each with its
// platform's label; the events too old for a platform are added to
// r.TooOld.
func (s *Service) eventRows(ctx context.Context, tx *store.Tx, site *model.Site, lead *model.Lead, specs []eventSpec, now time.Time, r *sent) (rows []*model.Delivery, labels []string, err error) {
	if !mayQueueLead(site, lead) {
		return nil, nil, nil
	}
	var on []platform.Platform
	visits := false
	for _, p := range s.platforms {
		if p.On(site) {
			on = append(on, p)
			if v, ok := p.(platform.VisitReader); ok && v.ReadsVisits() {
				visits = true
			}
		}
	}
	if len(on) == 0 {
		return nil, nil, nil
	}
	var clicks model.ClickIDs
	if visits {
		if clicks, err = leadClicks(ctx, tx, site.ID, lead); err != nil {
			return nil, nil, err
		}
	}
	cookies := lead.Cookies()
	for _, spec := range specs {
		for _, p := range on {
			in := platform.Input{Site: site, Lead: lead, Kind: spec.Kind, At: spec.EventTime, Value: spec.Value,
				Currency: spec.Currency, ActionSource: spec.ActionSource, Clicks: clicks, Cookies: cookies, FromStage: spec.FromStage,
				Now: now, Prepared: spec.Prepared[p.Name()]}
			ev, err := p.Build(ctx, in)
			switch {
			case errors.Is(err, platform.ErrTooOld):
				r.TooOld = append(r.TooOld, "not sent to "+p.Label()+": "+platform.SkipWords(err))
				continue
			case errors.Is(err, platform.ErrSkip):
				s.log.Debug("event not queued", "platform", p.Name(), "lead", string(lead.ID), "kind", spec.Kind, "why", err.Error())
				continue
			case err != nil:
				return nil, nil, fmt.Errorf("app: %s %s event: %w", p.Name(), spec.Kind, err)
			}
			rows = append(rows, &model.Delivery{
				ID: s.ids.New("dl_", now), SiteID: site.ID, LeadID: lead.ID, Destination: p.Name(), Kind: spec.Kind,
				EventName: ev.Name, EventID: ev.ID, PixelID: ev.Account, Payload: ev.Payload,
				State: model.DeliveryPending, NextAt: dueAt(lead, now), DeadlineAt: ev.Deadline,
				CreatedAt: now, UpdatedAt: now,
			})
			labels = append(labels, p.Label())
		}
	}
	return rows, labels, nil
}

// leadClicks are the lead's ad click ids: its own, else, id by id, those
// of the latest of its visitor's visits that carried one (the landing
// URL's gclid, gbraid, wbraid, ttclid, which the tracker keeps).
func leadClicks(ctx context.Context, tx *store.Tx, site model.SiteID, lead *model.Lead) (model.ClickIDs, error) {
	c := model.ClickIDs{GClid: lead.GClid, FBClid: lead.FBClid}
	if lead.VisitorID == "" {
		return c, nil
	}
	visits, err := tx.VisitsByVisitor(ctx, site, lead.VisitorID)
	if err != nil {
		return c, err
	}
	google := c.GClid != ""
	for i := len(visits) - 1; i >= 0; i-- {
		v := visits[i].ClickIDs
		if !google && (v.GClid != "" || v.GBraid != "" || v.WBraid != "") {
			// Google's three ids come from one click.
			c.GClid, c.GBraid, c.WBraid, google = v.GClid, v.GBraid, v.WBraid, true
		}
		if c.TTClid == "" {
			c.TTClid = v.TTClid
		}
		if c.MSClkid == "" {
			c.MSClkid = v.MSClkid
		}
		if c.FBClid == "" {
			c.FBClid = v.FBClid
		}
	}
	return c, nil
}

// platformOf returns the platform of an outbox row's destination (Lead
// Ads fetches are Meta's), or nil.
func (s *Service) platformOf(destination string) platform.Platform {
	if destination == "" || destination == model.DestinationMetaLeadgen {
		destination = model.DestinationMeta
	}
	for _, p := range s.platforms {
		if p.Name() == destination {
			return p
		}
	}
	return nil
}
