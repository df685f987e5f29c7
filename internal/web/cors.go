package web

import (
	"net/http"
)

// cors answers browsers from a site's own origins. The site is named by the
// ?site= query parameter (t.js always sends it); without it, an origin of
// any site passes the preflight and the handler checks the body's site.
func (s *Server) cors(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Origin")
		origin := r.Header.Get("Origin")
		if origin != "" && s.originAllowed(r, origin) {
			w.Header().Set("Access-Control-Allow-Origin", origin)
			w.Header().Set("Access-Control-Allow-Credentials", "true")
		}
		h.ServeHTTP(w, r)
	})
}

func (s *Server) originAllowed(r *http.Request, origin string) bool {
	if id := r.URL.Query().Get("site"); id != "" {
		site, err := s.site(r, id)
		return err == nil && site.AllowsOrigin(origin)
	}
	sites, err := s.db.SiteList(r.Context())
	if err != nil {
		return false
	}
	for _, site := range sites {
		if site.AllowsOrigin(origin) {
			return true
		}
	}
	return false
}

// preflight answers a CORS preflight; cors has already decided the origin.
func (s *Server) preflight(w http.ResponseWriter, r *http.Request) {
	if w.Header().Get("Access-Control-Allow-Origin") == "" {
		w.WriteHeader(http.StatusForbidden)
		return
	}
	w.Header().Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	w.Header().Set("Access-Control-Allow-Headers", "Content-Type")
	w.Header().Set("Access-Control-Max-Age", "86400")
	w.WriteHeader(http.StatusNoContent)
}
