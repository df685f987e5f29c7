package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nyaruka/phonenumbers"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/config"
	"github.com/cleanads/cleanads/internal/model"
)

// graphClient is the Meta client every command shares, built from config.
func graphClient(c *config.Config) *capi.Client {
	return capi.NewClient(capi.ClientOptions{BaseURL: c.Meta.GraphURL, APIVersion: c.Meta.APIVersion,
		Timeout: time.Duration(c.Delivery.Timeout)})
}

// sendTest sends one sample event for a site with its test_event_code and
// prints what was sent and Meta's answer.
func sendTest(ctx context.Context, e *env, args []string) error {
	fs := e.flags("send-test")
	cfgPath := fs.String("config", "", "config file (default $CLEANADS_CONFIG)")
	siteID := fs.String("site", "", "the site to send a test event for (required)")
	toGoogle := fs.Bool("google", false, "check a sample qualified event with Google's Data Manager API (validateOnly) instead")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *siteID == "" {
		fmt.Fprintln(e.stderr, "cleanads send-test: --site is required")
		fs.Usage()
		return errUsage
	}
	if *toGoogle {
		return sendTestGoogle(ctx, e, *cfgPath, *siteID)
	}
	c, db, err := e.provisionedStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer db.Close()
	svc := app.New(app.Options{Store: db, Logger: e.logger(c), Graph: graphClient(c)})
	res, err := svc.SendTest(ctx, model.SiteID(*siteID))
	if res != nil {
		out, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", out)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "Meta accepted the test event: look for it in Events Manager, Test Events, code %s.\n",
		res.TestEventCode)
	return nil
}

// matchKeys prints what each value on stdin normalises and hashes to.
func matchKeys(_ context.Context, e *env, args []string) error {
	fs := e.flags("matchkeys")
	country := fs.String("country", "", "default country for phone numbers without a country code, e.g. TR")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: cleanads matchkeys [--country CC] < lines\n\n"+
			"Reads JSON lines {\"field\": \"em\", \"value\": \"...\"} and writes one line per input:\n"+
			"{\"field\", \"value\", \"normalized\", \"hash\"}, or \"normalized\": null with an \"error\".\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	cc := strings.ToUpper(strings.TrimSpace(*country))
	if cc != "" && phonenumbers.GetCountryCodeForRegion(cc) == 0 {
		fmt.Fprintf(e.stderr, "cleanads matchkeys: unknown country %q: want an ISO 3166 code like TR or DE\n", *country)
		return errUsage
	}
	return capi.MatchKeys(e.stdin, e.stdout, cc)
}
