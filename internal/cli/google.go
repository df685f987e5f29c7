package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"golang.org/x/oauth2"

	"github.com/cleanads/cleanads/internal/config"
	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/google"
	"github.com/cleanads/cleanads/internal/metrics"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// googleDestinations returns the google destination's handler when a site
// sends to Google, with one token source per credential for every worker,
// its requests counted when metrics are on.
// A start lifts the sites' Google pauses: the owner fixes the credentials
// or the account and restarts, and the parked rows get their chance (a
// pause that still stands comes back after one request).
func googleDestinations(ctx context.Context, c *config.Config, db *store.DB, log *slog.Logger, m *metrics.Metrics) (map[string]deliver.Destination, error) {
	creds := map[model.SiteID]google.Credentials{}
	for _, s := range c.Sites {
		if !s.Google.Enabled() {
			continue
		}
		cr := s.Google.Credentials
		if cr.ServiceAccountKey == "" {
			cr.TokenURL = c.Google.TokenURL
		}
		creds[model.SiteID(s.ID)] = cr
		sh := model.Share{Site: model.SiteID(s.ID), Destination: model.DestinationGoogle}
		if reason, err := db.DestinationPauseReason(ctx, sh); err != nil {
			return nil, err
		} else if reason != "" {
			if err := db.DestinationResume(ctx, sh); err != nil {
				return nil, err
			}
			log.Info("google deliveries resumed at start", "site", s.ID, "paused_for", reason)
		}
	}
	if len(creds) == 0 {
		return nil, nil
	}
	hc := &http.Client{Timeout: time.Duration(c.Delivery.Timeout)}
	tokens := google.NewTokens(hc)
	client := google.NewClient(google.ClientOptions{BaseURL: c.Google.APIURL, HTTP: hc, Timeout: time.Duration(c.Delivery.Timeout)})
	var sender deliver.GoogleSender = client
	if m != nil {
		sender = m.GoogleSender(client)
	}
	h := deliver.NewGoogle(deliver.GoogleOptions{Store: db, Sender: sender,
		Tokens: func(site model.SiteID) (oauth2.TokenSource, error) {
			cr, ok := creds[site]
			if !ok {
				return nil, &google.AuthError{Err: fmt.Errorf("site %s has no Google credentials in the config", site)}
			}
			return tokens.Source(cr)
		}})
	return map[string]deliver.Destination{model.DestinationGoogle: h}, nil
}
