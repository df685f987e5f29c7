package web

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"github.com/cleanads/cleanads/internal/model"
)

type ctxKey int

const siteKey ctxKey = iota

// apiSite returns the site whose API key the request carries: nil when it
// carries none, an error when the key is wrong.
func (s *Server) apiSite(r *http.Request) (*model.Site, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, nil
	}
	key, ok := strings.CutPrefix(h, "Bearer ")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return nil, errStatus(http.StatusUnauthorized, "want Authorization: Bearer <site API key>")
	}
	hash := model.HashAPIKey(key)
	site, err := s.db.SiteByAPIKeyHash(r.Context(), hash)
	if errors.Is(err, model.ErrNotFound) {
		return nil, errStatus(http.StatusUnauthorized, "unknown API key")
	}
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare([]byte(site.APIKeyHash), []byte(hash)) != 1 {
		return nil, errStatus(http.StatusUnauthorized, "unknown API key")
	}
	return site, nil
}

// requireAPIKey lets through only requests with a site's API key; the site
// is in the request's context.
func (s *Server) requireAPIKey(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		site, err := s.apiSite(r)
		if err == nil && site == nil {
			err = errStatus(http.StatusUnauthorized, "this endpoint needs the site's API key: Authorization: Bearer <key>")
		}
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="cleanads"`)
			s.fail(w, r, err)
			return
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), siteKey, site)))
	})
}

// siteFrom returns the site put in the context by requireAPIKey.
func siteFrom(ctx context.Context) *model.Site {
	site, _ := ctx.Value(siteKey).(*model.Site)
	return site
}
