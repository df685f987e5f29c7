package store

import (
	"context"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// LeadEventsHeld says whether every outbox row of a lead is one of its own
// lead events still held for its attempt window (the raw lead or the
// qualified event, for any destination: pending, never tried, due after
// now), so that a later attempt may replace them: nothing of the lead has
// gone out, and no stage has been queued for it.
func (q Q) LeadEventsHeld(ctx context.Context, id model.LeadID, now time.Time) (bool, error) {
	var other int
	// An archived event (migration 0470) is finished: never held.
	err := q.queryRow(ctx, `/* Store.LeadEventsHeld */ SELECT (SELECT COUNT(*) FROM delivery_events e
		JOIN delivery_state s ON s.id = e.id WHERE e.lead_id = ? AND e.lead_id <> ''
			AND NOT (s.kind IN (?, ?) AND s.state = ? AND s.attempts = 0 AND s.next_at > ?))
		+ (SELECT COUNT(*) FROM delivery_events WHERE lead_id = ? AND lead_id <> '' AND archived_at IS NOT NULL)`,
		string(id), model.KindLead, model.KindQualified, string(model.DeliveryPending), now.UnixMilli(), string(id)).Scan(&other)
	if err != nil {
		return false, fmt.Errorf("store: held events of lead %s: %w", id, err)
	}
	return other == 0, nil
}

// LeadAttemptSet replaces an open lead's values, decision and window with
// those of a later attempt (l, with the lead's id) and drops its held lead
// events; the caller queues the events of the new decision.
func (q Q) LeadAttemptSet(ctx context.Context, l *model.Lead) error {
	v, err := encodeLead(l)
	if err != nil {
		return err
	}
	if _, err := q.exec(ctx, `/* Store.LeadAttemptSet */ DELETE FROM delivery_state
		WHERE id IN (SELECT id FROM delivery_events WHERE lead_id = ? AND lead_id <> '')
			AND kind IN (?, ?) AND state = ? AND attempts = 0`,
		string(l.ID), model.KindLead, model.KindQualified, string(model.DeliveryPending)); err != nil {
		return fmt.Errorf("store: drop held events of lead %s: %w", l.ID, err)
	}
	// The events whose state went are the ones dropped (an archived event,
	// migration 0470, has no state row and stays).
	if _, err := q.exec(ctx, `/* Store.LeadAttemptSet */ DELETE FROM delivery_events
		WHERE lead_id = ? AND lead_id <> '' AND archived_at IS NULL
			AND NOT EXISTS (SELECT 1 FROM delivery_state s WHERE s.id = delivery_events.id)`,
		string(l.ID)); err != nil {
		return fmt.Errorf("store: drop held events of lead %s: %w", l.ID, err)
	}
	return q.leadVerdictSet(ctx, l.ID, l.Verdict, `/* Store.LeadAttemptSet */ UPDATE leads SET visitor_id = ?, email = ?, phone = ?, name = ?,
		first_name = ?, last_name = ?, message = ?, fields = ?, page_url = ?, referrer = ?, fbc = ?, fbp = ?, fbclid = ?,
		gclid = ?, external_id = ?, consent = ?, fill_ms = ?, honeypot = ?, client_ip = ?, user_agent = ?, email_key = ?,
		phone_key = ?, submitted_at = ?, verdict = ?, score = ?, reasons = ?, rules_version = ?, decided_by = ?,
		review_until = ?, fill_by = ?, open_until = ?
		WHERE id = ? AND verdict = ?`,
		l.VisitorID, q.plain(l.Email), q.plain(l.Phone), q.plain(l.Name), q.plain(l.FirstName), q.plain(l.LastName), q.plain(l.Message), v.fields, l.PageURL, l.Referrer,
		l.FBC, l.FBP, l.FBClid, l.GClid, l.ExternalID, v.consent, v.fill, l.Honeypot, l.ClientIP, l.UserAgent, storedEmailKey(l.Email, l.EmailKey),
		l.PhoneKey, l.SubmittedAt.UnixMilli(), string(l.Verdict), l.Score, v.reasons, l.RulesVersion, l.DecidedBy,
		v.reviewUntil, l.FillBy, v.openUntil)
}
