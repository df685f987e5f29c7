package app

import (
	"context"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
	"github.com/cleanads/cleanads/internal/store"
)

// AddEvidence records evidence about a lead (a WhatsApp reply, a call, the
// owner's word) and applies it, in one transaction: the evidence and any
// change of verdict go into the lead's history; a lead that becomes clean
// gets its qualified event queued, if Meta's window is still open; a lead
// the owner calls junk has its unsent events cancelled.
func (s *Service) AddEvidence(ctx context.Context, site *model.Site, id model.LeadID, ev qualify.Evidence) (*model.Lead, error) {
	if err := ev.Validate(); err != nil {
		return nil, err
	}
	now := s.now().UTC()
	if ev.At.IsZero() {
		ev.At = now
	}
	var lead *model.Lead
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if lead, err = siteLead(ctx, tx, site, id); err != nil {
			return err
		}
		return s.applyEvidence(ctx, tx, site, lead, ev, now)
	})
	if err != nil {
		return nil, err
	}
	s.wake() // a lead that became clean has its qualified event queued
	return lead, nil
}

// applyEvidence applies ev to lead inside tx and updates lead in place.
func (s *Service) applyEvidence(ctx context.Context, tx *store.Tx, site *model.Site, lead *model.Lead, ev qualify.Evidence, now time.Time) error {
	data := map[string]any{"type": ev.Type, "at": ev.At.UTC().Format(time.RFC3339)}
	if ev.Type == qualify.EvidenceCall {
		data["duration_s"] = ev.DurationS
	}
	if err := tx.HistoryInsert(ctx, &model.HistoryEntry{ID: s.ids.New("h_", now), LeadID: lead.ID, At: now,
		Kind: model.HistoryEvidence, Data: data}); err != nil {
		return err
	}
	before := lead.Decision
	after, _ := qualify.ApplyEvidence(before, ev)
	if after.Verdict == before.Verdict && after.DecidedBy == before.DecidedBy {
		return nil
	}
	_, err := s.setDecision(ctx, tx, site, lead, after, eventSpec{}, now)
	return err
}

// cancelledJunk is why a lead's unsent events end when it is called junk;
// releaseHeld finds them by it when the lead is clean again.
const cancelledJunk = "cancelled: the lead was marked junk"

// setDecision stores a new decision for a lead, records it in the history
// and queues or cancels the lead's events to match. qualified shapes the
// qualified event queued when the lead becomes clean; its zero value means
// the default: system_generated at the lead's submit time. A junk lead that
// becomes clean also gets what its junk verdict held back (releaseHeld).
// It reports whether the qualified event was queued.
func (s *Service) setDecision(ctx context.Context, tx *store.Tx, site *model.Site, lead *model.Lead, d model.Decision, qualified eventSpec, now time.Time) (bool, error) {
	was := lead.Verdict
	reviewUntil := lead.ReviewUntil
	if d.Verdict != model.VerdictReview {
		reviewUntil = nil
	}
	if err := tx.LeadSetDecision(ctx, lead.ID, d, reviewUntil); err != nil {
		return false, err
	}
	hist := map[string]any{"verdict": d.Verdict, "was": was, "score": d.Score, "decided_by": d.DecidedBy}
	expired := lead.ReviewUntil != nil && now.After(*lead.ReviewUntil)
	lead.Decision, lead.ReviewUntil = d, reviewUntil
	if d.Verdict != was {
		if err := s.queueNotify(ctx, tx, lead, now); err != nil {
			return false, err
		}
		if err := s.queueHooks(ctx, tx, lead, hooksOfVerdict(lead, was), now); err != nil {
			return false, err
		}
	}
	queued := false
	switch {
	case d.Verdict == model.VerdictClean && was != model.VerdictClean:
		q := qualified
		q.Kind = model.KindQualified
		if q.ActionSource == "" {
			q.ActionSource = capi.SourceSystemGenerated
		}
		if !q.EventTime.IsZero() {
			// A CRM's "qualified" stage carries its own time, which the
			// review window does not bound.
			expired = false
		}
		if expired {
			hist["note"] = "review expired unconfirmed: the qualified event will not be sent"
		} else {
			if was == model.VerdictJunk {
				// The raw lead event was held back for a junk lead.
				if _, err := s.queueEvent(ctx, tx, site, lead, eventSpec{Kind: model.KindLead}, now); err != nil {
					return false, err
				}
			}
			// Each platform takes it within its own window: too late for
			// Meta's 7 days may be fine for Google's 90.
			r, err := s.queueEvents(ctx, tx, site, lead, []eventSpec{q}, now)
			if err != nil {
				return false, err
			}
			queued = r.Rows > 0
			if n := r.note(); n != "" {
				hist["note"] = n
			}
		}
		if was == model.VerdictJunk {
			n, err := s.releaseHeld(ctx, tx, site, lead, now)
			if err != nil {
				return false, err
			}
			if n > 0 {
				hist["released_events"] = n
			}
		}
	case d.Verdict == model.VerdictJunk:
		n, err := tx.DeliveryCancelByLead(ctx, lead.ID, cancelledJunk, now)
		if err != nil {
			return false, err
		}
		if n > 0 {
			hist["cancelled_events"] = n
		}
	}
	return queued, tx.HistoryInsert(ctx, &model.HistoryEntry{ID: s.ids.New("h_", now), LeadID: lead.ID, At: now,
		Kind: model.HistoryVerdict, Data: hist})
}

