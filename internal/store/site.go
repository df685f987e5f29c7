package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/secret"
)

const siteColumns = `id, name, api_key_hash, pinned, settings, access_token, created_at, updated_at, lead_ads_secret`

// siteSelect reads a site with its Meta pause, which destination_pauses
// keeps as every platform's.
const siteSelect = `SELECT id, name, api_key_hash, pinned, settings, access_token,
	COALESCE(p.reason, ''), p.paused_at, created_at, updated_at, lead_ads_secret
	FROM sites LEFT JOIN destination_pauses p ON p.site_id = sites.id AND p.destination = 'meta'`

// SiteUpsert creates or replaces a site. A change of access token lifts a
// pause: the new token gets its chance. The token is stored encrypted.
// Platform secrets (s.Secrets) are stored sealed as an edit gives them: a
// name with a value replaces it, a name with "" clears it, a name not
// given stays as it was. A platform whose settings document or secrets
// change has its pause lifted, as a new token lifts Meta's.
func (q Q) SiteUpsert(ctx context.Context, s *model.Site, now time.Time) error {
	settings, err := json.Marshal(s.Settings)
	if err != nil {
		return fmt.Errorf("store: site settings: %w", err)
	}
	token, err := q.sealToken(s.ID, s.AccessToken)
	if err != nil {
		return err
	}
	leadAds, err := q.sealLeadAds(s.ID, s.LeadAds)
	if err != nil {
		return err
	}
	if err := q.resumeLeadAdsOnNewToken(ctx, s); err != nil {
		return err
	}
	if err := q.resumeGoogleOnChange(ctx, s); err != nil {
		return err
	}
	if err := q.resumeMetaOnNewToken(ctx, s, token); err != nil {
		return err
	}
	changed, err := q.sitePlatformsChanged(ctx, s)
	if err != nil {
		return err
	}
	_, err = q.exec(ctx, `/* Store.SiteUpsert */
		INSERT INTO sites (`+siteColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET
			name = excluded.name, api_key_hash = excluded.api_key_hash, pinned = excluded.pinned,
			settings = excluded.settings, access_token = excluded.access_token, lead_ads_secret = excluded.lead_ads_secret,
			updated_at = excluded.updated_at`,
		string(s.ID), s.Name, s.APIKeyHash, boolInt(s.Pinned), string(settings), token,
		now.UnixMilli(), now.UnixMilli(), leadAds)
	if err != nil {
		return fmt.Errorf("store: site %s: %w", s.ID, err)
	}
	secrets, err := q.siteSecretsWrite(ctx, s, now)
	if err != nil {
		return err
	}
	for _, p := range append(changed, secrets...) {
		if err := q.DestinationResume(ctx, model.Share{Site: s.ID, Destination: p}); err != nil {
			return err
		}
	}
	return nil
}

// SiteSettingsByID returns one site's settings document alone: read
// without its secrets, it is readable even when they are sealed with
// another key.
func (q Q) SiteSettingsByID(ctx context.Context, id model.SiteID) (model.SiteSettings, error) {
	var raw string
	var st model.SiteSettings
	err := q.queryRow(ctx, `/* Store.SiteSettingsByID */ SELECT settings FROM sites WHERE id = ?`, string(id)).Scan(&raw)
	if err != nil {
		return st, notFound(err, "site "+string(id))
	}
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return st, fmt.Errorf("store: site %s settings: %w", id, err)
	}
	return st, nil
}

// SiteByID returns one site.
func (q Q) SiteByID(ctx context.Context, id model.SiteID) (*model.Site, error) {
	row := q.queryRow(ctx, `/* Store.SiteByID */ `+siteSelect+` WHERE id = ?`, string(id))
	s, err := q.scanSite(row)
	if err != nil {
		return nil, notFound(err, "site "+string(id))
	}
	if s.Secrets, err = q.siteSecrets(ctx, s.ID, false); err != nil {
		return nil, err
	}
	return s, nil
}

// SiteList returns every site by id.
func (q Q) SiteList(ctx context.Context) ([]*model.Site, error) {
	rows, err := q.query(ctx, `/* Store.SiteList */ `+siteSelect+` ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: sites: %w", err)
	}
	defer rows.Close()
	var list []*model.Site
	for rows.Next() {
		s, err := q.scanSite(rows)
		if err != nil {
			return nil, fmt.Errorf("store: sites: %w", err)
		}
		list = append(list, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: sites: %w", err)
	}
	rows.Close()
	// In one statement after the sites': a connection reads one result at
	// a time.
	secrets, err := q.siteSecretsAll(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range list {
		s.Secrets = secrets[s.ID]
		if s.Secrets == nil {
			s.Secrets = map[string]string{}
		}
	}
	return list, nil
}

// SitePause stops delivery to Meta for a site until its token changes; an
// empty reason lifts the pause.
func (q Q) SitePause(ctx context.Context, id model.SiteID, reason string, now time.Time) error {
	sh := model.Share{Site: id, Destination: model.DestinationMeta}
	if reason == "" {
		return q.DestinationResume(ctx, sh)
	}
	return q.DestinationPauseSet(ctx, sh, reason, now)
}

// resumeMetaOnNewToken lifts a site's Meta pause when its access token
// changes (sealed is the new one as stored): the new token gets its
// chance. Sealing is not deterministic, so the clear tokens are compared.
func (q Q) resumeMetaOnNewToken(ctx context.Context, s *model.Site, sealed string) error {
	var stored string
	err := q.queryRow(ctx, `/* Store.SiteUpsert */ SELECT access_token FROM sites WHERE id = ?`, string(s.ID)).Scan(&stored)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: site %s: %w", s.ID, err)
	}
	if stored == sealed {
		return nil
	}
	if old, err := q.openToken(s.ID, stored); err == nil && old == s.AccessToken {
		return nil
	}
	return q.DestinationResume(ctx, model.Share{Site: s.ID, Destination: model.DestinationMeta})
}

type scanner interface{ Scan(dest ...any) error }

// scanSite reads a site row and opens its sealed access token, so the rest
// of the code sees the clear token in memory only.
func (q Q) scanSite(r scanner) (*model.Site, error) {
	var (
		s                    model.Site
		id, settings         string
		leadAds              string
		pinned               int
		pausedAt             sql.NullInt64
		createdAt, updatedAt int64
	)
	if err := r.Scan(&id, &s.Name, &s.APIKeyHash, &pinned, &settings, &s.AccessToken, &s.PausedReason,
		&pausedAt, &createdAt, &updatedAt, &leadAds); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(settings), &s.Settings); err != nil {
		return nil, fmt.Errorf("site %s settings: %w", id, err)
	}
	s.ID = model.SiteID(id)
	token, err := q.openToken(s.ID, s.AccessToken)
	if err != nil {
		return nil, err
	}
	s.AccessToken = token
	if s.LeadAds, err = q.openLeadAds(s.ID, leadAds); err != nil {
		return nil, err
	}
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
	row := q.queryRow(ctx, `/* Store.SiteByAPIKeyHash */ `+siteSelect+` WHERE api_key_hash = ? AND api_key_hash <> ''`, hash)
	s, err := q.scanSite(row)
	if err != nil {
		return nil, notFound(err, "site by API key")
	}
	if s.Secrets, err = q.siteSecrets(ctx, s.ID, false); err != nil {
		return nil, err
	}
	return s, nil
}

