package web

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// requireMetricsToken lets through only requests carrying the metrics
// token as a bearer token, compared in constant time.
func (s *Server) requireMetricsToken(h http.Handler) http.Handler {
	return MetricsGuard(s.metricsToken, h)
}

// MetricsGuard wraps a /metrics handler so that it answers only requests
// with Authorization: Bearer <token>; an empty token lets all through (a
// separate, private listen address).
func MetricsGuard(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		// Hashes of equal length: the comparison leaks neither the token
		// nor its length.
		sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="cleanads metrics"`)
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "want Authorization: Bearer <metrics_token>"})
			return
		}
		h.ServeHTTP(w, r)
	})
}
