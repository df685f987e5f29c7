package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/source"
)

// errStatus is an error that already knows its status and public message
// (the same refusal a lead source's route returns).
func errStatus(status int, msg string) error { return source.Error(status, msg) }

// fail answers err as JSON: {"error": "..."} with the status decided by
// statusOf.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := s.statusOf(w, r, err)
	writeJSON(w, status, map[string]string{"error": msg})
}

// statusOf is the one place that maps the core's errors to an HTTP status
// and a message safe to show; the API answers it as JSON, the admin UI as a
// page. Unexpected errors are logged once, here, and not shown to the caller.
func (s *Server) statusOf(w http.ResponseWriter, r *http.Request, err error) (int, string) {
	status, msg := http.StatusInternalServerError, "internal error"
	var he *source.StatusError
	var ie *model.InputError
	if errors.As(err, &he) && he.Status == http.StatusRequestTimeout {
		// The connection's deadline has passed: it cannot serve another
		// request.
		w.Header().Set("Connection", "close")
	}
	var mb *http.MaxBytesError
	switch {
	case errors.As(err, &he):
		status, msg = he.Status, he.Words
		if he.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(he.RetryAfter))
		}
	case errors.As(err, &mb):
		status, msg = http.StatusRequestEntityTooLarge, "body too large: the limit is "+bytesWords(mb.Limit)

	case errors.As(err, &ie):
		status, msg = http.StatusBadRequest, err.Error()
	case errors.Is(err, model.ErrNotFound):
		status, msg = http.StatusNotFound, "not found"
	case errors.Is(err, model.ErrConflict):
		status, msg = http.StatusConflict, err.Error()
	case errors.Is(err, context.Canceled):
		status, msg = 499, "client went away"
	case errors.Is(err, context.DeadlineExceeded) || isUnavailable(err):
		status, msg = http.StatusServiceUnavailable, "storage is unavailable; try again shortly"
		w.Header().Set("Retry-After", "5")
		s.log.ErrorContext(r.Context(), "storage unavailable", "path", logPath(r.URL.Path), "err", err)
	default:
		s.log.ErrorContext(r.Context(), "request failed", "path", logPath(r.URL.Path), "err", err)
	}
	return status, msg
}

// bytesWords writes a size limit as people read it: 64 KiB, 1 MiB.
func bytesWords(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// readError turns a failure to read the request body into its answer (see
// source.ReadError).
func readError(err error) error { return source.ReadError(err) }

// isUnavailable tells whether err says the database cannot take writes now.
func isUnavailable(err error) bool {
	var u interface{ Unavailable() bool }
	return errors.As(err, &u) && u.Unavailable()
}

func writeJSON(w http.ResponseWriter, status int, v any) { source.JSON(w, status, v) }
