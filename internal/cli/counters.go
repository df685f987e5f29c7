package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// countersCmd is `cleanads counters rebuild`: it recounts the sites'
// per-day counters (visits, form_visits, leads, leads_untracked, lead_ads, stages,
// stage_cents, the reasons', the campaign report's) from the visits, leads
// and stages stored, for when they are in doubt. It runs beside a
// running server (store.DB.CountersRebuild): it reads a week of a site's
// days at a time from a snapshot, beside the intake, and writes only the
// counters that differ from the recount, in a short transaction.
func countersCmd(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "rebuild" {
		fmt.Fprintln(e.stderr, "usage: cleanads counters rebuild [--config FILE] [--site ID] [--days N]")
		return errUsage
	}
	fs := e.flags("counters rebuild")
	cfgPath := fs.String("config", "", "config file (default $CLEANADS_CONFIG)")
	siteID := fs.String("site", "", "recount this site only (default: every site)")
	days := fs.Int("days", 0, "recount this many days up to today (default: retention.visit_days, the days whose visits are all still kept; 3650 when visits are kept forever)")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	c, db, err := e.migratedStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer db.Close()
	n := *days
	if n <= 0 {
		n = c.Retention.VisitDays
	}
	if n <= 0 {
		n = 3650
	}
	var sites []model.SiteID
	if *siteID != "" {
		if _, err := db.SiteByID(ctx, model.SiteID(*siteID)); err != nil {
			if errors.Is(err, model.ErrNotFound) {
				return fmt.Errorf("no site %q", *siteID)
			}
			return err
		}
		sites = append(sites, model.SiteID(*siteID))
	} else {
		list, err := db.SiteList(ctx)
		if err != nil {
			return err
		}
		for _, s := range list {
			sites = append(sites, s.ID)
		}
	}
	last := model.Day(time.Now())
	first := last - int64(n) + 1
	for _, s := range sites {
		if err := db.CountersRebuild(ctx, s, first, last); err != nil {
			return fmt.Errorf("site %s: %w", s, err)
		}
		cs, err := db.Counters(ctx, s, first, last)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "site %s: %s to %s recounted: %d visits (%d to pages with a lead form), %d leads (%d without t.js's timing), %d stages (%d won)\n",
			s, model.DayStart(first).Format(time.DateOnly), model.DayStart(last).Format(time.DateOnly),
			cs.Sum(model.CounterVisits, "*", first, last), cs.Sum(model.CounterFormVisits, "*", first, last),
			cs.Sum(model.CounterLeads, "*", first, last), cs.Sum(model.CounterLeadsUntracked, "*", first, last),
			cs.Sum(model.CounterStages, "*", first, last), cs.Sum(model.CounterStages, model.StageWon, first, last))
	}
	return nil
}
