package leadads

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
)

// The backfill: leads Meta could not deliver by webhook (an outage longer
// than Meta's retries, a lead from before the webhook was set up) are read
// from each form of each of the site's Pages, from the form's watermark on.

const (
	// backfillOverlap is how far before its watermark a form is read
	// again: a lead becomes readable a little after its created_time.
	// Reading one twice costs a look-up; the ingest is idempotent.
	backfillOverlap = 10 * time.Minute
	// firstWindow is what a form's first pass reads: Meta keeps a lead 90
	// days.
	firstWindow = 90 * 24 * time.Hour
	// backfillPage is how many leads one Graph call returns.
	backfillPage = 100
)

// BackfillEvery is how often the backfill job runs.
const BackfillEvery = 15 * time.Minute

// BackfillStats counts what a backfill found.
type BackfillStats struct {
	Forms, Read, Created int
}

// Backfill reads the leads of every form of every site's Pages created
// since the form's watermark, stores those the site does not have yet,
// and moves the watermark to the newest lead read once a form is read
// through. A site whose fetches are paused is left until its token is
// fixed; a refused token pauses them, as a fetch would. The first error of
// each form is returned (joined); the other forms go on.
func (s *Service) Backfill(ctx context.Context) (BackfillStats, error) {
	var st BackfillStats
	sites, err := s.o.Store.SiteList(ctx)
	if err != nil {
		return st, err
	}
	var errs []error
	for _, site := range sites {
		la := site.Settings.LeadAds
		if !la.Enabled() || !la.BackfillOn() || site.LeadAds.AccessToken == "" {
			continue
		}
		if _, err := s.o.Store.DestinationPauseOf(ctx, share(site.ID)); err == nil {
			continue
		} else if !errors.Is(err, model.ErrNotFound) {
			errs = append(errs, err)
			continue
		}
		if err := s.backfillSite(ctx, site, &st); err != nil {
			errs = append(errs, fmt.Errorf("lead ads backfill of site %s: %w", site.ID, err))
		}
	}
	return st, errors.Join(errs...)
}

func (s *Service) backfillSite(ctx context.Context, site *model.Site, st *BackfillStats) error {
	var errs []error
	for _, page := range site.Settings.LeadAds.PageIDs {
		forms, err := s.o.Graph.PageForms(ctx, auth(site), page)
		if err != nil {
			if why, ok := refusal(err); ok {
				s.pause(ctx, site, why)
				return err
			}
			errs = append(errs, fmt.Errorf("forms of page %s: %w", page, err))
			continue
		}
		for _, f := range forms {
			s.f.knowForm(string(f.ID), f.Name)
			if err := s.backfillForm(ctx, site, page, f, st); err != nil {
				errs = append(errs, fmt.Errorf("form %s: %w", f.ID, err))
			}
		}
	}
	return errors.Join(errs...)
}

// backfillForm reads one form's leads since its watermark, page by page.
func (s *Service) backfillForm(ctx context.Context, site *model.Site, page string, f capi.LeadForm, st *BackfillStats) error {
	now := s.o.Now()
	since := now.Add(-firstWindow)
	wm, err := s.o.Store.LeadAdsWatermark(ctx, site.ID, string(f.ID))
	switch {
	case err == nil:
		since = wm.Add(-backfillOverlap)
	case !errors.Is(err, model.ErrNotFound):
		return err
	}
	high := since
	if err == nil {
		high = wm
	}
	st.Forms++
	after := ""
	for {
		p, err := s.o.Graph.FormLeads(ctx, auth(site), string(f.ID), since, after, backfillPage)
		if err != nil {
			return err
		}
		for i := range p.Leads {
			l := &p.Leads[i]
			st.Read++
			_, created, err := s.o.Leads.LeadAdsIngest(ctx, site, l,
				app.LeadAdsSource{PageID: page, FormName: f.Name, Via: "backfill"})
			var inv *model.InputError
			switch {
			case errors.Is(err, app.ErrLeadErased):
				// Forgotten: Meta still lists it, the site never stores it again.
			case errors.As(err, &inv):
				// It can never be stored: it must not hold the form back.
				s.log.Warn("lead ads backfill: lead refused", "site", string(site.ID), "lead", string(l.ID), "err", err)
			case err != nil:
				return err
			case created:
				st.Created++
				s.log.Info("lead ads lead found by the backfill", "site", string(site.ID), "form", string(f.ID), "lead", string(l.ID))
			}
			if c := l.Created(); c.After(high) {
				high = c
			}
		}
		if p.After == "" {
			break
		}
		after = p.After
	}
	return s.o.Store.LeadAdsWatermarkSet(ctx, site.ID, page, string(f.ID), high, now)
}
