package store

import (
	"context"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// FormTokenUse records that a lead used a form token's nonce. A nonce the
// site has seen before fails with model.ErrConflict: each token is accepted
// once. It never aborts the surrounding transaction (PostgreSQL would on a
// failed INSERT), so the lead can still be stored as a replay.
func (q Q) FormTokenUse(ctx context.Context, site model.SiteID, nonce string, lead model.LeadID, now time.Time) error {
	res, err := q.exec(ctx, `/* Store.FormTokenUse */ INSERT INTO form_token_uses (site_id, nonce, lead_id, used_at)
		VALUES (?, ?, ?, ?) ON CONFLICT (site_id, nonce) DO NOTHING`,
		string(site), nonce, string(lead), now.UnixMilli())
	if err != nil {
		return fmt.Errorf("store: form token use: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNonceUsed
	}
	return nil
}
