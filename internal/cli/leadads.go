package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/config"
	"github.com/cleanads/cleanads/internal/leadads"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// errCheckFailed is the exit of a check that found something wrong; what
// was printed says what.
var errCheckFailed = errors.New("the Lead Ads check found problems (see above)")

// leadAdsCmd runs `cleanads leadads check --site ID`: whether the site's
// token, Page subscription and permissions are right, in plain words.
func leadAdsCmd(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "check" {
		fmt.Fprintln(e.stderr, "usage: cleanads leadads check --site ID [--config FILE]\n"+
			"Tells whether the site's Lead Ads token, Page subscription (leadgen) and permissions are right.")
		return errUsage
	}
	fs := e.flags("leadads check")
	cfgPath := fs.String("config", "", "config file (default $CLEANADS_CONFIG)")
	siteID := fs.String("site", "", "the site to check (required)")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if *siteID == "" {
		fmt.Fprintln(e.stderr, "cleanads leadads check: --site is required")
		fs.Usage()
		return errUsage
	}
	c, db, err := e.provisionedStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer db.Close()
	svc := leadads.New(leadads.Options{Store: db, Graph: graphClient(c), Logger: e.logger(c)})
	findings, err := svc.Check(ctx, model.SiteID(*siteID))
	if err != nil {
		return err
	}
	bad := 0
	for _, f := range findings {
		mark := "ok  "
		if !f.OK {
			mark, bad = "FIX ", bad+1
		}
		fmt.Fprintf(e.stdout, "%s %s\n", mark, f.What)
		if f.Fix != "" {
			fmt.Fprintf(e.stdout, "     %s\n", f.Fix)
		}
	}
	if bad > 0 {
		return errCheckFailed
	}
	fmt.Fprintf(e.stdout, "Lead Ads is connected for site %s: webhooks at /v1/webhooks/leadgen/%s.\n", *siteID, *siteID)
	return nil
}

// provisionedStore opens the database of a command that talks to Meta for
// a site: its schema must be current, and the file wins for its sites, as
// at every serve start, so the command uses the token the advertiser just
// wrote. The caller closes the database.
func (e *env) provisionedStore(ctx context.Context, cfgPath string) (*config.Config, *store.DB, error) {
	c, db, err := e.migratedStore(ctx, cfgPath)
	if err != nil {
		return nil, nil, err
	}
	if err := provision(ctx, db, c, time.Now()); err != nil {
		db.Close()
		return nil, nil, err
	}
	return c, db, nil
}

// notifyLater wakes the delivery runner once it is built: the app's use
// cases are built before it, because the Lead Ads fetch it runs needs
// them. It is set before anything runs.
type notifyLater struct{ wake func() }

func (n *notifyLater) Wake() {
	if n.wake != nil {
		n.wake()
	}
}

var _ app.Notifier = (*notifyLater)(nil)