// ExpireReviews closes the review of leads whose time ran out before any
// evidence came: they stay unconfirmed and are never sent as qualified. It
// returns how many it closed.
func (s *Service) ExpireReviews(ctx context.Context) (int, error) {
	now := s.now().UTC()
	total := 0
	for {
		var n int
		err := s.db.InTx(ctx, func(tx *store.Tx) error {
			ids, err := tx.LeadExpireReviews(ctx, now, 200)
			if err != nil {
				return err
			}
			for _, id := range ids {
				if err := tx.HistoryInsert(ctx, &model.HistoryEntry{ID: s.ids.New("h_", now), LeadID: id, At: now,
					Kind: model.HistoryVerdict, Data: map[string]any{"verdict": model.VerdictReview,
						"note": "review expired unconfirmed: the qualified event will not be sent"}}); err != nil {
					return err
				}
			}
			n = len(ids)
			return nil
		})
		total += n
		if err != nil || n < 200 {
			return total, err
		}
	}
}

// LeadEventInput is what POST /v1/leads/{id}/events carries: evidence
// ("whatsapp_reply", "call", "customer", "junk") or a CRM stage ("stage").
type LeadEventInput struct {
	Type      string `json:"type"`
	DurationS int    `json:"duration_s"`
	// At is when it happened (RFC 3339); now when empty.
	At string `json:"at"`

	// Stage is the CRM stage, one of the site's meta.stages (type "stage").
	Stage string `json:"stage"`
	// Value and Currency go to custom_data; the stage's configured value
	// and currency when absent.
	Value    *float64 `json:"value"`
	Currency string   `json:"currency"`
	// ActionSource is system_generated (default), phone_call or chat.
	ActionSource string `json:"action_source"`
}

// AddLeadEvent records one event of a lead's life given by the site's
// systems: evidence, or a CRM stage.
func (s *Service) AddLeadEvent(ctx context.Context, site *model.Site, id model.LeadID, in *LeadEventInput) (*model.Lead, error) {
	switch in.Type {
	case TypeStage:
		return s.addStage(ctx, site, id, in)
	case qualify.EvidenceWhatsAppReply, qualify.EvidenceCall, qualify.EvidenceCustomer, qualify.EvidenceJunk:
	default:
		return nil, model.Invalid("type", fmt.Sprintf("unknown type %q (want stage, whatsapp_reply, call, customer or junk)", in.Type))
	}
	if in.Stage != "" || in.Value != nil || in.Currency != "" || in.ActionSource != "" {
		return nil, model.Invalid("type", `stage, value, currency and action_source go with "type": "stage" only`)
	}
	var at time.Time
	if in.At != "" {
		t, err := time.Parse(time.RFC3339, in.At)
		if err != nil {
			return nil, model.Invalid("at", "want an RFC 3339 time like 2026-12-02T15:04:05Z")
		}
		if t.After(s.now().Add(5 * time.Minute)) {
			return nil, model.Invalid("at", "is in the future")
		}
		at = t.UTC()
	}
	return s.AddEvidence(ctx, site, id, qualify.Evidence{Type: in.Type, DurationS: in.DurationS, At: at})
}

// siteLead reads a lead of site inside tx; another site's lead is not found.
func siteLead(ctx context.Context, tx *store.Tx, site *model.Site, id model.LeadID) (*model.Lead, error) {
	lead, err := tx.LeadByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if lead.SiteID != site.ID {
		return nil, fmt.Errorf("lead %s: %w", id, model.ErrNotFound)
	}
	return lead, nil
}