// tokenContext binds a sealed token to its site: a value copied to another
// site's row does not open.
func tokenContext(id model.SiteID) string { return "site access_token:" + string(id) }

// sealToken encrypts a site's access token for storage.
func (q Q) sealToken(id model.SiteID, token string) (string, error) {
	if token == "" {
		return "", nil
	}
	if q.box == nil {
		return "", fmt.Errorf("store: site %s: no key to encrypt its Meta access token: set secret_key (or, on SQLite, let cleanads keep a key file)", id)
	}
	return q.box.Seal(tokenContext(id), token), nil
}

// openToken decrypts a stored access token; a clear one (stored before
// encryption) is returned as it is until SiteSealTokens seals it.
func (q Q) openToken(id model.SiteID, stored string) (string, error) {
	if !secret.IsSealed(stored) {
		return stored, nil
	}
	if q.box == nil {
		return "", fmt.Errorf("site %s: its Meta access token is encrypted and no secret_key is set", id)
	}
	token, err := q.box.Open(tokenContext(id), stored)
	if err != nil {
		return "", fmt.Errorf("site %s: %w", id, err)
	}
	return token, nil
}

// SiteSealTokens encrypts every access token still stored in clear (from
// before encryption) and checks that every sealed one opens with this
// key. It is idempotent: serve and migrate run it at every start. It
// returns how many tokens it sealed.
func (db *DB) SiteSealTokens(ctx context.Context) (int, error) {
	sealed := 0
	err := db.InTx(ctx, func(tx *Tx) error {
		rows, err := tx.query(ctx, `/* Store.SiteSealTokens */ SELECT id, access_token FROM sites WHERE access_token <> ''`)
		if err != nil {
			return fmt.Errorf("store: sealing tokens: %w", err)
		}
		type row struct{ id, token string }
		var clear []row
		var bad []string
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.token); err != nil {
				rows.Close()
				return fmt.Errorf("store: sealing tokens: %w", err)
			}
			if !secret.IsSealed(r.token) {
				clear = append(clear, r)
			} else if _, err := tx.openToken(model.SiteID(r.id), r.token); err != nil {
				bad = append(bad, r.id)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("store: sealing tokens: %w", err)
		}
		if len(bad) > 0 {
			return fmt.Errorf("store: the Meta access tokens of sites %v do not open with this secret_key: "+
				"set the secret_key (or key file) they were stored with, or set their tokens again", bad)
		}
		// The platform secrets were sealed with the same key: a wrong
		// one is said at the start, not at the first send.
		if _, err := tx.siteSecretsAll(ctx); err != nil {
			return fmt.Errorf("store: %w: set the secret_key (or key file) it was stored with, or set it again on the site's page", err)
		}
		for _, r := range clear {
			v, err := tx.sealToken(model.SiteID(r.id), r.token)
			if err != nil {
				return err
			}
			// Only the stored form changes: the pause state stays.
			if _, err := tx.exec(ctx, `/* Store.SiteSealTokens */ UPDATE sites SET access_token = ? WHERE id = ? AND access_token = ?`,
				v, r.id, r.token); err != nil {
				return fmt.Errorf("store: seal token of site %s: %w", r.id, err)
			}
			sealed++
		}
		return nil
	})
	return sealed, err
}

