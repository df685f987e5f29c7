package webforms_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/source"
	"github.com/cleanads/cleanads/internal/webforms"
)

// The visit and the lead are browser routes (the server answers their
// CORS, preflight and per-visitor limit); the scripts are not, since any
// page may load them.
func TestRoutes(t *testing.T) {
	want := map[string]bool{"GET /t.js": false, "GET /t.v2.js": false, "GET /t.v1.js": false,
		"POST /v1/collect": true, "POST /v1/leads": true}
	routes := webforms.New(source.Deps{}).Routes()
	if len(routes) != len(want) {
		t.Fatalf("routes: %+v", routes)
	}
	for _, rt := range routes {
		if browser, ok := want[rt.Pattern]; !ok || rt.Browser != browser {
			t.Errorf("%s: browser %t", rt.Pattern, rt.Browser)
		}
	}
}

// A route's refusals are returned for the server's one error mapping, with
// nothing written.
func TestRefusals(t *testing.T) {
	handlers := map[string]source.HandlerFunc{}
	for _, rt := range webforms.New(source.Deps{}).Routes() {
		handlers[rt.Pattern] = rt.Handler
	}
	for _, c := range []struct {
		route, ctype, body string
		status             int
		field              string
	}{
		{"POST /v1/collect", "application/xml", "<a/>", http.StatusUnsupportedMediaType, ""},
		{"POST /v1/leads", "", "{}", http.StatusUnsupportedMediaType, ""},
		{"POST /v1/collect", "text/plain", `{"url":"https://a.example/"}`, 0, "site"},
		// Outside the server (a bare source.Edge) no site exists.
		{"POST /v1/leads", "application/json", `{"site":"dent"}`, 0, "site"},
		{"POST /v1/leads", "application/json", `{"site":"dent","nope":1}`, 0, "nope"},
	} {
		r := httptest.NewRequest("POST", strings.TrimPrefix(c.route, "POST "), strings.NewReader(c.body))
		r.Header.Set("Content-Type", c.ctype)
		w := httptest.NewRecorder()
		err := handlers[c.route](w, r)
		var se *source.StatusError
		var ie *model.InputError
		switch {
		case c.status != 0 && (!errors.As(err, &se) || se.Status != c.status):
			t.Errorf("%s %s: %v, want %d", c.route, c.body, err, c.status)
		case c.status == 0 && (!errors.As(err, &ie) || !strings.Contains(err.Error(), c.field)):
			t.Errorf("%s %s: %v, want an input error on %q", c.route, c.body, err, c.field)
		}
		if w.Body.Len() != 0 {
			t.Errorf("%s %s: wrote %q", c.route, c.body, w.Body)
		}
	}
}
