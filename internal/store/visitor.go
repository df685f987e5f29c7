package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

const visitorColumns = `site_id, id, fbc, fbc_at, fbp, first_seen, last_seen, last_ip, last_user_agent, consent`

// VisitorByID returns one visitor of a site.
func (q Q) VisitorByID(ctx context.Context, site model.SiteID, id string) (*model.Visitor, error) {
	row := q.queryRow(ctx, `/* Store.VisitorByID */ SELECT `+visitorColumns+` FROM visitors WHERE site_id = ? AND id = ?`,
		string(site), id)
	v, err := scanVisitor(row)
	if err != nil {
		return nil, notFound(err, "visitor "+id)
	}
	return v, nil
}

// VisitorUpsert creates a visitor or replaces its click identity, last
// sighting and consent; its first sighting never changes.
func (q Q) VisitorUpsert(ctx context.Context, v *model.Visitor) error {
	_, err := q.exec(ctx, `/* Store.VisitorUpsert */ INSERT INTO visitors (`+visitorColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (site_id, id) DO UPDATE SET
			fbc = excluded.fbc, fbc_at = excluded.fbc_at, fbp = excluded.fbp, last_seen = excluded.last_seen,
			last_ip = excluded.last_ip, last_user_agent = excluded.last_user_agent, consent = excluded.consent`,
		string(v.SiteID), v.ID, v.FBC, ms(v.FBCAt), v.FBP, v.FirstSeen.UnixMilli(), v.LastSeen.UnixMilli(),
		v.LastIP, v.LastUserAgent, nullBool(v.Consent))
	if err != nil {
		return fmt.Errorf("store: visitor %s: %w", v.ID, err)
	}
	return nil
}

// VisitorSetConsent records a visitor's consent answer.
func (q Q) VisitorSetConsent(ctx context.Context, site model.SiteID, id string, consent bool, now time.Time) error {
	_, err := q.exec(ctx, `/* Store.VisitorSetConsent */ UPDATE visitors SET consent = ?, last_seen = ? WHERE site_id = ? AND id = ?`,
		boolInt(consent), now.UnixMilli(), string(site), id)
	if err != nil {
		return fmt.Errorf("store: visitor %s consent: %w", id, err)
	}
	return nil
}

func scanVisitor(r scanner) (*model.Visitor, error) {
	var (
		v                   model.Visitor
		site                string
		fbcAt, consent      sql.NullInt64
		firstSeen, lastSeen int64
	)
	if err := r.Scan(&site, &v.ID, &v.FBC, &fbcAt, &v.FBP, &firstSeen, &lastSeen, &v.LastIP, &v.LastUserAgent, &consent); err != nil {
		return nil, err
	}
	v.SiteID = model.SiteID(site)
	v.FBCAt = fromMS(fbcAt)
	v.FirstSeen, v.LastSeen = time.UnixMilli(firstSeen).UTC(), time.UnixMilli(lastSeen).UTC()
	if consent.Valid {
		b := consent.Int64 != 0
		v.Consent = &b
	}
	return &v, nil
}

// nullBool stores an optional yes/no as 1, 0 or NULL.
func nullBool(b *bool) any {
	if b == nil {
		return nil
	}
	return boolInt(*b)
}
