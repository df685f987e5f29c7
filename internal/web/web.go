// Package web owns CleanAds' HTTP surface: every route in routes.go, plain
// middleware, the public browser endpoints (t.js, collect, lead intake), the
// server-to-server API, and the one place that turns errors into HTTP
// statuses. It never imports deliver or cli.
package web

import (
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/cleanads/cleanads/internal/app"
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
	// WhatsApp holds the Meta app's webhook secrets; empty turns the
	// WhatsApp webhook off.
	WhatsApp WhatsAppOptions
}

// Server holds the handlers' dependencies.
type Server struct {
	app      *app.Service
	db       *store.DB
	log      *slog.Logger
	now      func() time.Time
	proxies  []netip.Prefix
	whatsApp WhatsAppOptions
}

// New returns a Server.
func New(o Options) *Server {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Server{app: o.App, db: o.Store, log: o.Logger, now: o.Now, proxies: o.TrustedProxies,
		whatsApp: o.WhatsApp}
}

// Handler returns the whole application as one handler.
func (s *Server) Handler() http.Handler {
	return s.routes()
}
