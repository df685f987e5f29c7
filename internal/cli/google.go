package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/nyaruka/phonenumbers"
	"golang.org/x/oauth2"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/config"
	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/google"
	"github.com/cleanads/cleanads/internal/jobs"
	"github.com/cleanads/cleanads/internal/metrics"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/platforms"
	"github.com/cleanads/cleanads/internal/store"
)

// platformSetup makes the ad platforms (platforms.All) with their
// clients, and the runner's handler of each platform: Google's with its
// follow-up of requests, every other platform's (Meta's too) through
// deliver.PlatformHandler. Meta's and Google's requests are counted when
// metrics are on. A site's Google pause stands across a restart: it is
// lifted when the site's google block or credentials change (provision,
// before this) or from the sites page, once the owner has fixed the
// account.
func platformSetup(ctx context.Context, c *config.Config, db *store.DB, log *slog.Logger, m *metrics.Metrics,
	graph capi.Sender) ([]platform.Platform, map[string]deliver.Handler, *deliver.Google, error) {
	creds := map[model.SiteID]google.Credentials{}
	for _, s := range c.Sites {
		if !s.Google.Enabled() {
			continue
		}
		creds[model.SiteID(s.ID)] = googleCredentials(c, &s)
		sh := model.Share{Site: model.SiteID(s.ID), Destination: model.DestinationGoogle}
		if reason, err := db.DestinationPauseReason(ctx, sh); err != nil {
			return nil, nil, nil, err
		} else if reason != "" {
			log.Warn("google deliveries stay paused for site: change its google credentials or settings, or resume on the sites page",
				"site", s.ID, "reason", reason)
		}
	}
	client, tokens := googleClient(c)
	var sender deliver.GoogleSender = client
	if m != nil {
		sender = m.GoogleSender(client)
	}
	// A site's own credentials (saved in the admin UI, sealed) win; a
	// config site's come from the file.
	siteTokens := func(site *model.Site) (oauth2.TokenSource, error) {
		var fallback oauth2.TokenSource
		if cr, ok := creds[site.ID]; ok {
			ts, err := tokens.Source(cr)
			if err != nil {
				return nil, err
			}
			fallback = ts
		}
		return tokens.SiteSource(site, c.Google.TokenURL, fallback)
	}
	byID := func(id model.SiteID) (oauth2.TokenSource, error) {
		site, err := db.SiteByID(context.Background(), id)
		if err != nil {
			return nil, err
		}
		return siteTokens(site)
	}
	g := deliver.NewGoogle(deliver.GoogleOptions{Store: db, Sender: sender, Tokens: byID, Logger: log, Now: time.Now})
	deps := platform.Deps{Logger: log, Now: time.Now, Endpoints: c.PlatformAPIURLs}
	meta := graph
	if m != nil {
		meta = m.Sender(graph)
	}
	list := platforms.All(deps, platforms.Clients{Meta: meta, Google: sender,
		GoogleTokens: siteTokens})
	handlers := map[string]deliver.Handler{model.DestinationGoogle: g}
	for _, p := range list {
		if _, ok := handlers[p.Name()]; !ok {
			handlers[p.Name()] = deliver.NewPlatformHandler(p, db)
		}
	}
	return list, handlers, g, nil
}

// googleCredentials are a configured site's Google credentials, with the
// token endpoint the config names for OAuth clients.
func googleCredentials(c *config.Config, s *config.Site) google.Credentials {
	cr := s.Google.Credentials
	if cr.ServiceAccountKey == "" {
		cr.TokenURL = c.Google.TokenURL
	}
	return cr
}

// googleClient is the Data Manager client and the token sources every
// command shares, built from config.
func googleClient(c *config.Config) (*google.Client, *google.Tokens) {
	hc := &http.Client{Timeout: time.Duration(c.Delivery.Timeout)}
	return google.NewClient(google.ClientOptions{BaseURL: c.Google.APIURL, HTTP: hc, Timeout: time.Duration(c.Delivery.Timeout)}),
		google.NewTokens(hc)
}

// sendTestGoogle builds a sample qualified event for a site (an e-mail on
// example.com and an example number of the site's country, hashed as
// Google wants them) and sends it with validateOnly: Google checks the
// account, the conversion action, the credentials and the payload, and
// records nothing. It needs no database.
func sendTestGoogle(ctx context.Context, e *env, cfgPath, siteID string) error {
	c, err := e.loadConfig(cfgPath)
	if err != nil {
		return err
	}
	var s *config.Site
	for i := range c.Sites {
		if c.Sites[i].ID == siteID {
			s = &c.Sites[i]
		}
	}
	switch {
	case s == nil:
		return fmt.Errorf("send-test: no site %q in the config: %w", siteID, model.ErrNotFound)
	case !s.Google.Enabled():
		return model.Invalid("google", "the site has no google block: set operating_account_id, the conversion actions and the credentials")
	}
	settings := s.Google.GoogleSettings
	kind := model.KindQualified
	if settings.QualifiedConversionAction == "" {
		for stage := range settings.Stages {
			kind = model.KindStage + ":" + stage
			break
		}
	}
	now := time.Now().UTC()
	phone := ""
	if n := phonenumbers.GetExampleNumberForType(s.Country, phonenumbers.MOBILE); n != nil {
		phone = phonenumbers.Format(n, phonenumbers.E164)
	}
	lead := &model.Lead{ID: model.LeadID(model.NewID("ld_test_", now)), Email: "cleanads.test@example.com", Phone: phone,
		SubmittedAt: now}
	ev, err := google.BuildEvent(google.Params{Settings: &settings, Country: s.Country, Lead: lead, Kind: kind, At: now})
	if err != nil {
		return err
	}
	req, err := google.NewRequest(google.Target{OperatingAccountID: settings.OperatingAccountID,
		LoginAccountID: settings.LoginAccountID, ValidateOnly: true}, []google.Event{ev})
	if err != nil {
		return err
	}
	out, _ := json.MarshalIndent(req, "", "  ")
	fmt.Fprintf(e.stdout, "%s\n", out)
	client, tokens := googleClient(c)
	ts, err := tokens.Source(googleCredentials(c, s))
	if err == nil {
		_, err = client.Ingest(ctx, ts, req)
	}
	if err != nil {
		if google.Classify(err) == google.ClassPause {
			return fmt.Errorf("google refused: %s (%w)", google.PauseReason(err), err)
		}
		return err
	}
	fmt.Fprintf(e.stdout, "Google validated the test event (validateOnly: nothing was recorded) for account %s, conversion action %s.\n",
		settings.OperatingAccountID, settings.ConversionAction(kind))
	return nil
}

// googleJobs is the follow-up of the requests Google was still processing,
// when a site sends to Google.
func googleJobs(h *deliver.Google, log *slog.Logger) []jobs.Job {
	return []jobs.Job{{Name: "google-request-status", Every: time.Minute, Run: func(ctx context.Context) error {
		n, err := h.Follow(ctx)
		if n > 0 {
			log.Info("google request results recorded", "deliveries", n)
		}
		return err
	}}}
}
