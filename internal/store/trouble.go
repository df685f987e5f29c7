package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// DeliveryFailure is a set of a site's events for one destination that
// failed alike: the same state and the same last error.
type DeliveryFailure struct {
	Site        model.SiteID
	Destination string
	State       model.DeliveryState
	LastError   string
	// Response is one of the rows' stored answers (they differ only in
	// such details as Meta's trace id).
	Response []byte
	N        int
	// Oldest is when the oldest of the events came in, Deadline the
	// earliest time one of them can no longer be sent.
	Oldest, Deadline time.Time
}

// DeliveryFailures returns the events that wait after a failure (retry,
// paused) and those refused (dead) that can still be replayed, grouped by
// site, destination, state and last error, for a site (every site's when
// site is empty).
func (q Q) DeliveryFailures(ctx context.Context, site model.SiteID, now time.Time) ([]DeliveryFailure, error) {
	var list []DeliveryFailure
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		var f DeliveryFailure
		var id, state string
		var resp sql.NullString
		var oldest, deadline int64
		if err := r.Scan(&id, &f.Destination, &state, &f.LastError, &resp, &f.N, &oldest, &deadline); err != nil {
			return err
		}
		f.Site, f.State, f.Response = model.SiteID(id), model.DeliveryState(state), []byte(resp.String)
		f.Oldest, f.Deadline = time.UnixMilli(oldest).UTC(), time.UnixMilli(deadline).UTC()
		list = append(list, f)
		return nil
	}, `/* Store.DeliveryFailures */ SELECT site_id, destination, state, last_error, MAX(response), COUNT(*),
		MIN(created_at), MIN(deadline_at) FROM delivery_state
		WHERE state IN ('retry', 'paused', 'dead') AND site_id IN (SELECT id FROM sites WHERE id = ? OR ? = '')
			AND (state = 'retry' AND attempts > 0 OR state = 'paused' OR state = 'dead' AND deadline_at > ?)
		GROUP BY site_id, destination, state, last_error
		ORDER BY site_id, destination, state, last_error`, string(site), string(site), now.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("store: delivery failures: %w", err)
	}
	return list, nil
}
