package web

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/cleanads/cleanads/internal/source"
)

// maxBody is the largest request body accepted on /v1 and by the admin
// UI: a browser route's.
const maxBody = source.BrowserBody

func limitBody(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		h.ServeHTTP(w, r)
	})
}

// statusWriter remembers the status for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logRequests logs method, path, status and duration; never the query
// string or body, which may hold personal data.
func (s *Server) logRequests(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := s.now()
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		took := s.now().Sub(start)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		// Asked first: below the level (warn, in most installs) the line
		// and its masked path are not built at all.
		if level := levelFor(sw.status); s.log.Enabled(r.Context(), level) {
			s.log.LogAttrs(r.Context(), level, "http",
				slog.String("method", r.Method), slog.String("path", logPath(r.URL.Path)),
				slog.Int("status", sw.status), slog.Duration("took", took))
		}
		if s.metrics != nil {
			// The mux set r.Pattern on this same request: a route pattern,
			// never the path, so the label set stays bounded.
			route := r.Pattern
			if route == "" {
				route = "unmatched"
			}
			s.metrics.ObserveRequest(route, sw.status, took)
		}
	})
}

// logPath is a request path as logged: a segment that looks like an e-mail
// address or a phone number (a caller may put one where an id belongs) is
// masked; ids and route words are kept.
func logPath(p string) string {
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		digits, other := 0, 0
		for _, c := range seg {
			switch {
			case c >= '0' && c <= '9':
				digits++
			case strings.ContainsRune("+-(). ", c):
			default:
				other++
			}
		}
		if strings.Contains(seg, "@") || strings.Contains(seg, "%40") || digits >= 7 && other == 0 {
			segs[i] = "[redacted]"
		}
	}
	return strings.Join(segs, "/")
}

func (s *Server) recoverPanics(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.ErrorContext(r.Context(), "panic", "path", logPath(r.URL.Path), "panic", v)
				writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "internal error"})
			}
		}()
		h.ServeHTTP(w, r)
	})
}

func levelFor(status int) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelError
	case status >= 400:
		return slog.LevelWarn
	}
	return slog.LevelInfo
}
