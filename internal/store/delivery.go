package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

const deliveryColumns = `id, site_id, lead_id, kind, event_name, event_id, pixel_id, payload, state, attempts,
	next_at, deadline_at, last_error, response, mode, created_at, updated_at, sent_at`

// DeliveryInsert puts an event in the outbox. An event already there (same
// site, name and id) is left as it is and inserted reports false: a replay
// never queues it twice.
func (q Q) DeliveryInsert(ctx context.Context, d *model.Delivery) (inserted bool, err error) {
	res, err := q.exec(ctx, `/* Store.DeliveryInsert */ INSERT INTO deliveries (`+deliveryColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (site_id, event_name, event_id) DO NOTHING`,
		d.ID, string(d.SiteID), string(d.LeadID), d.Kind, d.EventName, d.EventID, d.PixelID, string(d.Payload),
		string(d.State), d.Attempts, d.NextAt.UnixMilli(), d.DeadlineAt.UnixMilli(), d.LastError,
		string(d.Response), d.Mode, d.CreatedAt.UnixMilli(), d.UpdatedAt.UnixMilli(), nil)
	if err != nil {
		return false, fmt.Errorf("store: insert delivery: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// DeliveriesByLead returns every event of a lead, oldest first.
func (q Q) DeliveriesByLead(ctx context.Context, id model.LeadID) ([]*model.Delivery, error) {
	rows, err := q.query(ctx, `/* Store.DeliveriesByLead */ SELECT `+deliveryColumns+` FROM deliveries
		WHERE lead_id = ? ORDER BY created_at, id`, string(id))
	if err != nil {
		return nil, fmt.Errorf("store: deliveries: %w", err)
	}
	defer rows.Close()
	var list []*model.Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, fmt.Errorf("store: deliveries: %w", err)
		}
		list = append(list, d)
	}
	return list, rows.Err()
}

func scanDelivery(r scanner) (*model.Delivery, error) {
	var (
		d                          model.Delivery
		site, lead, payload, state string
		response                   string
		next, deadline, created    int64
		updated                    int64
		sent                       sql.NullInt64
	)
	if err := r.Scan(&d.ID, &site, &lead, &d.Kind, &d.EventName, &d.EventID, &d.PixelID, &payload, &state,
		&d.Attempts, &next, &deadline, &d.LastError, &response, &d.Mode, &created, &updated, &sent); err != nil {
		return nil, err
	}
	d.SiteID, d.LeadID, d.State = model.SiteID(site), model.LeadID(lead), model.DeliveryState(state)
	d.Payload = []byte(payload)
	if response != "" {
		d.Response = []byte(response)
	}
	d.NextAt, d.DeadlineAt = time.UnixMilli(next).UTC(), time.UnixMilli(deadline).UTC()
	d.CreatedAt, d.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	if sent.Valid {
		t := time.UnixMilli(sent.Int64).UTC()
		d.SentAt = &t
	}
	return &d, nil
}

// DeliveryCancelByLead ends a lead's events that have not been sent
// (pending, retry, paused) as dead with the reason, and returns how many.
func (q Q) DeliveryCancelByLead(ctx context.Context, id model.LeadID, reason string, now time.Time) (int, error) {
	res, err := q.exec(ctx, `/* Store.DeliveryCancelByLead */ UPDATE deliveries SET state = ?, last_error = ?, updated_at = ?
		WHERE lead_id = ? AND state IN (?, ?, ?)`,
		string(model.DeliveryDead), reason, now.UnixMilli(), string(id),
		string(model.DeliveryPending), string(model.DeliveryRetry), string(model.DeliveryPaused))
	if err != nil {
		return 0, fmt.Errorf("store: cancel deliveries of %s: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
