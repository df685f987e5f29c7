package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/config"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
)

// score judges one lead read as JSON from stdin with a configured site's
// rules and prints the verdict, score and reasons; nothing is stored or
// sent, and earlier leads are not looked up.
func score(ctx context.Context, e *env, args []string) error {
	fs := e.flags("score")
	cfgPath := fs.String("config", "", "config file (default $CLEANADS_CONFIG)")
	siteID := fs.String("site", "", "the site whose rules judge the lead (required)")
	if err := parse(fs, args); err != nil {
		return err
	}
	c, err := e.loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	var site *model.Site
	for i := range c.Sites {
		if c.Sites[i].ID == *siteID {
			site = c.Sites[i].SiteModel()
		}
	}
	if site == nil {
		return fmt.Errorf("no site %q in the config (give --site ID)", *siteID)
	}
	lists, err := qualifyLists(c)
	if err != nil {
		return err
	}
	var in app.LeadInput
	dec := json.NewDecoder(e.stdin)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return fmt.Errorf("reading the lead from stdin: %w", err)
	}
	lead, err := app.New(app.Options{Lists: lists}).Score(site, &in)
	if err != nil {
		return err
	}
	out := json.NewEncoder(e.stdout)
	out.SetIndent("", "  ")
	return out.Encode(lead.Decision)
}

// qualifyLists returns the rules' lists, with a newer disposable-domain file
// when the config names one.
func qualifyLists(c *config.Config) (*qualify.Lists, error) {
	l := qualify.DefaultLists()
	if c.DisposableDomainsFile == "" {
		return l, nil
	}
	return l.WithDisposableFile(c.DisposableDomainsFile)
}
