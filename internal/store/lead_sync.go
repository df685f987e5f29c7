package store

import (
	"context"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// The CRM sync's reads: a site's leads in the order they last changed, and
// every lead of a site matching one key. Kept apart from lead.go, which
// serves intake and the inbox.

// changedAt is a lead's time of last change: its last history entry's, or
// its reception's (a trigger on lead_history keeps changed_at, migration
// 0270; intake leaves it NULL).
// The index leads_site_changed is on this very expression.
const changedAt = `COALESCE(changed_at, received_at)`

// LeadChange is a lead with the time it last changed.
type LeadChange struct {
	Lead      *model.Lead
	ChangedAt time.Time
}

// LeadChangesParams select a page of a site's changed leads, oldest change
// first. A page starts at Since (inclusive) or, when AfterID is set, after
// the lead (After, AfterID) that ended the previous page; it ends at Until
// (inclusive), the time up to which the caller knows every write has
// committed.
type LeadChangesParams struct {
	Site    model.SiteID
	Since   time.Time
	After   time.Time
	AfterID model.LeadID
	Until   time.Time
	Limit   int
}

// LeadChanges returns a page of a site's leads by their time of last change
// and id, oldest first: keyset paging, so a lead changed while a client
// pages moves to the end of the list instead of shifting the pages.
func (q Q) LeadChanges(ctx context.Context, p LeadChangesParams) ([]LeadChange, error) {
	where, args := `site_id = ? AND `+changedAt+` <= ?`, []any{string(p.Site), p.Until.UnixMilli()}
	if p.AfterID != "" {
		where += ` AND (` + changedAt + ` > ? OR (` + changedAt + ` = ? AND id > ?))`
		args = append(args, p.After.UnixMilli(), p.After.UnixMilli(), string(p.AfterID))
	} else {
		where += ` AND ` + changedAt + ` >= ?`
		args = append(args, p.Since.UnixMilli())
	}
	if p.Limit <= 0 || p.Limit > 500 {
		p.Limit = 100
	}
	rows, err := q.query(ctx, `/* Store.LeadChanges */ SELECT `+leadColumns+`, `+changedAt+` FROM leads
		WHERE `+where+` ORDER BY `+changedAt+`, id LIMIT ?`, append(args, p.Limit)...)
	return scanAll(rows, err, "changed leads", scanChange)
}

// scanChange reads a lead and then its time of last change.
func scanChange(r scanner) (LeadChange, error) {
	var ms int64
	l, err := scanLead(withExtra{r, []any{&ms}})
	if err != nil {
		return LeadChange{}, err
	}
	return LeadChange{Lead: l, ChangedAt: time.UnixMilli(ms).UTC()}, nil
}

// LeadsMatching returns the site's leads matching the look-up (one key
// set, as for LeadFind), newest first, at most limit.
func (q Q) LeadsMatching(ctx context.Context, site model.SiteID, k LeadLookup, limit int) ([]LeadChange, error) {
	col, val, err := k.column()
	if err != nil {
		return nil, err
	}
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	// The same shape as LeadFind's, so the same indexes serve it.
	rows, err := q.query(ctx, `/* Store.LeadsMatching */ SELECT `+leadColumns+`, `+changedAt+` FROM leads
		WHERE site_id = ? AND `+keyIs(col)+` AND received_at >= ? ORDER BY received_at DESC, id DESC LIMIT ?`,
		string(site), val, k.Since.UnixMilli(), limit)
	return scanAll(rows, err, "leads by "+col, scanChange)
}

// withExtra scans a row into the lead's columns and then extra ones
// selected after them.
type withExtra struct {
	r     scanner
	extra []any
}

func (w withExtra) Scan(dest ...any) error { return w.r.Scan(append(dest, w.extra...)...) }
