package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// secretContext binds a sealed platform secret to its site and name: a
// value copied to another site's row, or to another name, does not open.
func secretContext(id model.SiteID, name string) string {
	return "site secret:" + string(id) + ":" + name
}

// siteSecretsWrite applies a site's secrets as an edit gives them: a name
// with a value is stored sealed, a name with "" is cleared, a name not
// given stays as it was. It returns the platforms (the name's part before
// the first dot) whose secrets changed. The site's row must exist.
func (q Q) siteSecretsWrite(ctx context.Context, s *model.Site, now time.Time) (changed []string, err error) {
	if len(s.Secrets) == 0 {
		return nil, nil
	}
	old, err := q.siteSecrets(ctx, s.ID, true)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for name, v := range s.Secrets {
		was, had := old[name]
		switch {
		case v == "" && !had, v != "" && had && was == v:
			continue
		case v == "":
			if _, err := q.exec(ctx, `/* Store.SiteUpsert */ DELETE FROM site_secrets WHERE site_id = ? AND name = ?`,
				string(s.ID), name); err != nil {
				return nil, fmt.Errorf("store: site %s secret %s: %w", s.ID, name, err)
			}
		default:
			if q.box == nil {
				return nil, fmt.Errorf("store: site %s: no key to encrypt its secret %s: set secret_key (or, on SQLite, let cleanads keep a key file)", s.ID, name)
			}
			if _, err := q.exec(ctx, `/* Store.SiteUpsert */ INSERT INTO site_secrets (site_id, name, sealed, updated_at)
				VALUES (?, ?, ?, ?) ON CONFLICT (site_id, name) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at`,
				string(s.ID), name, q.box.Seal(secretContext(s.ID, name), v), now.UnixMilli()); err != nil {
				return nil, fmt.Errorf("store: site %s secret %s: %w", s.ID, name, err)
			}
		}
		p, _, _ := strings.Cut(name, ".")
		if !seen[p] {
			seen[p] = true
			changed = append(changed, p)
		}
	}
	return changed, nil
}

// siteSecrets returns a site's secrets in clear by name. A value that no
// longer opens (another secret_key) fails, unless lenient: an edit that
// replaces it must be able to.
func (q Q) siteSecrets(ctx context.Context, id model.SiteID, lenient bool) (map[string]string, error) {
	out := map[string]string{}
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		var name, sealed string
		if err := r.Scan(&name, &sealed); err != nil {
			return err
		}
		v, err := q.openSiteSecret(id, name, sealed)
		if err != nil && !lenient {
			return err
		}
		if err == nil {
			out[name] = v
		}
		return nil
	}, `/* Store.SiteSecrets */ SELECT name, sealed FROM site_secrets WHERE site_id = ? ORDER BY name`, string(id))
	if err != nil {
		return nil, fmt.Errorf("site %s secrets: %w", id, err)
	}
	return out, nil
}

// siteSecretsAll returns every site's secrets in clear, by site: the site
// list reads them in one statement.
func (q Q) siteSecretsAll(ctx context.Context) (map[model.SiteID]map[string]string, error) {
	out := map[model.SiteID]map[string]string{}
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		var id, name, sealed string
		if err := r.Scan(&id, &name, &sealed); err != nil {
			return err
		}
		v, err := q.openSiteSecret(model.SiteID(id), name, sealed)
		if err != nil {
			return err
		}
		if out[model.SiteID(id)] == nil {
			out[model.SiteID(id)] = map[string]string{}
		}
		out[model.SiteID(id)][name] = v
		return nil
	}, `/* Store.SiteSecrets */ SELECT site_id, name, sealed FROM site_secrets ORDER BY site_id, name`)
	if err != nil {
		return nil, fmt.Errorf("site secrets: %w", err)
	}
	return out, nil
}

func (q Q) openSiteSecret(id model.SiteID, name, sealed string) (string, error) {
	if q.box == nil {
		return "", fmt.Errorf("site %s: its secret %s is encrypted and no secret_key is set", id, name)
	}
	v, err := q.box.Open(secretContext(id, name), sealed)
	if err != nil {
		return "", fmt.Errorf("site %s secret %s: %w", id, name, err)
	}
	return v, nil
}

// sitePlatformsChanged returns the platforms whose settings document
// differs between the stored site's settings and the new ones (compared
// as compact JSON, so spacing is no change); every platform of a new
// site.
func (q Q) sitePlatformsChanged(ctx context.Context, s *model.Site) ([]string, error) {
	var raw string
	err := q.queryRow(ctx, `/* Store.SiteUpsert */ SELECT settings FROM sites WHERE id = ?`, string(s.ID)).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: site %s: %w", s.ID, err)
	}
	var old model.SiteSettings
	_ = json.Unmarshal([]byte(raw), &old) // unreadable: every platform changed
	compact := func(m json.RawMessage) string {
		var b bytes.Buffer
		if json.Compact(&b, m) != nil {
			return string(m)
		}
		return b.String()
	}
	var changed []string
	for name, v := range s.Settings.Platforms {
		if compact(v) != compact(old.Platforms[name]) {
			changed = append(changed, name)
		}
	}
	for name := range old.Platforms {
		if _, ok := s.Settings.Platforms[name]; !ok {
			changed = append(changed, name)
		}
	}
	return changed, nil
}
