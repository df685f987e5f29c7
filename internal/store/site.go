package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

const siteColumns = `id, name, api_key_hash, pinned, settings, access_token, paused_reason, paused_at, created_at, updated_at`

// SiteUpsert creates or replaces a site. A change of access token lifts a
// pause: the new token gets its chance.
func (q Q) SiteUpsert(ctx context.Context, s *model.Site, now time.Time) error {
	settings, err := json.Marshal(s.Settings)
	if err != nil {
		return fmt.Errorf("store: site settings: %w", err)
	}
	_, err = q.exec(ctx, `/* Store.SiteUpsert */
		INSERT INTO sites (`+siteColumns+`) VALUES (?, ?, ?, ?, ?, ?, '', NULL, ?, ?)
		ON CONFLICT (id) DO UPDATE SET
			name = excluded.name, api_key_hash = excluded.api_key_hash, pinned = excluded.pinned,
			settings = excluded.settings, access_token = excluded.access_token,
			paused_reason = CASE WHEN sites.access_token = excluded.access_token THEN sites.paused_reason ELSE '' END,
			paused_at = CASE WHEN sites.access_token = excluded.access_token THEN sites.paused_at ELSE NULL END,
			updated_at = excluded.updated_at`,
		string(s.ID), s.Name, s.APIKeyHash, boolInt(s.Pinned), string(settings), s.AccessToken,
		now.UnixMilli(), now.UnixMilli())
	if err != nil {
		return fmt.Errorf("store: site %s: %w", s.ID, err)
	}
	return nil
}

// SiteByID returns one site.
func (q Q) SiteByID(ctx context.Context, id model.SiteID) (*model.Site, error) {
	row := q.queryRow(ctx, `/* Store.SiteByID */ SELECT `+siteColumns+` FROM sites WHERE id = ?`, string(id))
	s, err := scanSite(row)
	if err != nil {
		return nil, notFound(err, "site "+string(id))
	}
	return s, nil
}

// SiteList returns every site by id.
func (q Q) SiteList(ctx context.Context) ([]*model.Site, error) {
	rows, err := q.query(ctx, `/* Store.SiteList */ SELECT `+siteColumns+` FROM sites ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: sites: %w", err)
	}
	defer rows.Close()
	var list []*model.Site
	for rows.Next() {
		s, err := scanSite(rows)
		if err != nil {
			return nil, fmt.Errorf("store: sites: %w", err)
		}
		list = append(list, s)
	}
	return list, rows.Err()
}

// SitePause stops delivery for a site until its token changes.
func (q Q) SitePause(ctx context.Context, id model.SiteID, reason string, now time.Time) error {
	_, err := q.exec(ctx, `/* Store.SitePause */ UPDATE sites SET paused_reason = ?, paused_at = ? WHERE id = ?`,
		reason, now.UnixMilli(), string(id))
	if err != nil {
		return fmt.Errorf("store: pause site %s: %w", id, err)
	}
	return nil
}

type scanner interface{ Scan(dest ...any) error }

func scanSite(r scanner) (*model.Site, error) {
	var (
		s                    model.Site
		id, settings         string
		pinned               int
		pausedAt             sql.NullInt64
		createdAt, updatedAt int64
	)
	if err := r.Scan(&id, &s.Name, &s.APIKeyHash, &pinned, &settings, &s.AccessToken, &s.PausedReason,
		&pausedAt, &createdAt, &updatedAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(settings), &s.Settings); err != nil {
		return nil, fmt.Errorf("site %s settings: %w", id, err)
	}
	s.ID = model.SiteID(id)
	s.Pinned = pinned != 0
	s.PausedAt = fromMS(pausedAt)
	s.CreatedAt = time.UnixMilli(createdAt).UTC()
	s.UpdatedAt = time.UnixMilli(updatedAt).UTC()
	return &s, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// SiteByAPIKeyHash returns the site whose API key has the given hash.
func (q Q) SiteByAPIKeyHash(ctx context.Context, hash string) (*model.Site, error) {
	row := q.queryRow(ctx, `/* Store.SiteByAPIKeyHash */ SELECT `+siteColumns+` FROM sites WHERE api_key_hash = ? AND api_key_hash <> ''`, hash)
	s, err := scanSite(row)
	if err != nil {
		return nil, notFound(err, "site by API key")
	}
	return s, nil
}
