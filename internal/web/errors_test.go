package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestBodyTooLargeNamesTheRoutesLimit: a 413 names the limit of the route
// that refused the body, 1 MiB on a webhook as 64 KiB on the tracker.
func TestBodyTooLargeNamesTheRoutesLimit(t *testing.T) {
	s := &Server{}
	for _, tt := range []struct {
		limit int64
		want  string
	}{
		{64 << 10, "body too large: the limit is 64 KiB"},
		{1 << 20, "body too large: the limit is 1 MiB"},
		{4 << 20, "body too large: the limit is 4 MiB"},
		{1500, "body too large: the limit is 1500 bytes"},
	} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/", nil)
		status, msg := s.statusOf(w, r, fmt.Errorf("reading: %w", &http.MaxBytesError{Limit: tt.limit}))
		if status != http.StatusRequestEntityTooLarge || msg != tt.want {
			t.Errorf("limit %d: %d %q, want 413 %q", tt.limit, status, msg, tt.want)
		}
	}
}
