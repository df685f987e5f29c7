package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// clickKept is the condition of a lead that still holds its click
// identity (its platform cookies come with a browser's request, so with
// an IP and a user agent; a lead whose source posted only cookies loses
// them with its contact details, after retention.lead_days): the
// predicate of the partial index leads_click_kept (migration 0500),
// written the same way here so that SQLite's planner, which matches a
// partial index by its terms, reads that index.
const clickKept = `(user_agent <> '' OR client_ip <> '' OR fbc <> '' OR fbp <> '')`

const leadsClickToClearQuery = `/* Store.LeadsClickToClear */ SELECT id, user_agent, source_detail FROM leads
	WHERE received_at < ? AND ` + clickKept + ` ORDER BY received_at LIMIT ?`

// LeadClick is what clearing a lead's click identity reads of it: the user
// agent (for its device family) and the source detail (its platform
// cookies go, the rest stays).
type LeadClick struct {
	ID        model.LeadID
	UserAgent string
	Detail    map[string]string
	// detail is the source detail as read: LeadClickClear changes the lead
	// only if it is still that.
	detail string
}

// LeadsClickToClear returns up to limit leads received before the time
// that still hold their click identity (IP, user agent, fbc, fbp, the ad
// platforms' cookies), oldest first, through the partial index that holds
// only such leads: a run reads no lead cleared before.
func (q Q) LeadsClickToClear(ctx context.Context, before time.Time, limit int) ([]LeadClick, error) {
	var list []LeadClick
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		var (
			c  LeadClick
			id string
		)
		if err := r.Scan(&id, &c.UserAgent, &c.detail); err != nil {
			return err
		}
		c.ID = model.LeadID(id)
		if err := json.Unmarshal([]byte(c.detail), &c.Detail); err != nil {
			return fmt.Errorf("lead %s source detail: %w", id, err)
		}
		list = append(list, c)
		return nil
	}, leadsClickToClearQuery, before.UnixMilli(), limit)
	if err != nil {
		return nil, fmt.Errorf("store: leads to clear the click of: %w", err)
	}
	return list, nil
}

// LeadClickClear removes the click identity of the lead c (read by
// LeadsClickToClear): its IP, user agent, fbc and fbp, and sets its source
// detail to detail (c's, without the platform cookies and with the device
// family). The click ids (fbclid, gclid), the page and the referrer stay:
// the campaign report and the owner's story of the lead read where it came
// from in them. A lead whose source detail changed since it was read is
// left for the next run, which reads it again; it reports whether the lead
// was cleared.
func (q Q) LeadClickClear(ctx context.Context, c LeadClick, detail map[string]string) (bool, error) {
	sd, err := json.Marshal(nonNilMap(detail))
	if err != nil {
		return false, fmt.Errorf("store: lead source detail: %w", err)
	}
	res, err := q.exec(ctx, `/* Store.LeadClickClear */ UPDATE leads SET user_agent = '', client_ip = '', fbc = '', fbp = '',
		source_detail = ? WHERE id = ? AND source_detail = ?`, string(sd), string(c.ID), c.detail)
	if err != nil {
		return false, fmt.Errorf("store: clear the click of lead %s: %w", c.ID, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}
