// Package leadads owns Meta's Lead Ads (Instant Forms) as a lead source:
// the Page leadgen webhook (source.go), the fetch of each lead Meta told
// of (the outbox's meta_leadgen destination, the source's worker), the
// backfill that reads every form's leads since a stored watermark so that
// none missed is lost, and the check of a site's token, Page subscription
// and permissions. It reaches the database, the Graph API and the use
// cases through source.Deps and the interfaces it declares here.
package leadads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/source"
	"github.com/cleanads/cleanads/internal/store"
)

// Store is what the package reads and writes of the database.
type Store interface {
	SiteByID(ctx context.Context, id model.SiteID) (*model.Site, error)
	SiteList(ctx context.Context) ([]*model.Site, error)
	DestinationPauseSet(ctx context.Context, sh model.Share, reason string, now time.Time) error
	DestinationPauseOf(ctx context.Context, sh model.Share) (*store.DestinationPause, error)
	DestinationPauseReason(ctx context.Context, sh model.Share) (string, error)
	DestinationResume(ctx context.Context, sh model.Share) error
	LeadAdsWatermark(ctx context.Context, site model.SiteID, formID string) (time.Time, error)
	LeadAdsWatermarkSet(ctx context.Context, site model.SiteID, pageID, formID string, until, now time.Time) error
}

// Graph is the Lead Ads side of the Graph API; *capi.Client is one.
type Graph interface {
	Leadgen(ctx context.Context, a capi.GraphAuth, id string) (*capi.LeadgenLead, error)
	FormLeads(ctx context.Context, a capi.GraphAuth, formID string, since time.Time, after string, limit int) (*capi.LeadPage, error)
	PageForms(ctx context.Context, a capi.GraphAuth, pageID string) ([]capi.LeadForm, error)
	FormName(ctx context.Context, a capi.GraphAuth, formID string) (string, error)
	SubscribedApps(ctx context.Context, a capi.GraphAuth, pageID string) ([]capi.SubscribedApp, error)
	Permissions(ctx context.Context, a capi.GraphAuth) ([]capi.Permission, error)
}

// Leads judges and stores a fetched lead; *app.Service is one.
type Leads interface {
	LeadAdsIngest(ctx context.Context, site *model.Site, l *capi.LeadgenLead, src app.LeadAdsSource) (*model.Lead, bool, error)
}

// Options are a Service's dependencies.
type Options struct {
	Store  Store
	Graph  Graph
	Leads  Leads
	Logger *slog.Logger
	Now    func() time.Time
}

// Service backfills and checks Lead Ads leads; the fetch is the source's
// Worker.
type Service struct {
	o   Options
	log *slog.Logger
	f   *fetcher
}

// New returns a Service.
func New(o Options) *Service {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Service{o: o, log: o.Logger.With("component", "leadads"), f: newFetcher(o.Graph, o.Leads, o.Logger)}
}

// share is the site's Lead Ads fetch share.
func share(site model.SiteID) model.Share {
	return model.Share{Site: site, Destination: model.DestinationMetaLeadgen}
}

func auth(site *model.Site) capi.GraphAuth {
	return capi.GraphAuth{AccessToken: site.LeadAds.AccessToken, AppSecret: site.LeadAds.AppSecret}
}

// refusal says in plain words why Meta refused the site's token, and
// whether it is a refusal (a bad token or a missing permission) that waits
// for the owner rather than a retry.
func refusal(err error) (string, bool) {
	if p := capi.MissingPermission(err); p != "" {
		return fmt.Sprintf("the Lead Ads token lacks %s: grant it to the app (and the Page's leads access), "+
			"set the new token, then run cleanads leadads check (%v)", p, err), true
	}
	if capi.Classify(err) == capi.ClassAuth {
		return "Meta refused the Lead Ads access token: " + err.Error() + "; set a new lead_ads.access_token", true
	}
	return "", false
}

// fetcher reads the leads Meta told of: the Lead Ads source's worker,
// whose Send the outbox's meta_leadgen rows go through
// (deliver.PlatformHandler keeps their pauses, backoff, deadlines and
// leases as it does for every platform). It needs only what a source is
// given (source.Deps: the Graph API, the use cases); the backfill and the
// check, which need the store's watermarks and Meta's forms and
// permissions, are the Service's.
type fetcher struct {
	graph source.Graph
	leads Leads
	log   *slog.Logger

	mu    sync.Mutex
	forms map[string]string // form id -> name, as read once
}

func newFetcher(graph source.Graph, leads Leads, log *slog.Logger) *fetcher {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &fetcher{graph: graph, leads: leads, log: log.With("component", "leadads"), forms: map[string]string{}}
}

// Label is the fetch's name for people, in the runner's words of its rows.
func (*fetcher) Label() string { return "Lead Ads" }

// On is true for every site: a row is a lead Meta told of, never dropped
// for the site's settings. A site without a token pauses in Send, and
// setting one resumes the fetches.
func (*fetcher) On(*model.Site) bool { return true }

// BatchSize is how many leads one Send fetches: their outcomes are recorded
// together and the lease is checked between batches, so a crash loses at
// most ten outcomes (fetched again, the leads are found stored).
func (*fetcher) BatchSize() int { return 10 }

