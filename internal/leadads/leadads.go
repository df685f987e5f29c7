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
	return &Service{o: o, log: o.Logger.With("component", "leadads"), f: newFetcher(o.Store, o.Graph, o.Leads, o.Logger, o.Now)}
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

// fetcher reads the leads Meta told of: the handler of the outbox's
// meta_leadgen rows, the Lead Ads source's worker. It needs only what a
// source is given (source.Deps: the site and its share's pause, the Graph
// API, the use cases); the backfill and the check, which need the store's
// watermarks and Meta's forms and permissions, are the Service's.
type fetcher struct {
	store deliver.PauseStore
	graph source.Graph
	leads Leads
	log   *slog.Logger
	now   func() time.Time

	mu    sync.Mutex
	forms map[string]string // form id -> name, as read once
}

func newFetcher(store deliver.PauseStore, graph source.Graph, leads Leads, log *slog.Logger, now func() time.Time) *fetcher {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	return &fetcher{store: store, graph: graph, leads: leads, log: log.With("component", "leadads"), now: now,
		forms: map[string]string{}}
}

// Deliver fetches a share of leads Meta told of (the runner's
// meta_leadgen rows of one site): each is read from the Graph API with the
// site's token and appsecret_proof and handed to LeadAdsIngest, and its row
// is sent (the lead is in), dead (Meta has no such lead), retry (Meta or
// the database failed for now: the share waits out the backoff) or paused
// (the token was refused or lacks a permission: the share is paused until
// the token changes or the check passes, and the sites page says why).
func (f *fetcher) Deliver(ctx context.Context, sh *deliver.Claim) (deliver.Stats, time.Time) {
	var st deliver.Stats
	site, err := f.store.SiteByID(ctx, sh.Site)
	if err != nil {
		f.log.Error("lead ads fetch: load site", "site", string(sh.Site), "err", err)
		sh.Record(ctx, sh.Rows)
		return st, time.Time{}
	}
	if why, err := f.store.DestinationPauseReason(ctx, share(site.ID)); err != nil {
		sh.Record(ctx, sh.Rows)
		return st, time.Time{}
	} else if why != "" {
		st.Paused += park(sh.Rows, why, nil)
		sh.Record(ctx, sh.Rows)
		return st, time.Time{}
	}
	if site.LeadAds.AccessToken == "" {
		const why = "no Lead Ads access token is set for the site"
		st.Paused += park(sh.Rows, why, nil)
		f.pause(ctx, site, why)
		sh.Record(ctx, sh.Rows)
		return st, time.Time{}
	}
	done := 0 // sh.Rows[:done] are recorded
	for i, d := range sh.Rows {
		rest := sh.Rows[i:]
		// Stop well before the lease runs out: another node may claim
		// the rest, which goes back unchanged.
		if sh.Now().After(sh.LeaseEnd.Add(-sh.Lease / 2)) {
			sh.Record(ctx, sh.Rows[done:])
			return st, time.Time{}
		}
		err := f.fetch(ctx, site, d)
		switch {
		case err == nil:
			st.Sent++
		case errors.Is(err, errDead):
			st.Dead++
		default:
			if why, ok := refusal(err); ok {
				st.Paused += park(rest, why, err)
				f.pause(ctx, site, why)
				sh.Record(ctx, sh.Rows[done:])
				return st, time.Time{}
			}
			// Meta or the database failed for now: this lead and the
			// rest wait together.
			until := f.retry(sh, rest, err, &st)
			sh.Record(ctx, sh.Rows[done:])
			return st, until
		}
		// A crash loses at most a slice's outcomes (the leads are in;
		// fetched again, they are found stored).
		if i+1-done >= recordEvery {
			sh.Record(ctx, sh.Rows[done:i+1])
			done = i + 1
		}
	}
	sh.Record(ctx, sh.Rows[done:])
	return st, time.Time{}
}

// recordEvery is how many fetched leads are recorded together.
const recordEvery = 50

// errDead marks a fetch that can never succeed (its row is dead).
var errDead = errors.New("lead ads: not fetchable")

