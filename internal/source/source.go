// Package source is the one shape of a lead source: a way leads, and what
// becomes of them, reach CleanAds from outside. A website's forms
// (internal/webforms), Meta's Lead Ads, WhatsApp, a call tracker and a CRM
// are each a package of their own with one value implementing Source, and
// one line in internal/sources that lists it.
//
// A source answers four questions:
//   - what it receives: its Routes, the endpoints it is posted to, by
//     another system or (a Browser route: the website's forms and tracker)
//     by visitors' browsers from a site's pages, which the server answers
//     with CORS for the site's origins, the preflight and the per-visitor
//     limit; what a route needs of the server's edge (the visitor's
//     address, https, an API key's site, the cached site, the request
//     budget) is EdgeOf(r);
//   - how that is verified: each route checks its request (a signature over
//     the bytes as received, a token, a per-site secret) before anything of
//     the body is read, and answers an unverified request with
//     Error(401 or 403, words) so that nothing is stored;
//   - how it finds or makes a lead: through the use cases (app.Service:
//     Submit makes one, FindLead finds one by the keys a CRM knows,
//     AddEvent records evidence or a stage on one, QueueJobs keeps work for
//     later; Call, WhatsAppInbound and LeadgenQueue are the matching of
//     the sources that came first);
//   - what evidence it gives: a lead of its own (a form, an Instant Form, a
//     Click-to-WhatsApp chat), or evidence and stages on an existing lead
//     (a WhatsApp reply, a call, a CRM deal's stage), as app.LeadEventInput.
//
// Work that needs another system after the webhook is answered (reading
// the lead from the Graph API, the contact from a CRM) is a Worker's: each
// piece is queued durably in the same transaction as the receipt (an
// outbox row of the worker's Destination, idempotent on its key) and done
// by the delivery runner through the worker's Handler, retried, held and
// parked as the platform.Failure classes say, so nothing is lost while the
// other system is down. A source with settings per site (a CRM's token and
// stage mapping) implements platform.Configurable and gets a section on
// the site's admin page, its secrets sealed as the platforms' are.
package source

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
)

// Source is a lead source. Its methods must be safe for concurrent use.
type Source interface {
	// Name is the source's key ("calls", "whatsapp", "leadads",
	// "hubspot"): its settings document's and secrets' name, and its
	// worker's outbox destination.
	Name() string
	// Label is its name for people ("Call tracker", "HubSpot").
	Label() string
	// Routes are the endpoints it receives on.
	Routes() []Route
}

// Route is one endpoint of a source.
type Route struct {
	// Pattern is the route as http.ServeMux reads it, method included:
	// "POST /v1/webhooks/hubspot/{site}".
	Pattern string
	// Handler serves it. An error it returns is answered by the server's
	// one error mapping (Error's status and words, model.InvalidError as
	// 400, model.ErrNotFound as 404, anything else as 500 and logged); it
	// must not have written anything then.
	Handler HandlerFunc
	// Body is the largest body the route reads (default DefaultBody, or
	// BrowserBody for a Browser route).
	Body int64
	// Browser marks a route that visitors' browsers post to from a site's
	// own pages (a tracker's visit, a form). The server then answers it
	// as it does every browser-facing endpoint: CORS only for the origins
	// of the site named by ?site= (any site's origins without it), an
	// automatic OPTIONS preflight for a POST, the per-visitor rate limit
	// (a request with a valid API key counts against the key instead),
	// and the smaller body limit. The route still checks the origin
	// against the site it reads from the body: CORS alone does not stop a
	// form post.
	Browser bool
}

// HandlerFunc serves one request of a source, or returns why not.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Worker is a source with work after its webhook is answered: its pieces
// are outbox rows of destination Destination, queued with
// app.Service.QueueJobs (or a use case of the source's own), that the
// delivery runner hands to Handler. Most workers implement deliver.Batches
// (Label, On, BatchSize, and a Send that does each row's work and returns
// a platform.Outcome per row, or a *platform.Failure whose class retries,
// throttles, refuses or pauses) and return
// deliver.NewPlatformHandler(worker, store), which keeps pauses, deadlines,
// backoff and leases as it does for the platforms.
type Worker interface {
	Source
	Destination() string
	Handler() deliver.Handler
}

// Sites reads the sites a request may be for.
type Sites interface {
	SiteByID(ctx context.Context, id model.SiteID) (*model.Site, error)
	SiteList(ctx context.Context) ([]*model.Site, error)
}

// Deps are what the program gives every source's constructor
// (func New(source.Deps) source.Source).
type Deps struct {
	// Deps carries the HTTP client, the overridden API addresses (by the
	// source's name), the logger and the clock.
	platform.Deps
	// App is the use cases.
	App   *app.Service
	Sites Sites
	// Pauses is the store a worker's handler keeps its pauses in
	// (deliver.NewPlatformHandler(worker, d.Pauses)).
	Pauses deliver.PauseStore
	// PublicURL is the server's address as the outside world posts to it
	// (config public_url; "" when unset): a source whose sender signs the
	// URL it posted to (HubSpot) rebuilds it from this behind a proxy.
	PublicURL string
	// Settings are the program-wide settings of the sources, from the
	// config file, by "<source>.<key>" ("whatsapp.app_secret"); a site's
	// own are in its settings document and sealed secrets.
	Settings map[string]string
	// Graph reads Meta's Graph API with a site's own token, for a worker
	// that fetches what Meta told of (Lead Ads); nil when the program
	// runs no workers (a source that needs it is then routes only).
	Graph Graph
}

