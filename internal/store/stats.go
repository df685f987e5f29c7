package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// Stats reads the counts metrics report: the leads by verdict from the
// verdict counters (a few rows a site and day), the deliveries from a scan
// of a narrow index (by site and state).
func (q Q) Stats(ctx context.Context, now time.Time) (*model.Stats, error) {
	st := &model.Stats{Leads: map[model.SiteID]map[model.Verdict]int{},
		Deliveries: map[model.SiteID]map[model.DeliveryState]int{}, Paused: map[model.SiteID]bool{}}
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		var site, verdict string
		var n int
		if err := r.Scan(&site, &verdict, &n); err != nil {
			return err
		}
		if st.Leads[model.SiteID(site)] == nil {
			st.Leads[model.SiteID(site)] = map[model.Verdict]int{}
		}
		st.Leads[model.SiteID(site)][model.Verdict(verdict)] = n
		return nil
	}, `/* Store.Stats */ SELECT site_id, dim, CAST(SUM(n) AS BIGINT) FROM site_counters WHERE name = 'verdicts'
		GROUP BY site_id, dim HAVING SUM(n) <> 0`)
	if err != nil {
		return nil, err
	}
	count := func(site string, state model.DeliveryState, n int) {
		if n == 0 {
			return
		}
		if st.Deliveries[model.SiteID(site)] == nil {
			st.Deliveries[model.SiteID(site)] = map[model.DeliveryState]int{}
		}
		st.Deliveries[model.SiteID(site)][state] += n
	}
	err = q.eachRow(ctx, func(r *sql.Rows) error {
		var site, state string
		var n int
		if err := r.Scan(&site, &state, &n); err != nil {
			return err
		}
		count(site, model.DeliveryState(state), n)
		return nil
	}, `/* Store.Stats */ SELECT site_id, state, COUNT(*) FROM delivery_state GROUP BY site_id, state
		UNION ALL SELECT site_id, archived_state, COUNT(*) FROM delivery_events WHERE archived_at IS NOT NULL
		GROUP BY site_id, archived_state`)
	if err != nil {
		return nil, err
	}
	err = q.eachRow(ctx, func(r *sql.Rows) error {
		var site string
		var paused int
		if err := r.Scan(&site, &paused); err != nil {
			return err
		}
		st.Paused[model.SiteID(site)] = paused != 0
		return nil
	}, `/* Store.Stats */ SELECT id, CASE WHEN EXISTS (SELECT 1 FROM destination_pauses p
		WHERE p.site_id = sites.id AND p.destination = 'meta') THEN 1 ELSE 0 END FROM sites`)
	if err != nil {
		return nil, err
	}
	// Queued PageViews are pending events too, and the sent ones were
	// counted as they left the queue.
	err = q.eachRow(ctx, func(r *sql.Rows) error {
		var site string
		var queued, sent int
		if err := r.Scan(&site, &queued, &sent); err != nil {
			return err
		}
		count(site, model.DeliveryPending, queued)
		count(site, model.DeliverySent, sent)
		return nil
	}, `/* Store.Stats */ SELECT s.id, (SELECT COUNT(*) FROM pageview_queue q WHERE q.site_id = s.id),
		(SELECT COALESCE(SUM(sent), 0) FROM pageview_counts c WHERE c.site_id = s.id) FROM sites s`)
	if err != nil {
		return nil, err
	}
	// A site's oldest queued PageView is the first of its queue.
	var oldest, oldestQueued sql.NullInt64
	if err := q.queryRow(ctx, `/* Store.Stats */ SELECT (SELECT MIN(next_at) FROM delivery_state
		WHERE site_id IN (SELECT id FROM sites) AND state IN ('pending', 'retry') AND next_at <= ?),
		(SELECT MIN((SELECT created_at FROM pageview_queue q WHERE q.site_id = s.id ORDER BY event_id LIMIT 1)) FROM sites s)`,
		now.UnixMilli()).Scan(&oldest, &oldestQueued); err != nil {
		return nil, fmt.Errorf("store: stats: %w", err)
	}
	if oldestQueued.Valid && (!oldest.Valid || oldestQueued.Int64 < oldest.Int64) {
		oldest = oldestQueued
	}
	st.OldestDue = fromMS(oldest)
	return st, nil
}

// eachRow runs a query and calls fn for each row.
func (q Q) eachRow(ctx context.Context, fn func(r *sql.Rows) error, query string, args ...any) error {
	rows, err := q.query(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return fmt.Errorf("store: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}