// leadAdsContext binds sealed Lead Ads secrets to their site.
func leadAdsContext(id model.SiteID) string { return "site lead_ads:" + string(id) }

// sealLeadAds encrypts a site's Lead Ads secrets, as one value, for
// storage; none is "".
func (q Q) sealLeadAds(id model.SiteID, l model.LeadAdsSecrets) (string, error) {
	if l == (model.LeadAdsSecrets{}) {
		return "", nil
	}
	if q.box == nil {
		return "", fmt.Errorf("store: site %s: no key to encrypt its Lead Ads secrets: set secret_key (or, on SQLite, let cleanads keep a key file)", id)
	}
	b, err := json.Marshal(l)
	if err != nil {
		return "", fmt.Errorf("store: site %s lead ads: %w", id, err)
	}
	return q.box.Seal(leadAdsContext(id), string(b)), nil
}

// openLeadAds decrypts a site's stored Lead Ads secrets.
func (q Q) openLeadAds(id model.SiteID, stored string) (model.LeadAdsSecrets, error) {
	var l model.LeadAdsSecrets
	if stored == "" {
		return l, nil
	}
	if q.box == nil {
		return l, fmt.Errorf("site %s: its Lead Ads secrets are encrypted and no secret_key is set", id)
	}
	clear, err := q.box.Open(leadAdsContext(id), stored)
	if err != nil {
		return l, fmt.Errorf("site %s lead ads: %w", id, err)
	}
	if err := json.Unmarshal([]byte(clear), &l); err != nil {
		return l, fmt.Errorf("site %s lead ads: %w", id, err)
	}
	return l, nil
}

// resumeLeadAdsOnNewToken lifts the pause of the site's Lead Ads fetches
// when its token changes: the new token gets its chance, as a new Meta
// token does.
func (q Q) resumeLeadAdsOnNewToken(ctx context.Context, s *model.Site) error {
	var stored string
	err := q.queryRow(ctx, `/* Store.SiteUpsert */ SELECT lead_ads_secret FROM sites WHERE id = ?`, string(s.ID)).Scan(&stored)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: site %s: %w", s.ID, err)
	}
	// A value that no longer opens is replaced below; its pause goes with
	// it.
	if old, err := q.openLeadAds(s.ID, stored); err == nil && old.AccessToken == s.LeadAds.AccessToken {
		return nil
	}
	return q.DestinationResume(ctx, model.Share{Site: s.ID, Destination: model.DestinationMetaLeadgen})
}
