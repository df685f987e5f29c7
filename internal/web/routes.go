package web

import (
	"cmp"
	"context"
	"net/http"
	"strings"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/source"
)

// routes is the map of the application: every route, with its middleware.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	// Browser-facing endpoints are limited per visitor address, the API
	// per key.
	public := func(h http.Handler) http.Handler { return s.cors(s.limitPublic(h)) }
	preflight := s.cors(limitBody(http.HandlerFunc(s.preflight)))
	api := func(h http.HandlerFunc) http.Handler { return limitBody(s.requireAPIKey(s.limitAPI(h))) }

	// Operations.
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	// The host's root says what it is, with a link to the admin UI.
	mux.HandleFunc("GET /{$}", s.home)
	if s.metricsToken != "" && s.metricsHandler != nil {
		mux.Handle("GET /metrics", s.requireMetricsToken(s.metricsHandler))
	}

	// API (site API key).
	mux.Handle("GET /v1/leads", api(s.leadList))
	mux.Handle("GET /v1/leads/{id}", api(s.leadGet))
	mux.Handle("POST /v1/leads/{id}/events", api(s.leadEventCreate))
	mux.Handle("POST /v1/events", api(s.eventCreate))

	// Lead sources: each verifies its own requests (internal/source). The
	// website's forms and tracker (internal/webforms) are one: their
	// browser routes get CORS for the site's origins, the preflight and
	// the per-visitor limit.
	preflighted := map[string]bool{}
	for _, src := range s.sources {
		for _, rt := range src.Routes() {
			if !rt.Browser {
				mux.Handle(rt.Pattern, limitBodyTo(cmp.Or(rt.Body, source.DefaultBody), s.sourceRoute(rt.Handler)))
				continue
			}
			mux.Handle(rt.Pattern, public(limitBodyTo(cmp.Or(rt.Body, source.BrowserBody), s.sourceRoute(rt.Handler))))
			// A browser asks before it posts JSON across origins.
			method, path, _ := strings.Cut(rt.Pattern, " ")
			if method != http.MethodGet && method != http.MethodHead && !preflighted[path] {
				preflighted[path] = true
				mux.Handle("OPTIONS "+path, preflight)
			}
		}
	}

	// Admin web UI (login session; an API key opens nothing here). Every
	// page gets the strict headers; every POST is refused cross-origin and
	// needs the session's CSRF token.
	if s.auth != nil {
		open := func(h http.HandlerFunc) http.Handler { return adminHeaders(crossOrigin.Handler(limitBody(h))) }
		admin := func(h http.HandlerFunc) http.Handler {
			return adminHeaders(crossOrigin.Handler(limitBody(s.requireLogin(h))))
		}
		mux.HandleFunc("GET /admin/static/{name}", s.staticFile)
		mux.Handle("GET /admin", http.RedirectHandler("/admin/", http.StatusMovedPermanently))
		adminOnly := func(h http.HandlerFunc) http.Handler {
			return adminHeaders(crossOrigin.Handler(limitBody(s.requireLogin(s.requireAdmin(h)))))
		}
		mux.Handle("GET /admin/login", open(s.adminLogin))
		mux.Handle("GET /admin/password", open(s.adminPassword))
		mux.Handle("POST /admin/password", open(s.adminPasswordPost))
		mux.Handle("GET /admin/people", adminOnly(s.adminPeople))
		mux.Handle("POST /admin/people", adminOnly(s.adminPeopleAdd))
		mux.Handle("POST /admin/people/{id}/link", adminOnly(s.adminPeopleLink))
		mux.Handle("POST /admin/people/{id}/remove", adminOnly(s.adminPeopleRemove))
		mux.Handle("POST /admin/people/{id}/access", adminOnly(s.adminPeopleAccess))
		mux.Handle("POST /admin/login", open(s.adminLoginPost))
		mux.Handle("POST /admin/logout", admin(s.adminLogout))
		mux.Handle("POST /admin/lang", admin(s.adminLang))
		mux.Handle("GET /admin/{$}", admin(s.adminInbox))
		mux.Handle("GET /admin/leads.csv", admin(s.adminExport))
		mux.Handle("GET /admin/import", admin(s.adminImport))
		// The import's steps carry the CSV file: a larger body.
		mux.Handle("POST /admin/import", adminHeaders(crossOrigin.Handler(limitBodyTo(maxImportBody, s.requireLogin(http.HandlerFunc(s.adminImportPost))))))
		mux.Handle("GET /admin/leads/{id}", admin(s.adminLead))
		mux.Handle("POST /admin/leads/{id}/evidence", admin(s.adminLeadEvidence))
		mux.Handle("POST /admin/leads/{id}/stages", admin(s.adminLeadStage))
		mux.Handle("GET /admin/deliveries", admin(s.adminDeliveries))
		mux.Handle("POST /admin/deliveries/{id}/replay", admin(s.adminReplay))
		mux.Handle("GET /admin/dashboard", admin(s.adminDashboard))
		mux.Handle("GET /admin/report", admin(s.adminReport))
		mux.Handle("GET /admin/sites", admin(s.adminSites))
		mux.Handle("POST /admin/sites", adminOnly(s.adminSiteCreate))
		mux.Handle("GET /admin/sites/{id}", admin(s.adminSite))
		mux.Handle("POST /admin/sites/{id}", admin(s.adminSiteSave))
		mux.Handle("POST /admin/sites/{id}/test", admin(s.adminSiteTest))
		mux.Handle("POST /admin/sites/{id}/stages", admin(s.adminStagesSave))
		mux.Handle("POST /admin/sites/{id}/platforms/{name}", admin(s.adminPlatformSave))
		mux.Handle("POST /admin/sites/{id}/platforms/{name}/test", admin(s.adminPlatformTest))
		mux.Handle("GET /admin/sites/{id}/readiness", admin(s.adminReadiness))
		mux.Handle("POST /admin/sites/{id}/google/resume", admin(s.adminGoogleResume))
		// Where a site's leads are posted, and what the answers show, is
		// an admin's choice: a member could otherwise read the answers of
		// services on the server's own network.
		mux.Handle("POST /admin/sites/{id}/webhooks", adminOnly(s.adminHookAdd))
		mux.Handle("POST /admin/sites/{id}/webhooks/{hook}/remove", adminOnly(s.adminHookRemove))
		mux.Handle("POST /admin/sites/{id}/webhooks/{hook}/test", admin(s.adminHookTest))
		mux.Handle("POST /admin/sites/{id}/webhooks/posts/{post}/replay", admin(s.adminHookReplay))
		mux.Handle("GET /admin/notifications", admin(s.adminNotify))
		mux.Handle("POST /admin/notifications", admin(s.adminNotifySave))
		mux.Handle("POST /admin/notifications/smtp", adminOnly(s.adminNotifySMTP))
		mux.Handle("POST /admin/notifications/test", admin(s.adminNotifyTest))
		mux.Handle("/admin/", admin(s.adminNotFound))
	}

	return s.recoverPanics(s.logRequests(mux))
}

