// Package calls is the call-tracker lead source: a tracker posts each call
// to POST /v1/calls, and a call of a minute or more from a lead's phone is
// evidence that the lead is a customer's request (app.Service.Call).
package calls

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/source"
)

// Source receives call trackers' posts.
type Source struct {
	d source.Deps
}

// New returns the call-tracker source.
func New(d source.Deps) source.Source { return &Source{d: d} }

// Name is the source's key.
func (*Source) Name() string { return "calls" }

// Label is its name for people.
func (*Source) Label() string { return "Call tracker" }

// Routes is POST /v1/calls.
func (c *Source) Routes() []source.Route {
	return []source.Route{{Pattern: "POST /v1/calls", Handler: c.receive, Body: 64 << 10}}
}

// receive records a call: the request carries the site's API key or its
// call token, as "Authorization: Bearer <key>" or, for trackers that can
// only be given a URL, "?token=<call token>". A call that matches no lead
// is answered 200 with outcome no_lead, so trackers do not retry it.
func (c *Source) receive(w http.ResponseWriter, r *http.Request) error {
	token := r.URL.Query().Get("token")
	if token == "" {
		if key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			token = strings.TrimSpace(key)
		}
	}
	site, err := c.site(r.Context(), token)
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="cleanads"`)
		return err
	}
	if err := source.Admit(r, site); err != nil {
		return err
	}
	body, err := source.ReadBody(r)
	if err != nil {
		return err
	}
	var in app.CallInput
	if err := source.DecodeJSON(body, &in, true); err != nil {
		return err
	}
	res, err := c.d.App.Call(r.Context(), site, &in)
	if err != nil {
		return err
	}
	source.JSON(w, http.StatusOK, res)
	return nil
}

// site returns the site whose API key or call token is token.
func (c *Source) site(ctx context.Context, token string) (*model.Site, error) {
	if token == "" {
		return nil, source.Error(http.StatusUnauthorized, "this endpoint needs the site's call token or API key: Authorization: Bearer <token>")
	}
	hash := model.HashAPIKey(token)
	sites, err := c.d.Sites.SiteList(ctx)
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
		return nil, source.Error(http.StatusUnauthorized, "unknown call token or API key")
	}
	return found, nil
}
