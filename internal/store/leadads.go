package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// leadgenKey is how an erased leadgen id is kept: its SHA-256, in hex.
func leadgenKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// LeadAdsErase records that the site's Lead Ads lead of the leadgen id was
// erased, and deletes the fetch jobs that name it: the lead is never read
// from Meta again. (A fetch job's event name is "leadgen": the outbox's
// unique index serves the delete.)
func (q Q) LeadAdsErase(ctx context.Context, site model.SiteID, leadgenID string, now time.Time) error {
	if _, err := q.exec(ctx, `/* Store.LeadAdsErase */ INSERT INTO leadads_erased (site_id, leadgen_key, erased_at)
		VALUES (?, ?, ?) ON CONFLICT (site_id, leadgen_key) DO NOTHING`,
		string(site), leadgenKey(leadgenID), now.UnixMilli()); err != nil {
		return fmt.Errorf("store: erase Lead Ads lead: %w", err)
	}
	if _, err := q.exec(ctx, `/* Store.LeadAdsErase */ DELETE FROM delivery_state WHERE id IN (SELECT id FROM delivery_events
		WHERE site_id = ? AND event_name = 'leadgen' AND event_id = ? AND destination = ?)`,
		string(site), leadgenID, string(model.DestinationMetaLeadgen)); err != nil {
		return fmt.Errorf("store: erase Lead Ads fetch jobs: %w", err)
	}
	if _, err := q.exec(ctx, `/* Store.LeadAdsErase */ DELETE FROM delivery_events
		WHERE site_id = ? AND event_name = 'leadgen' AND event_id = ? AND destination = ?`,
		string(site), leadgenID, string(model.DestinationMetaLeadgen)); err != nil {
		return fmt.Errorf("store: erase Lead Ads fetch jobs: %w", err)
	}
	return nil
}

// LeadAdsErased reports whether the site's Lead Ads lead of the leadgen id
// was erased.
func (q Q) LeadAdsErased(ctx context.Context, site model.SiteID, leadgenID string) (bool, error) {
	var n int
	err := q.queryRow(ctx, `/* Store.LeadAdsErased */ SELECT COUNT(*) FROM leadads_erased
		WHERE site_id = ? AND leadgen_key = ?`, string(site), leadgenKey(leadgenID)).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: erased Lead Ads lead: %w", err)
	}
	return n > 0, nil
}
