package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/cleanads/cleanads/internal/model"
)

// coverageRecount recounts a site's match-key coverage counters
// (model.CoverageCounts) of the days from first to last (inclusive) from
// the payloads of its Meta events sent or built then, whole or shrunk; the
// caller has deleted the old ones. The payloads are read and decoded here,
// as coverageCount decodes them when the events are recorded: one rule
// for both. It reads every event of the days once: a command's and a
// migration's cost, never a page's.
func (q Q) coverageRecount(ctx context.Context, site model.SiteID, first, last int64) error {
	byDay := map[int64][]model.Count{}
	var days []int64
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		var (
			day     int64
			payload string
		)
		if err := r.Scan(&day, &payload); err != nil {
			return err
		}
		cs := model.CoverageCounts(unpackPayload(payload))
		if cs == nil {
			return nil
		}
		if _, ok := byDay[day]; !ok {
			days = append(days, day)
		}
		byDay[day] = mergeCounts(append(byDay[day], cs...))
		return nil
	}, `/* Store.CountersRebuild */ SELECT COALESCE(d.sent_at, d.created_at) / 86400000, d.payload
		FROM deliveries d
		WHERE d.site_id = ? AND d.destination = 'meta' AND d.state IN ('sent', 'dry_run')
			AND COALESCE(d.sent_at, d.created_at) >= ? AND COALESCE(d.sent_at, d.created_at) < ?`,
		string(site), first*86400000, (last+1)*86400000)
	if err != nil {
		return fmt.Errorf("store: recount coverage: %w", err)
	}
	for _, day := range days {
		if err := q.CountersAdd(ctx, site, day, "", byDay[day]...); err != nil {
			return err
		}
	}
	return nil
}

// backfillCoverageCounters is migration 0430's Go step: the coverage
// counters of the Meta events already sent or built, each site's over the
// days it has such events.
func backfillCoverageCounters(ctx context.Context, tx *Tx) error {
	return tx.eachSiteSpan(ctx, `/* Store.backfillCoverageCounters */ SELECT site_id, MIN(COALESCE(sent_at, created_at)),
		MAX(COALESCE(sent_at, created_at)) FROM delivery_state WHERE destination = 'meta' AND state IN ('sent', 'dry_run')
		GROUP BY site_id ORDER BY site_id`, tx.coverageRecount)
}
