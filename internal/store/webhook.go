package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// ReceiptInsert claims an inbound webhook item (a WhatsApp message, a call)
// by its source and id. An item already claimed is left alone and inserted
// reports false: Meta and call trackers retry, and each item is handled
// once. Claim it in the transaction that handles it, so a failure frees it
// for the retry.
func (q Q) ReceiptInsert(ctx context.Context, source, externalID string, now time.Time) (inserted bool, err error) {
	res, err := q.exec(ctx, `/* Store.ReceiptInsert */ INSERT INTO webhook_receipts (source, external_id, received_at)
		VALUES (?, ?, ?) ON CONFLICT (source, external_id) DO NOTHING`, source, externalID, now.UnixMilli())
	if err != nil {
		return false, fmt.Errorf("store: insert receipt: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// ReceiptsDeleteBefore deletes the receipts of items received before the
// time, in batches (through webhook_receipts_received), and returns how
// many went: a retry of such an item would be handled again, so the time
// must be older than any platform retries (config.MinReceiptDays).
func (q Q) ReceiptsDeleteBefore(ctx context.Context, before time.Time) (int, error) {
	return q.deleteBatches(ctx, `/* Store.ReceiptsDeleteBefore */ DELETE FROM webhook_receipts WHERE (source, external_id) IN
		(SELECT source, external_id FROM webhook_receipts WHERE received_at < ? LIMIT ?)`, before.UnixMilli())
}

// ReceiptSetOutcome records what became of a claimed item.
func (q Q) ReceiptSetOutcome(ctx context.Context, source, externalID, outcome string, site model.SiteID, lead model.LeadID) error {
	_, err := q.exec(ctx, `/* Store.ReceiptSetOutcome */ UPDATE webhook_receipts SET outcome = ?, site_id = ?, lead_id = ?
		WHERE source = ? AND external_id = ?`, outcome, string(site), string(lead), source, externalID)
	if err != nil {
		return fmt.Errorf("store: receipt outcome: %w", err)
	}
	return nil
}

// ReceiptOutcome returns what became of an item: its outcome and lead.
func (q Q) ReceiptOutcome(ctx context.Context, source, externalID string) (outcome string, lead model.LeadID, err error) {
	var l string
	err = q.queryRow(ctx, `/* Store.ReceiptOutcome */ SELECT outcome, lead_id FROM webhook_receipts
		WHERE source = ? AND external_id = ?`, source, externalID).Scan(&outcome, &l)
	if err != nil {
		return "", "", notFound(err, "receipt "+source)
	}
	return outcome, model.LeadID(l), nil
}

// WhatsAppContactUpsert remembers which phone a WhatsApp business-scoped
// user id belongs to, and the lead it was last matched to.
func (q Q) WhatsAppContactUpsert(ctx context.Context, site model.SiteID, userID, phoneKey string, lead model.LeadID, now time.Time) error {
	_, err := q.exec(ctx, `/* Store.WhatsAppContactUpsert */ INSERT INTO whatsapp_contacts
		(site_id, user_id, phone_key, lead_id, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (site_id, user_id) DO UPDATE SET phone_key = excluded.phone_key, lead_id = excluded.lead_id,
			updated_at = excluded.updated_at`, string(site), userID, phoneKey, string(lead), now.UnixMilli())
	if err != nil {
		return fmt.Errorf("store: whatsapp contact: %w", err)
	}
	return nil
}

// WhatsAppContactPhone returns the phone key remembered for a WhatsApp
// business-scoped user id on a site.
func (q Q) WhatsAppContactPhone(ctx context.Context, site model.SiteID, userID string) (string, error) {
	var key string
	err := q.queryRow(ctx, `/* Store.WhatsAppContactPhone */ SELECT phone_key FROM whatsapp_contacts
		WHERE site_id = ? AND user_id = ?`, string(site), userID).Scan(&key)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("whatsapp user: %w", model.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("store: whatsapp contact: %w", err)
	}
	return key, nil
}
