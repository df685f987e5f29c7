// Package webforms is the website lead source: the tracker script t.js
// (GET /t.js, and its pinned versions /t.v2.js and /t.v1.js), the visits
// it posts to POST /v1/collect, and the leads a site's forms post to
// POST /v1/leads, from t.js, as a plain HTML form, or from the site's own
// server with its API key.
//
// Its POST routes are browser routes (source.Route.Browser): the web
// server answers CORS for the site's origins, the preflight and the
// per-visitor rate limit. What it needs of the server's edge (the
// visitor's address behind trusted proxies, https, the API key's site,
// the cached site) it reads from source.EdgeOf. A visit is
// app.Service.Collect; a lead is app.Service.Submit, with the form token
// and the visit matched there.
package webforms

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/source"
)

// Source receives a website's visits and form posts.
type Source struct {
	app *app.Service
	log *slog.Logger
	now func() time.Time
	// The tracker scripts, gzipped and tagged once.
	latest, v2, v1 http.Handler
}

// New returns the website forms source.
func New(d source.Deps) source.Source {
	s := &Source{app: d.App, log: d.Logger, now: d.Now,
		latest: newScript(trackerJS, "public, max-age=300"),
		v2:     newScript(trackerJS, "public, max-age=31536000, immutable"),
		v1:     newScript(trackerV1, "public, max-age=31536000, immutable")}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Name is the source's key.
func (*Source) Name() string { return "webforms" }

// Label is its name for people.
func (*Source) Label() string { return "Website forms" }

// Routes are the tracker scripts, the visit and the lead intake.
func (s *Source) Routes() []source.Route {
	return []source.Route{
		// Any page may load the script (it answers CORS with *): not a
		// browser route, which would answer only the sites' origins.
		{Pattern: "GET /t.js", Handler: serve(s.latest)},
		{Pattern: "GET /t.v2.js", Handler: serve(s.v2)},
		{Pattern: "GET /t.v1.js", Handler: serve(s.v1)},
		{Pattern: "POST /v1/collect", Handler: s.collect, Browser: true},
		{Pattern: "POST /v1/leads", Handler: s.leadCreate, Browser: true},
	}
}

// serve is a plain handler as a route's.
func serve(h http.Handler) source.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		h.ServeHTTP(w, r)
		return nil
	}
}

// site returns the named site as the server's cache holds it, or a 400
// naming the problem.
func site(r *http.Request, id string) (*model.Site, error) {
	if id == "" {
		return nil, model.Invalid("site", "required: the id of the site this lead is for")
	}
	site, err := source.EdgeOf(r).Site(r.Context(), model.SiteID(id))
	if errors.Is(err, model.ErrNotFound) {
		return nil, model.Invalid("site", fmt.Sprintf("unknown site %q", id))
	}
	return site, err
}

// checkOrigin refuses a browser's post from outside the site's origins,
// without the CORS headers the server set for another site's origin.
func checkOrigin(w http.ResponseWriter, r *http.Request, site *model.Site) error {
	if site.AllowsOrigin(requestOrigin(r)) {
		return nil
	}
	w.Header().Del("Access-Control-Allow-Origin")
	w.Header().Del("Access-Control-Allow-Credentials")
	return source.Error(http.StatusForbidden, fmt.Sprintf("origin %q is not one of site %q's origins", requestOrigin(r), site.ID))
}

// decodeJSON reads one JSON object from the body, refusing invalid UTF-8,
// unknown fields and trailing data.
func decodeJSON(r *http.Request, v any) error {
	b, err := source.ReadBody(r)
	if err != nil {
		return err
	}
	return source.DecodeJSON(b, v, true)
}