// fetch reads one lead and ingests it, setting the row's outcome when it is
// settled (sent or dead); any other error is left for the caller.
func (f *fetcher) fetch(ctx context.Context, site *model.Site, d *model.Delivery) error {
	var job app.LeadgenChange
	if err := json.Unmarshal(d.Payload, &job); err != nil || job.LeadgenID == "" {
		dead(d, fmt.Sprintf("the fetch job is unreadable: %v", err), nil)
		return errDead
	}
	l, err := f.graph.Leadgen(ctx, auth(site), job.LeadgenID)
	if err != nil {
		if _, ok := refusal(err); !ok && capi.Classify(err) == capi.ClassRejected {
			// Meta has no such lead (deleted, or not the Page's).
			dead(d, "Meta refused to read the lead: "+err.Error(), errorJSON(err))
			return errDead
		}
		return err
	}
	src := app.LeadAdsSource{PageID: job.PageID, FormName: f.formName(ctx, site, string(l.FormID)), Via: job.Via}
	lead, created, err := f.leads.LeadAdsIngest(ctx, site, l, src)
	if errors.Is(err, app.ErrLeadErased) {
		dead(d, "erased from the site (forgotten, or past retention): the lead is not read again", nil)
		return errDead
	}
	if err != nil {
		var inv *model.InputError
		if errors.As(err, &inv) {
			dead(d, "the lead Meta sent cannot be stored: "+err.Error(), nil)
			return errDead
		}
		return fmt.Errorf("storing lead %s: %w", job.LeadgenID, err)
	}
	now := f.now()
	resp, _ := json.Marshal(map[string]any{"lead": lead.ID, "created": created, "verdict": lead.Verdict})
	d.State, d.LastError, d.Response, d.SentAt = model.DeliverySent, "", resp, &now
	d.Attempts++
	return nil
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
func (f *fetcher) pause(ctx context.Context, site *model.Site, why string) {
	if err := f.store.DestinationPauseSet(ctx, share(site.ID), why, f.now()); err != nil {
		f.log.Error("lead ads: pausing fetches", "site", string(site.ID), "err", err)
		return
	}
	f.log.Error("lead ads fetches paused for site", "site", string(site.ID), "pages", fmt.Sprint(site.Settings.LeadAds.PageIDs), "reason", why)
}

// park marks rows paused with reason; the first (tried) one counts an
// attempt when cause is the refusal it met.
func park(rows []*model.Delivery, reason string, cause error) int {
	for i, d := range rows {
		if i == 0 && cause != nil {
			d.Attempts++
			d.Response = errorJSON(cause)
		}
		d.State, d.LastError = model.DeliveryPaused, reason
	}
	return len(rows)
}

// retry schedules rows again after the runner's backoff (the first one
// tried, the rest not), expiring those whose deadline comes first, and
// returns until when the share waits.
func (f *fetcher) retry(sh *deliver.Claim, rows []*model.Delivery, cause error, st *deliver.Stats) time.Time {
	now := sh.Now()
	next := now.Add(sh.Backoff(rows[0].Attempts+1, capi.RetryAfter(cause)))
	for i, d := range rows {
		if i == 0 {
			d.Attempts++
			d.LastError, d.Response = cause.Error(), errorJSON(cause)
		}
		if !next.Before(d.DeadlineAt) {
			d.State, d.LastError = model.DeliveryExpired, "Meta keeps a lead 90 days: it could not be read in time: "+cause.Error()
			st.Expired++
			continue
		}
		d.State, d.NextAt = model.DeliveryRetry, next
		st.Retry++
	}
	sh.Logger().Warn("lead ads fetch will be retried", "site", string(sh.Site), "leads", len(rows),
		"class", capi.Classify(cause).String(), "at", next, "err", cause)
	return next
}

func dead(d *model.Delivery, why string, resp json.RawMessage) {
	d.State, d.LastError, d.Response = model.DeliveryDead, why, resp
	d.Attempts++
}

// errorJSON is Meta's error as stored in a row's response.
func errorJSON(err error) json.RawMessage {
	e := map[string]any{"message": err.Error(), "class": capi.Classify(err).String()}
	var ae *capi.APIError
	if errors.As(err, &ae) {
		e["status"], e["code"], e["error_subcode"], e["fbtrace_id"] = ae.Status, ae.Code, ae.Subcode, ae.FBTraceID
	}
	b, _ := json.Marshal(map[string]any{"error": e})
	return b
}
