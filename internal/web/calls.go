package web

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
)

// requireCallAuth lets through a request carrying the site's API key or its
// call token, as "Authorization: Bearer <key>" or, for trackers that can
// only be given a URL, "?token=<call token>"; the site is in the request's
// context.
func (s *Server) requireCallAuth(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := r.URL.Query().Get("token")
		if token == "" {
			key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if ok {
				token = strings.TrimSpace(key)
			}
		}
		site, err := s.callSite(r.Context(), token)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="cleanads"`)
			s.fail(w, r, err)
			return
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), siteKey, site)))
	})
}

// callSite returns the site whose API key or call token is token.
func (s *Server) callSite(ctx context.Context, token string) (*model.Site, error) {
	if token == "" {
		return nil, errStatus(http.StatusUnauthorized, "this endpoint needs the site's call token or API key: Authorization: Bearer <token>")
	}
	hash := model.HashAPIKey(token)
	sites, err := s.db.SiteList(ctx)
	if err != nil {
		return nil, err
	}
	var found *model.Site
	for _, site := range sites {
		// Every site is compared, in constant time, so the answer's timing
		// says nothing about which tokens exist.
		key := subtle.ConstantTimeCompare([]byte(site.APIKeyHash), []byte(hash)) == 1
		call := subtle.ConstantTimeCompare([]byte(site.Settings.CallTokenHash), []byte(hash)) == 1
		if (key && site.APIKeyHash != "") || (call && site.Settings.CallTokenHash != "") {
			found = site
		}
	}
	if found == nil {
		return nil, errStatus(http.StatusUnauthorized, "unknown call token or API key")
	}
	return found, nil
}

// callCreate records a call from a call tracker: a call of 60 s or more
// from a lead's phone confirms the lead. A call that matches no lead is
// answered 200 with outcome no_lead, so trackers do not retry it.
func (s *Server) callCreate(w http.ResponseWriter, r *http.Request) {
	var in app.CallInput
	if err := decodeJSON(r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	res, err := s.app.Call(r.Context(), siteFrom(r.Context()), &in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}