// Graph is what a source's worker reads of Meta's Graph API: a Lead Ads
// lead and its form's name; *capi.Client is one.
type Graph interface {
	Leadgen(ctx context.Context, a capi.GraphAuth, id string) (*capi.LeadgenLead, error)
	FormName(ctx context.Context, a capi.GraphAuth, formID string) (string, error)
}

// UnknownStage is a CRM source's words for a stage mapping that names a
// stage the site does not have: a change recorded as it would be refused.
// They are fixed, so the admin UI translates them.
const UnknownStage = "A CleanAds stage here is not one of the site's stages: add it in the site's Stages section first, or correct its spelling."

// StatusError is a refusal with its HTTP status and words safe to show
// the caller.
type StatusError struct {
	Status int
	Words  string
	// RetryAfter, when set, is answered as the Retry-After header
	// (seconds).
	RetryAfter int
}

func (e *StatusError) Error() string { return e.Words }

// Error returns a refusal the server answers with status and words.
func Error(status int, words string) error { return &StatusError{Status: status, Words: words} }

// Edge is what the web server knows of a request and a source's route
// cannot know by itself: the visitor's address behind the trusted proxies,
// whether the browser came over https, the site an API key opens, a site
// as the server's short-lived cache holds it, and a site's request budget.
// The server puts its Edge in the context of every source route's request;
// EdgeOf reads it.
type Edge interface {
	// ClientIP is the visitor's address: the peer's, or the one the
	// trusted proxies forwarded (a header from any other peer is never
	// believed).
	ClientIP(r *http.Request) string
	// HTTPS tells whether the browser reached the server over https:
	// directly, or through a trusted proxy that says so.
	HTTPS(r *http.Request) bool
	// APISite is the site whose API key the request carries
	// (Authorization: Bearer <key>): nil without a key, a 401 StatusError
	// for a wrong one.
	APISite(r *http.Request) (*model.Site, error)
	// Site is the site id names as the server's cache holds it (a change
	// reaches it within seconds; the value is shared, read it only);
	// model.ErrNotFound when there is none.
	Site(ctx context.Context, id model.SiteID) (*model.Site, error)
	// Admit counts one request against a site's budget (the API's rate per
	// key, as the server is configured): a 429 StatusError with RetryAfter
	// when it is spent.
	Admit(site *model.Site) error
}

type edgeKey struct{}

// WithEdge returns ctx carrying the server's edge for a source's request.
func WithEdge(ctx context.Context, e Edge) context.Context {
	return context.WithValue(ctx, edgeKey{}, e)
}

// EdgeOf returns the edge the server gave the request. Outside the server
// (a route called on its own in a test) it is a bare one: the peer's
// address, https only on TLS, no API keys, no sites, no budget.
func EdgeOf(r *http.Request) Edge {
	if e, ok := r.Context().Value(edgeKey{}).(Edge); ok {
		return e
	}
	return bareEdge{}
}

// Admit counts the request against its site's budget (EdgeOf(r).Admit),
// once the route knows the site: a refusal is a 429 with Retry-After.
func Admit(r *http.Request, site *model.Site) error { return EdgeOf(r).Admit(site) }

// bareEdge is the edge of a request that did not come through the server.
type bareEdge struct{}

func (bareEdge) ClientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
func (bareEdge) HTTPS(r *http.Request) bool                 { return r.TLS != nil }
func (bareEdge) APISite(*http.Request) (*model.Site, error) { return nil, nil }
func (bareEdge) Admit(*model.Site) error                    { return nil }
func (bareEdge) Site(context.Context, model.SiteID) (*model.Site, error) {
	return nil, model.ErrNotFound
}

// SiteFromPath returns the site the request's {site} path value names; a
// site that does not exist, or for which on says the source is not set
// up, is answered 404 with notSet's words (no hint which sites exist).
func SiteFromPath(r *http.Request, sites Sites, on func(*model.Site) bool, notSet string) (*model.Site, error) {
	site, err := sites.SiteByID(r.Context(), model.SiteID(r.PathValue("site")))
	if errors.Is(err, model.ErrNotFound) || err == nil && !on(site) {
		return nil, Error(http.StatusNotFound, notSet)
	}
	return site, err
}

// Age checks a signed request's timestamp against now: a time further than
// tolerance either way is refused, so a captured request cannot be
// replayed later.
func Age(at, now time.Time, tolerance time.Duration) error {
	if d := now.Sub(at); d > tolerance || d < -tolerance {
		return Error(http.StatusUnauthorized, "the request's timestamp is too far from now: it may be a replay")
	}
	return nil
}