// sourceRoute serves a lead source's route: its refusals and failures are
// answered by the one error mapping, and what it needs of the server's
// edge (the visitor's address, https, API keys, the site cache, the
// request budget) is the request context's source.Edge.
func (s *Server) sourceRoute(h source.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := s.edge
		if replayed(r) != nil {
			e = replayEdge{edge{s}}
		}
		r = r.WithContext(source.WithEdge(r.Context(), e))
		if err := h(w, r); err != nil {
			s.fail(w, r, err)
		}
	})
}

// replayEdge is the edge of a request replayed from the upgrade journal:
// its budget was counted when it arrived.
type replayEdge struct{ edge }

func (replayEdge) Admit(*model.Site) error { return nil }

// edge is the server's source.Edge.
type edge struct{ s *Server }

func (e edge) ClientIP(r *http.Request) string              { return e.s.clientIP(r) }
func (e edge) HTTPS(r *http.Request) bool                   { return e.s.isHTTPS(r) }
func (e edge) APISite(r *http.Request) (*model.Site, error) { return e.s.apiSite(r) }
func (e edge) Admit(site *model.Site) error                 { return e.s.admitSite(site) }
func (e edge) Site(ctx context.Context, id model.SiteID) (*model.Site, error) {
	return e.s.sites.get(ctx, id)
}
