package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
	"github.com/cleanads/cleanads/internal/store"
)

// The text model each site learns from its owner's word (qualify.TextModel)
// is trained here from the owner-judged leads, stored in text_models, and
// handed to the rules at intake.
//
// Rebuilding: the owner's word changes one lead at a time, and a model is
// cheap to train (milliseconds for thousands of leads) but not free, so
// RebuildTextModels runs as a periodic job (every minute in serve): a site
// whose owner-judged leads changed since its model was trained (a new
// judgement, one changed, one forgotten or deleted; see
// store.LeadOwnerFingerprint) is trained again from all of them. Judgements
// made within one run fold into one rebuild: that is the debounce. Each
// node reloads a site's model from the database at most once every
// textModelTTL, so a model trained on another node reaches it within a
// minute.

// maxTrainingLeads bounds what one model learns from: the newest owner
// judgements.
const maxTrainingLeads = 20000

// textModelTTL is how long a node keeps a loaded model before asking the
// database for a newer one.
const textModelTTL = time.Minute

// textCache keeps each site's loaded text model.
type textCache struct {
	mu    sync.Mutex
	sites map[model.SiteID]cachedText
}

type cachedText struct {
	loaded time.Time
	model  *qualify.TextModel // nil: the site has none yet
}

// textFor returns the site's text model with its settings for the rules,
// or nil when the site turned it off or has none. A model that cannot be
// read is logged and left out: a lead is never lost to it.
func (s *Service) textFor(ctx context.Context, site *model.Site) *qualify.Text {
	set := site.Settings.Qualify.TextModel
	if !set.On() || s.db == nil {
		return nil
	}
	now := s.now()
	c := &s.textCache
	c.mu.Lock()
	e, ok := c.sites[site.ID]
	c.mu.Unlock()
	if !ok || now.Sub(e.loaded) >= textModelTTL || now.Before(e.loaded) {
		m, err := s.loadTextModel(ctx, site.ID)
		if err != nil {
			s.log.Error("text model not loaded; judging without it", "site", site.ID, "err", err)
		}
		e = cachedText{loaded: now, model: m}
		s.cacheText(site.ID, e)
	}
	if e.model == nil {
		return nil
	}
	return &qualify.Text{Model: e.model, MaxPoints: set.MaxPoints}
}

func (s *Service) cacheText(id model.SiteID, e cachedText) {
	c := &s.textCache
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sites == nil {
		c.sites = map[model.SiteID]cachedText{}
	}
	c.sites[id] = e
}

// loadTextModel reads the site's stored model; nil and no error when it
// has none.
func (s *Service) loadTextModel(ctx context.Context, id model.SiteID) (*qualify.TextModel, error) {
	row, err := s.db.TextModelGet(ctx, id)
	if errors.Is(err, model.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m qualify.TextModel
	if err := json.Unmarshal(row.Data, &m); err != nil {
		return nil, fmt.Errorf("site %s: %w", id, err)
	}
	return &m, nil
}

// TrainTextModel trains a model from the site's owner-judged leads as they
// are now, without storing it.
func (s *Service) TrainTextModel(ctx context.Context, id model.SiteID) (*qualify.TextModel, error) {
	js, err := s.db.LeadOwnerJudged(ctx, id, maxTrainingLeads)
	if err != nil {
		return nil, err
	}
	return qualify.TrainText(judgements(js), s.now()), nil
}

func judgements(js []store.OwnerJudgement) []qualify.Judgement {
	out := make([]qualify.Judgement, len(js))
	for i, j := range js {
		out[i] = qualify.Judgement{Message: j.Message, Junk: j.Junk}
	}
	return out
}

// RebuildTextModels trains again the model of every site (text model on)
// whose owner-judged leads changed since its model was trained, stores it,
// and returns how many it rebuilt. A site with no owner-judged lead gets no
// model.
func (s *Service) RebuildTextModels(ctx context.Context) (int, error) {
	sites, err := s.db.SiteList(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, site := range sites {
		if !site.Settings.Qualify.TextModel.On() {
			continue
		}
		ok, err := s.rebuildTextModel(ctx, site.ID)
		if err != nil {
			errs = append(errs, fmt.Errorf("text model of site %s: %w", site.ID, err))
			continue
		}
		if ok {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// rebuildTextModel trains the site's model when its owner-judged leads
// changed, and reports whether it did.
func (s *Service) rebuildTextModel(ctx context.Context, id model.SiteID) (bool, error) {
	judged, fp, err := s.db.LeadOwnerFingerprint(ctx, id)
	if err != nil {
		return false, err
	}
	old, err := s.db.TextModelFingerprint(ctx, id)
	if err != nil {
		return false, err
	}
	if fp == old || (judged == 0 && old == "") {
		return false, nil
	}
	m, err := s.TrainTextModel(ctx, id)
	if err != nil {
		return false, err
	}
	data, err := json.Marshal(m)
	if err != nil {
		return false, err
	}
	row := &store.TextModelRow{Site: id, TrainedAt: m.TrainedAt, Judged: m.Judged, Fingerprint: fp, Data: data}
	if err := s.db.TextModelPut(ctx, row); err != nil {
		return false, err
	}
	s.cacheText(id, cachedText{loaded: s.now(), model: m})
	s.log.Info("text model trained", "site", id, "judged", m.Judged, "junk", m.Junk,
		"features", m.Features(), "live", m.Live())
	return true, nil
}

// TextModelStatus is what a site's text model is doing, for the dashboard
// and the CLI.
type TextModelStatus struct {
	// Off: the site's setting turned it off.
	Off bool
	// Judged is how many owner-judged leads the stored model learnt from
	// (0 with no model), and MinJudged how many it needs to count.
	Judged, Junk, MinJudged int
	// Live: it counts in the score; otherwise it runs in shadow.
	Live      bool
	Features  int
	TrainedAt time.Time
}

// TextModelStatus returns the site's text model status.
func (s *Service) TextModelStatus(ctx context.Context, site *model.Site) (TextModelStatus, error) {
	st := TextModelStatus{Off: !site.Settings.Qualify.TextModel.On(), MinJudged: qualify.MinJudged}
	m, err := s.loadTextModel(ctx, site.ID)
	if err != nil || m == nil {
		return st, err
	}
	st.Judged, st.Junk, st.Live, st.Features, st.TrainedAt = m.Judged, m.Junk, m.Live(), m.Features(), m.TrainedAt
	return st, nil
}

// logText logs what the text model said of a new lead: in shadow, what it
// would have done. Words are left out: they are the person's message.
func (s *Service) logText(site *model.Site, id model.LeadID, d model.Decision) {
	r, ok := qualify.TextReason(d)
	if !ok {
		return
	}
	shadow, _ := r.Evidence["shadow"].(bool)
	would, _ := r.Evidence["would_verdict"].(string)
	lvl := slog.LevelDebug
	if shadow && would != "" {
		lvl = slog.LevelInfo // the model would have changed the verdict
	}
	s.log.Log(context.Background(), lvl, "text model", "site", site.ID, "lead", id, "shadow", shadow,
		"points", r.Evidence["points"], "toward", r.Evidence["toward"], "verdict", d.Verdict, "would_verdict", would)
}
