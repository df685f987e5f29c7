package app

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
	"github.com/cleanads/cleanads/internal/store"
)

// rulesCache keeps each site's compiled rules until the site changes:
// compiling phrase lists takes about a millisecond, scoring a few
// microseconds.
type rulesCache struct {
	mu    sync.Mutex
	lists *qualify.Lists
	sites map[model.SiteID]cachedRules
}

type cachedRules struct {
	updated time.Time
	rules   *qualify.Rules
}

// rules returns the site's compiled rules. Settings the rules refuse (the
// config validates most of them) fall back to the defaults, so a lead is
// never lost to a bad setting; the problem is logged.
func (s *Service) rules(site *model.Site) *qualify.Rules {
	c := &s.rulesCache
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.sites[site.ID]; ok && r.updated.Equal(site.UpdatedAt) {
		return r.rules
	}
	r, err := qualify.New(site.Settings.Qualify, c.lists)
	if err != nil {
		s.log.Error("site qualify settings refused; using the defaults", "site", site.ID, "err", err)
		r, _ = qualify.New(model.Qualify{}, c.lists)
	}
	if c.sites == nil {
		c.sites = map[model.SiteID]cachedRules{}
	}
	c.sites[site.ID] = cachedRules{updated: site.UpdatedAt, rules: r}
	return r
}

// judge decides a new lead's verdict from the rules, with the same
// person's earlier lead on the site when there is one in the window.
// phone is the lead's phone judged ahead (qualify.CheckPhone), or nil.
func (s *Service) judge(ctx context.Context, tx *store.Tx, site *model.Site, lead *model.Lead, now time.Time, token qualify.TokenCheck, phone *qualify.PhoneCheck) (model.Decision, error) {
	r := s.rules(site)
	qc := qualify.Context{Now: now, Country: site.Settings.Country, Token: token, Phone: phone,
		Text: s.textFor(ctx, site)}
	leadContext(&qc, lead)
	if lead.EmailKey != "" || lead.PhoneKey != "" {
		id, at, match, err := tx.LeadPrevious(ctx, site.ID, lead.EmailKey, lead.PhoneKey, lead.ReceivedAt.Add(-r.DuplicateWindow()), lead.ID)
		switch {
		case err == nil:
			qc.Previous = &qualify.Previous{LeadID: id, At: at, Match: match}
		case !errors.Is(err, model.ErrNotFound):
			return model.Decision{}, err
		}
	}
	d := r.Score(lead, qc)
	s.logText(site, lead.ID, d)
	if d.Verdict == model.VerdictReview {
		until := lead.SubmittedAt.Add(r.ReviewTimeout())
		lead.ReviewUntil = &until
	}
	return d, nil
}

// Score judges a lead offline: no look-up of earlier leads, nothing stored
// or sent. It is what `cleanads score` prints.
func (s *Service) Score(site *model.Site, in *LeadInput) (*model.Lead, error) {
	now := s.now().UTC()
	lead, err := s.leadFromInput(site, in, now, nil)
	if err != nil {
		return nil, err
	}
	qc := qualify.Context{Now: now, Country: site.Settings.Country, Text: s.textFor(context.Background(), site)}
	leadContext(&qc, lead)
	lead.Decision = s.rules(site).Score(lead, qc)
	return lead, nil
}

// leadContext sets what the lead itself tells the rules beyond its fields:
// who measured its fill time, and whether it is a chat rather than a form.
// Intake, score and replay all judge through it, so they judge alike.
func leadContext(qc *qualify.Context, lead *model.Lead) {
	qc.FillBy = lead.FillBy
	qc.Conversation = lead.Source == model.SourceWhatsApp
}
