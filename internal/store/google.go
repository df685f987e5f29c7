package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// DestinationPauseReason returns why a share is paused, or "" when it is
// not: the google handler asks it before each share it sends.
func (q Q) DestinationPauseReason(ctx context.Context, sh model.Share) (string, error) {
	p, err := q.DestinationPauseOf(ctx, sh)
	if errors.Is(err, model.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return p.Reason, nil
}

// resumeGoogleOnChange lifts a site's Google pause when its Google
// settings change (the account, a conversion action, the mode, or the
// credentials, whose fingerprint the settings keep), as a new access
// token lifts Meta's: the fix gets its chance. An unchanged site keeps
// its pause, whoever saves it.
func (q Q) resumeGoogleOnChange(ctx context.Context, s *model.Site) error {
	var raw string
	err := q.queryRow(ctx, `/* Store.SiteUpsert */ SELECT settings FROM sites WHERE id = ?`, string(s.ID)).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: site %s: %w", s.ID, err)
	}
	var old model.SiteSettings
	if err := json.Unmarshal([]byte(raw), &old); err == nil {
		was, _ := json.Marshal(old.Google)
		next, _ := json.Marshal(s.Settings.Google)
		if bytes.Equal(was, next) {
			return nil
		}
	}
	return q.DestinationResume(ctx, model.Share{Site: s.ID, Destination: model.DestinationGoogle})
}

// DeliveryStatsByDestination counts a site's rows of one kind (every kind
// when empty) created since a time, by destination and state: the
// dashboard shows Meta's and Google's apart, never one event twice. It
// counts at most CountCap+1 rows of the kind a state, from the index
// delivery_state_site_state_created alone, so a count at CountCap+1 says
// "more".
func (q Q) DeliveryStatsByDestination(ctx context.Context, site model.SiteID, kind string, since time.Time) (map[string]map[model.DeliveryState]int, error) {
	out := map[string]map[model.DeliveryState]int{}
	var parts []string
	var args []any
	for i, st := range deliveryStates {
		parts = append(parts, fmt.Sprintf(`SELECT destination, state, COUNT(*) FROM (SELECT destination, state FROM delivery_state
			WHERE site_id = ? AND state = ? AND created_at >= ? AND (kind = ? OR ? = '') LIMIT %d) s%d GROUP BY destination, state`,
			CountCap+1, i))
		args = append(args, string(site), string(st), since.UnixMilli(), kind, kind)
		if archivedStates[st] {
			// The state's archived rows (migration 0470), through
			// delivery_events_archived alone.
			parts = append(parts, fmt.Sprintf(`SELECT destination, archived_state, COUNT(*) FROM (SELECT destination, archived_state
				FROM delivery_events WHERE site_id = ? AND archived_state = ? AND archived_created_at >= ?
				AND archived_at IS NOT NULL AND (archived_kind = ? OR ? = '') LIMIT %d) a%d GROUP BY destination, archived_state`,
				CountCap+1, i))
			args = append(args, string(site), string(st), since.UnixMilli(), kind, kind)
		}
	}
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		var dest, state string
		var n int
		if err := r.Scan(&dest, &state, &n); err != nil {
			return err
		}
		if out[dest] == nil {
			out[dest] = map[model.DeliveryState]int{}
		}
		out[dest][model.DeliveryState(state)] = min(out[dest][model.DeliveryState(state)]+n, CountCap+1)
		return nil
	}, `/* Store.DeliveryStatsByDestination */ `+strings.Join(parts, " UNION ALL "), args...)
	if err != nil {
		return nil, fmt.Errorf("store: delivery counts by destination: %w", err)
	}
	return out, nil
}

// DeliveriesAwaitingGoogle returns Google rows sent since a time whose
// request Google had not finished processing when it was last asked
// (their response says "awaiting": true), oldest first.
func (q Q) DeliveriesAwaitingGoogle(ctx context.Context, since time.Time, limit int) ([]*model.Delivery, error) {
	// An archived row (migration 0470) keeps no answer once sent: the
	// state rows alone can be awaiting.
	rows, err := q.query(ctx, `/* Store.DeliveriesAwaitingGoogle */ SELECT `+deliveryJoin+` FROM delivery_state s
		JOIN delivery_events e ON e.id = s.id
		WHERE s.destination = 'google' AND s.state = 'sent' AND s.sent_at >= ? AND s.response LIKE '%"awaiting":true%'
		ORDER BY s.sent_at, s.id LIMIT ?`, since.UnixMilli(), limit)
	return scanAll(rows, err, "deliveries awaiting Google", scanDelivery)
}

// DeliveryAnswer records what Google said later about a sent row: its
// response, and dead with the reason when Google failed the request. Only
// a row still sent changes.
func (q Q) DeliveryAnswer(ctx context.Context, d *model.Delivery, now time.Time) error {
	var sent any
	if d.State == model.DeliverySent && d.SentAt != nil {
		sent = d.SentAt.UnixMilli()
	}
	_, err := q.exec(ctx, `/* Store.DeliveryAnswer */ UPDATE delivery_state SET state = ?, response = ?, last_error = ?,
		updated_at = ?, sent_at = ? WHERE id = ? AND state = 'sent'`,
		string(d.State), string(d.Response), d.LastError, now.UnixMilli(), sent, d.ID)
	if err != nil {
		return fmt.Errorf("store: answer of delivery %s: %w", d.ID, err)
	}
	return nil
}
