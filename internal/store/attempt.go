package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// LeadHold keeps a lead open for a later attempt until until, and holds its
// outbox rows that were never tried until then, so nothing is sent for a
// lead that may still change.
func (q Q) LeadHold(ctx context.Context, id model.LeadID, until time.Time) error {
	if _, err := q.exec(ctx, `/* Store.LeadHold */ UPDATE leads SET open_until = ? WHERE id = ?`,
		until.UnixMilli(), string(id)); err != nil {
		return fmt.Errorf("store: hold lead %s: %w", id, err)
	}
	if _, err := q.exec(ctx, `/* Store.LeadHold */ UPDATE deliveries SET next_at = ?
		WHERE lead_id = ? AND lead_id <> '' AND state = ? AND attempts = 0`,
		until.UnixMilli(), string(id), string(model.DeliveryPending)); err != nil {
		return fmt.Errorf("store: hold events of lead %s: %w", id, err)
	}
	return nil
}

// LeadAttemptOpen says whether a lead still takes a later attempt at now:
// it is open until after now, and every outbox row it has is one held for
// it (pending, never tried, due after now), so nothing of it has gone out
// or been queued by evidence, the owner or a stage.
func (q Q) LeadAttemptOpen(ctx context.Context, id model.LeadID, now time.Time) (bool, error) {
	var (
		until sql.NullInt64
		other int
	)
	err := q.queryRow(ctx, `/* Store.LeadAttemptOpen */ SELECT l.open_until,
		(SELECT COUNT(*) FROM deliveries d WHERE d.lead_id = l.id AND d.lead_id <> ''
			AND NOT (d.state = ? AND d.attempts = 0 AND d.next_at > ?))
		FROM leads l WHERE l.id = ?`,
		string(model.DeliveryPending), now.UnixMilli(), string(id)).Scan(&until, &other)
	if err != nil {
		return false, notFound(err, "lead "+string(id))
	}
	return until.Valid && until.Int64 > now.UnixMilli() && other == 0, nil
}

// LeadAttemptSet replaces an open lead's values and decision with those of
// a later attempt (l, with the lead's id), drops its held outbox rows, and
// keeps it open until openUntil (nil: the lead is final now). The caller
// queues the events of the new decision.
func (q Q) LeadAttemptSet(ctx context.Context, l *model.Lead, openUntil *time.Time) error {
	fields, err := json.Marshal(nonNilMap(l.Fields))
	if err != nil {
		return fmt.Errorf("store: lead fields: %w", err)
	}
	reasons, err := json.Marshal(nonNilReasons(l.Reasons))
	if err != nil {
		return fmt.Errorf("store: lead reasons: %w", err)
	}
	var consent, fill, reviewUntil, open any
	if l.Consent != nil {
		consent = boolInt(*l.Consent)
	}
	if l.FillMS != nil {
		fill = *l.FillMS
	}
	if l.ReviewUntil != nil {
		reviewUntil = l.ReviewUntil.UnixMilli()
	}
	if openUntil != nil {
		open = openUntil.UnixMilli()
	}
	if _, err := q.exec(ctx, `/* Store.LeadAttemptSet */ DELETE FROM deliveries
		WHERE lead_id = ? AND lead_id <> '' AND state = ? AND attempts = 0`,
		string(l.ID), string(model.DeliveryPending)); err != nil {
		return fmt.Errorf("store: drop held events of lead %s: %w", l.ID, err)
	}
	res, err := q.exec(ctx, `/* Store.LeadAttemptSet */ UPDATE leads SET visitor_id = ?, email = ?, phone = ?, name = ?,
		first_name = ?, last_name = ?, message = ?, fields = ?, page_url = ?, referrer = ?, fbc = ?, fbp = ?, fbclid = ?,
		gclid = ?, external_id = ?, consent = ?, fill_ms = ?, honeypot = ?, client_ip = ?, user_agent = ?, email_key = ?,
		phone_key = ?, submitted_at = ?, verdict = ?, score = ?, reasons = ?, rules_version = ?, decided_by = ?,
		review_until = ?, fill_by = ?, open_until = ?
		WHERE id = ?`,
		l.VisitorID, l.Email, l.Phone, l.Name, l.FirstName, l.LastName, l.Message, string(fields), l.PageURL, l.Referrer,
		l.FBC, l.FBP, l.FBClid, l.GClid, l.ExternalID, consent, fill, l.Honeypot, l.ClientIP, l.UserAgent, l.EmailKey,
		l.PhoneKey, l.SubmittedAt.UnixMilli(), string(l.Verdict), l.Score, string(reasons), l.RulesVersion, l.DecidedBy,
		reviewUntil, l.FillBy, open, string(l.ID))
	if err != nil {
		return fmt.Errorf("store: set attempt of lead %s: %w", l.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("lead %s: %w", l.ID, model.ErrNotFound)
	}
	return nil
}
