package app

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// ErrPinned is returned for a change to a site the config file defines: the
// file wins at every start, so an edit elsewhere would be lost.
var ErrPinned = fmt.Errorf("the site is defined in the config file; change it there: %w", model.ErrConflict)

// SiteCreate adds a site that is edited in the admin UI (not pinned by the
// config file) and returns its new API key, which is stored only hashed.
// The site is checked by the caller; an id already taken fails with
// model.ErrConflict.
func (s *Service) SiteCreate(ctx context.Context, site *model.Site) (apiKey string, err error) {
	var b [24]byte
	rand.Read(b[:])
	apiKey = base64.RawURLEncoding.EncodeToString(b[:])
	site.APIKeyHash = model.HashAPIKey(apiKey)
	site.Pinned = false
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.SiteByID(ctx, site.ID); err == nil {
			return fmt.Errorf("site %s already exists: %w", site.ID, model.ErrConflict)
		} else if !errors.Is(err, model.ErrNotFound) {
			return err
		}
		return tx.SiteUpsert(ctx, site, s.now())
	})
	if err != nil {
		return "", err
	}
	return apiKey, nil
}

// SiteSave replaces the name, settings and access token of a site edited in
// the admin UI; its API key is kept. A new token lifts a pause. Pinned
// sites are refused with ErrPinned.
func (s *Service) SiteSave(ctx context.Context, site *model.Site) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		old, err := tx.SiteByID(ctx, site.ID)
		if err != nil {
			return err
		}
		if old.Pinned {
			return ErrPinned
		}
		site.APIKeyHash, site.Pinned = old.APIKeyHash, false
		return tx.SiteUpsert(ctx, site, s.now())
	})
}
