package store

import (
	"context"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// LeadAdsWatermark returns the created time up to which the backfill has
// read a form's leads, or model.ErrNotFound before its first pass.
func (q Q) LeadAdsWatermark(ctx context.Context, site model.SiteID, formID string) (time.Time, error) {
	var ms int64
	err := q.queryRow(ctx, `/* Store.LeadAdsWatermark */ SELECT until_ms FROM leadads_watermarks
		WHERE site_id = ? AND form_id = ?`, string(site), formID).Scan(&ms)
	if err != nil {
		return time.Time{}, notFound(err, "watermark of form "+formID)
	}
	return time.UnixMilli(ms).UTC(), nil
}

// LeadAdsWatermarkSet records that every lead of the form created up to
// until is in; it never moves a watermark back.
func (q Q) LeadAdsWatermarkSet(ctx context.Context, site model.SiteID, pageID, formID string, until, now time.Time) error {
	_, err := q.exec(ctx, `/* Store.LeadAdsWatermarkSet */ INSERT INTO leadads_watermarks (site_id, form_id, page_id, until_ms, updated_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (site_id, form_id) DO UPDATE SET
			until_ms = CASE WHEN excluded.until_ms > leadads_watermarks.until_ms THEN excluded.until_ms ELSE leadads_watermarks.until_ms END,
			page_id = excluded.page_id, updated_at = excluded.updated_at`,
		string(site), formID, pageID, until.UnixMilli(), now.UnixMilli())
	if err != nil {
		return fmt.Errorf("store: watermark of form %s: %w", formID, err)
	}
	return nil
}
