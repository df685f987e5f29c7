// Package web owns CleanAds' HTTP surface: every route in routes.go, plain
// middleware, the edge of the lead sources' routes (CORS, the per-visitor
// limit and source.Edge for the website's forms and tracker, which are
// internal/webforms), the server-to-server API, the admin web UI (admin_*.go, with its templates and
// static files embedded), and the one place that turns errors into HTTP
// statuses. It never imports deliver or cli.
package web

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/auth"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/ratelimit"
	"github.com/cleanads/cleanads/internal/source"
	"github.com/cleanads/cleanads/internal/sources"
	"github.com/cleanads/cleanads/internal/store"
)

// Options are the dependencies of a Server.
type Options struct {
	App    *app.Service
	Store  *store.DB
	Logger *slog.Logger
	Now    func() time.Time
	// TrustedProxies are the peers whose X-Forwarded-For / X-Real-IP are
	// believed.
	TrustedProxies []netip.Prefix
	// Auth runs admin logins; without it the admin UI answers 404.
	Auth *auth.Service
	// PublicURL is the server's address as browsers see it, for install
	// snippets; empty means the address the admin page was opened on.
	PublicURL string
	// Location is the time zone admin pages show times in (default Local).
	Location *time.Location
	// SiteTTL is how long the public endpoints reuse a site read from the
	// database (default DefaultSiteTTL; negative reads it every time).
	SiteTTL time.Duration
	// Limits are the request rates; the zero value limits nothing.
	Limits Limits
	// Metrics, when set, hears every request (route pattern, status,
	// duration).
	Metrics RequestObserver
	// MetricsHandler serves /metrics on this listener when MetricsToken is
	// set; it then asks for Authorization: Bearer <MetricsToken>.
	MetricsHandler http.Handler
	MetricsToken   string
	// Notifier checks the notification settings and sends the
	// notifications page's tests; nil offers no test.
	Notifier Notifier
	// Platforms are the ad platforms there are (internal/platforms): a
	// site's page has a settings section for each one without a section
	// of its own (Meta has one), rendered from its Fields.
	Platforms []platform.Platform
	// Sources are the lead sources whose routes the server mounts; nil
	// means every one of internal/sources, built on App and Store.
	Sources []source.Source
	// SourceSettings are the program-wide settings of the sources when
	// Sources is nil (source.Deps.Settings, by "<source>.<key>": the
	// WhatsApp webhook's whatsapp.verify_token and whatsapp.app_secret).
	SourceSettings map[string]string
}

// RequestObserver hears each request once it is answered: the route's
// pattern (bounded), never the path.
type RequestObserver interface {
	ObserveRequest(route string, status int, took time.Duration)
}

// Server holds the handlers' dependencies.
type Server struct {
	app     *app.Service
	db      *store.DB
	log     *slog.Logger
	now     func() time.Time
	proxies []netip.Prefix

	auth      *auth.Service
	publicURL string
	loc       *time.Location
	admin     *adminUI
	sites     *siteCache
	limits    Limits
	limiter   *ratelimit.Limiter
	metrics   RequestObserver

	metricsHandler http.Handler
	metricsToken   string
	notifier       Notifier
	platforms      []platform.Platform
	sources        []source.Source
	// edge is what the sources' routes read of this server.
	edge source.Edge
}

// New returns a Server.
func New(o Options) *Server {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Location == nil {
		o.Location = time.Local
	}
	s := &Server{app: o.App, db: o.Store, log: o.Logger, now: o.Now, proxies: o.TrustedProxies,
		auth: o.Auth, publicURL: strings.TrimRight(o.PublicURL, "/"), loc: o.Location,
		limits: o.Limits, limiter: ratelimit.New(ratelimit.Options{Now: o.Now}), metrics: o.Metrics,
		metricsHandler: o.MetricsHandler, metricsToken: o.MetricsToken, notifier: o.Notifier,
		platforms: o.Platforms, sources: o.Sources}
	s.edge = edge{s}
	if s.sources == nil {
		s.sources = sources.All(source.Deps{Deps: platform.Deps{Logger: o.Logger, Now: o.Now}, App: o.App, Sites: o.Store, Pauses: o.Store,
			Settings: o.SourceSettings})
	}
	// The templates are embedded: a mistake in one is a bug of this build,
	// found here at start-up (and by the tests) rather than on a page view.
	s.admin = mustAdminUI()
	if o.SiteTTL == 0 {
		o.SiteTTL = DefaultSiteTTL
	}
	s.sites = &siteCache{ttl: max(o.SiteTTL, 0), now: time.Now, load: func(ctx context.Context, id model.SiteID) (*model.Site, error) {
		return s.db.SiteByID(ctx, id)
	}}
	return s
}

// Handler returns the whole application as one handler.
func (s *Server) Handler() http.Handler {
	return s.routes()
}
