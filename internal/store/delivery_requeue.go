package store

import (
	"context"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// DeliveryRequeueCancelled puts back in the queue, due now, a lead's events
// that DeliveryCancelByLead ended with reason and whose deadline is after
// deadlineAfter, and returns how many. It is how a lead's word changed back
// to real customer sends what a junk word held back. Only that exact reason
// matches: an event Meta refused stays dead.
func (q Q) DeliveryRequeueCancelled(ctx context.Context, id model.LeadID, reason string, now, deadlineAfter time.Time) (int, error) {
	res, err := q.exec(ctx, `/* Store.DeliveryRequeueCancelled */ UPDATE delivery_state
		SET state = ?, next_at = ?, updated_at = ?, last_error = ''
		WHERE id IN (SELECT id FROM delivery_events WHERE lead_id = ? AND lead_id <> '') AND state = ? AND last_error = ? AND deadline_at > ? AND shrunk_at IS NULL`,
		string(model.DeliveryPending), now.UnixMilli(), now.UnixMilli(),
		string(id), string(model.DeliveryDead), reason, deadlineAfter.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("store: requeue cancelled deliveries of %s: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
