package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/config"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
)

// replay judges a site's leads of the last days again with the rules of the
// config file as it is now and the text model trained from the owner's word
// as it is now, and prints the leads whose verdict would change. It only
// reads the database: nothing is stored, queued or sent.
func replay(ctx context.Context, e *env, args []string) error {
	fs := e.flags("replay")
	cfgPath := fs.String("config", "", "config file (default $CLEANADS_CONFIG)")
	siteID := fs.String("site", "", "the site whose leads are judged again (required)")
	days := fs.Int("days", 7, "judge the leads received in the last this many days (1-366)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *siteID == "" || *days < 1 || *days > 366 {
		fmt.Fprintln(e.stderr, "cleanads replay: give --site ID and --days between 1 and 366")
		return errUsage
	}
	c, db, err := e.migratedStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer db.Close()
	// The config's settings, not the database's copy: a rule changed in the
	// file is tried before serve makes it live.
	site := configSite(c, *siteID)
	if site == nil {
		if site, err = db.SiteByID(ctx, model.SiteID(*siteID)); errors.Is(err, model.ErrNotFound) {
			return fmt.Errorf("no site %q in the config or the database", *siteID)
		} else if err != nil {
			return err
		}
	}
	lists, err := qualifyLists(c)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	svc := app.New(app.Options{Store: db, Lists: lists, Now: func() time.Time { return now }})
	res, err := svc.Replay(ctx, site, now.Add(-time.Duration(*days)*24*time.Hour))
	if err != nil {
		return err
	}
	printReplay(e.stdout, site, res)
	return nil
}

// configSite returns the config file's site with the given id, or nil.
func configSite(c *config.Config, id string) *model.Site {
	for i := range c.Sites {
		if c.Sites[i].ID == id {
			return c.Sites[i].SiteModel()
		}
	}
	return nil
}

// printReplay writes what the replay found, one block per changed lead.
func printReplay(w io.Writer, site *model.Site, res *app.ReplayResult) {
	with := "no text model (off, or no lead judged by you yet)"
	if m := res.Model; m != nil {
		state := "in shadow, not counted"
		if m.Live() {
			state = "counted"
		}
		with = fmt.Sprintf("the text model trained now on %d leads you judged (%s)", m.Judged, state)
	}
	fmt.Fprintf(w, "Site %s: %d leads received since %s judged again with rules %s and %s.\n",
		site.ID, res.Leads, res.Since.Format("2006-01-02 15:04 MST"), qualify.RulesVersion, with)
	for _, c := range res.Changes {
		owner := ""
		if c.OwnerBy {
			word := "real customer"
			if c.Lead.Verdict == model.VerdictJunk {
				word = "junk"
			}
			owner = "  (you said " + word + ": your word stays final)"
		}
		fmt.Fprintf(w, "\n%s  %s  %s -> %s  score %d%s\n", c.Lead.ID, c.Lead.ReceivedAt.Format("2006-01-02 15:04"),
			c.Was, c.Now.Verdict, c.Now.Score, owner)
		fmt.Fprintf(w, "  was: %s\n", reasonList(c.WasWhy))
		fmt.Fprintf(w, "  now: %s\n", reasonList(c.Now.Reasons))
	}
	fmt.Fprintf(w, "\n%d of %d leads would change verdict.\n", len(res.Changes), res.Leads)
	if res.Judged > 0 {
		fmt.Fprintf(w, "Of the %d you judged: passed as clean but junk to you %d -> %d; held but real customers to you %d -> %d.\n",
			res.Judged, res.MissedBefore, res.MissedAfter, res.RescuedBefore, res.RescuedAfter)
	}
	fmt.Fprintln(w, "Nothing was stored, queued or sent.")
}

// reasonList writes reasons as "CODE points, ...", the text model's with
// its words.
func reasonList(rs []model.Reason) string {
	if len(rs) == 0 {
		return "no reason"
	}
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		p := fmt.Sprintf("%s %+d", r.Code, r.Points)
		if _, ok := qualify.ModelReason(model.Decision{Reasons: []model.Reason{r}}); ok || r.Code == qualify.CodeTextModel {
			p += " (" + qualify.Message(r.Code, "en", r.Evidence) + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}
