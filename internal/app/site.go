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
		// The stages have one editor (SiteStagesSave): a save of the
		// other settings keeps them as they are.
		site.Settings.Meta.Stages, site.Settings.StageOrder = old.Settings.Meta.Stages, old.Settings.StageOrder
		site.Settings.StagesEdited = old.Settings.StagesEdited
		return tx.SiteUpsert(ctx, site, s.now())
	})
}

// SiteStagesSave replaces a site's stages (their Meta events and value
// rules) with the admin's stage editor's list, in its order. Any site may
// be edited so, the config file's too: the list saved here wins over the
// file's meta.stages from then on (model.SiteSettings.StagesEdited), and
// the next start keeps it. The stages are checked by the caller; the rest
// of the site is read and written in the same transaction, so a save of
// another section at the same moment is not lost.
func (s *Service) SiteStagesSave(ctx context.Context, id model.SiteID, stages map[string]model.StageEvent, order []string) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		site, err := tx.SiteByID(ctx, id)
		if err != nil {
			return err
		}
		site.Settings.Meta.Stages, site.Settings.StageOrder, site.Settings.StagesEdited = stages, order, true
		return tx.SiteUpsert(ctx, site, s.now())
	})
}

// SiteStagesFromFile gives a config file's site its file's stages back:
// the list saved in the admin UI stops winning, and the next start writes
// the file's meta.stages. A site made in the admin UI has no file to go
// back to (ErrNotPinned).
func (s *Service) SiteStagesFromFile(ctx context.Context, id model.SiteID) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		site, err := tx.SiteByID(ctx, id)
		if err != nil {
			return err
		}
		if !site.Pinned {
			return ErrNotPinned
		}
		site.Settings.StagesEdited = false
		return tx.SiteUpsert(ctx, site, s.now())
	})
}

// ErrNotPinned is returned for a change that only a config file's site
// takes.
var ErrNotPinned = fmt.Errorf("the site is not defined in the config file: %w", model.ErrConflict)