// NewCredentials tells whether the site's Lead Ads token changed (see
// platform.Rekeyer): Meta's refusal of the old one then pauses nothing.
func (*fetcher) NewCredentials(was, now *model.Site) bool {
	return was.LeadAds.AccessToken != now.LeadAds.AccessToken
}

// noToken is the pause of a site whose leads are told of before its token
// is set.
const noToken = "no Lead Ads access token is set for the site"

// Send fetches a batch of leads Meta told of (one site's meta_leadgen
// rows), in order: each is read from the Graph API with the site's token
// and appsecret_proof and handed to LeadAdsIngest. A row is sent (the lead
// is in; its response is {lead, created, verdict}) or dead (an unreadable
// job, a lead Meta no longer has, one erased, one that cannot be stored).
// The first failure that is not the row's own stops the batch, the rest
// left to its class: a refused token or a missing permission pauses the
// site's fetches with the words the sites page shows, Meta throttling or
// failing (or the database) retries after the backoff.
func (f *fetcher) Send(ctx context.Context, site *model.Site, rows []*model.Delivery) ([]platform.Outcome, error) {
	if site.LeadAds.AccessToken == "" {
		return nil, &platform.Failure{Class: platform.Paused, Words: noToken}
	}
	out := make([]platform.Outcome, len(rows))
	for i, d := range rows {
		o, err := f.fetch(ctx, site, d)
		if err != nil {
			return out, failure(err)
		}
		out[i] = o
	}
	return out, nil
}

// failure classifies a fetch's failure for the runner.
func failure(err error) *platform.Failure {
	if why, ok := refusal(err); ok {
		return &platform.Failure{Class: platform.Paused, Words: why, Err: err, Response: capi.ErrorJSON(err)}
	}
	class := platform.Transient
	if capi.Classify(err) == capi.ClassThrottled {
		class = platform.Throttled
	}
	return &platform.Failure{Class: class, RetryAfter: capi.RetryAfter(err), Err: err, Response: capi.ErrorJSON(err)}
}

// dead is the outcome of a row whose lead can never be fetched.
func dead(why string, resp json.RawMessage) platform.Outcome {
	return platform.Outcome{Err: errors.New(why), Response: resp}
}

// fetch reads one lead and ingests it, returning the row's outcome when it
// is settled (sent or dead); an error is the batch's.
func (f *fetcher) fetch(ctx context.Context, site *model.Site, d *model.Delivery) (platform.Outcome, error) {
	var job app.LeadgenChange
	if err := json.Unmarshal(d.Payload, &job); err != nil || job.LeadgenID == "" {
		return dead(fmt.Sprintf("the fetch job is unreadable: %v", err), nil), nil
	}
	l, err := f.graph.Leadgen(ctx, auth(site), job.LeadgenID)
	if err != nil {
		if _, ok := refusal(err); !ok && capi.Classify(err) == capi.ClassRejected {
			// Meta has no such lead (deleted, or not the Page's).
			return dead("Meta refused to read the lead: "+err.Error(), capi.ErrorJSON(err)), nil
		}
		return platform.Outcome{}, err
	}
	src := app.LeadAdsSource{PageID: job.PageID, FormName: f.formName(ctx, site, string(l.FormID)), Via: job.Via}
	lead, created, err := f.leads.LeadAdsIngest(ctx, site, l, src)
	if errors.Is(err, app.ErrLeadErased) {
		return dead("erased from the site (forgotten, or past retention): the lead is not read again", nil), nil
	}
	if err != nil {
		var inv *model.InputError
		if errors.As(err, &inv) {
			return dead("the lead Meta sent cannot be stored: "+err.Error(), nil), nil
		}
		return platform.Outcome{}, fmt.Errorf("storing lead %s: %w", job.LeadgenID, err)
	}
	resp, _ := json.Marshal(map[string]any{"lead": lead.ID, "created": created, "verdict": lead.Verdict})
	return platform.Outcome{Accepted: true, Response: resp}, nil
}

// formName is a form's name, read once per process; "" when Meta does not
// say (the lead is stored without it).
func (f *fetcher) formName(ctx context.Context, site *model.Site, formID string) string {
	if formID == "" {
		return ""
	}
	f.mu.Lock()
	name, ok := f.forms[formID]
	f.mu.Unlock()
	if ok {
		return name
	}
	name, err := f.graph.FormName(ctx, auth(site), formID)
	if err != nil {
		f.log.Warn("lead ads: form name", "site", string(site.ID), "form", formID, "err", err)
		return ""
	}
	f.mu.Lock()
	f.forms[formID] = name
	f.mu.Unlock()
	return name
}

// knowForm keeps a form's name read elsewhere (the backfill's list).
func (f *fetcher) knowForm(id, name string) {
	f.mu.Lock()
	f.forms[id] = name
	f.mu.Unlock()
}

// pause pauses the site's fetches with why and says so once.
func (s *Service) pause(ctx context.Context, site *model.Site, why string) {
	if err := s.o.Store.DestinationPauseSet(ctx, share(site.ID), why, s.o.Now()); err != nil {
		s.log.Error("lead ads: pausing fetches", "site", string(site.ID), "err", err)
		return
	}
	s.log.Error("lead ads fetches paused for site", "site", string(site.ID), "pages", fmt.Sprint(site.Settings.LeadAds.PageIDs), "reason", why)
}

// interface checks
var (
	_ deliver.Batches  = (*fetcher)(nil)
	_ platform.Rekeyer = (*fetcher)(nil)
)
