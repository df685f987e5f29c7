package web

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/netip"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/source"
)

// Limits are the request rates of the public endpoints (per visitor
// address) and of the API (per API key), with per-site overrides.
type Limits struct {
	PublicPerIP model.Rate
	APIPerKey   model.Rate
	// Sites override the rates for one site; a nil rate inherits.
	Sites map[model.SiteID]SiteLimits
}

// SiteLimits override the global rates for one site.
type SiteLimits struct {
	PublicPerIP *model.Rate
	APIPerKey   *model.Rate
}

func (l *Limits) public(site model.SiteID) (model.Rate, bool) {
	if o, ok := l.Sites[site]; ok && o.PublicPerIP != nil {
		return *o.PublicPerIP, true
	}
	return l.PublicPerIP, false
}

func (l *Limits) api(site model.SiteID) model.Rate {
	if o, ok := l.Sites[site]; ok && o.APIPerKey != nil {
		return *o.APIPerKey
	}
	return l.APIPerKey
}

// limitPublic limits a browser-facing endpoint per visitor address (an
// IPv6 visitor by its /64, which one subscriber usually holds whole). A
// request carrying a valid API key is the site's own server posting for
// its visitors, all from one address: it counts against the key instead.
func (s *Server) limitPublic(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if replayed(r) != nil {
			// Counted when it arrived; the replay runs a burst of them.
			h.ServeHTTP(w, r)
			return
		}
		if r.Header.Get("Authorization") != "" {
			site, err := s.apiSite(r)
			var he *source.StatusError
			switch {
			case err == nil && site != nil:
				if s.refuse(w, r, "key:"+string(site.ID), s.limits.api(site.ID), "per API key") {
					return
				}
				h.ServeHTTP(w, r)
				return
			case err != nil && !errors.As(err, &he):
				// The key could not be checked (storage unavailable): the
				// handler answers that, as a 503 the caller retries, not a
				// 429 from the address's budget.
				h.ServeHTTP(w, r)
				return
			}
		}
		// The site is named by ?site= (t.js always sends it); a site's own
		// rate gets its own buckets.
		siteID := model.SiteID(r.URL.Query().Get("site"))
		rate, own := s.limits.public(siteID)
		key := "ip:" + addrKey(s.clientIP(r))
		if own {
			key = "site:" + string(siteID) + ":" + key
		}
		if s.refuse(w, r, key, rate, "per address") {
			return
		}
		h.ServeHTTP(w, r)
	})
}

// limitAPI limits the API per key; requireAPIKey runs first and puts the
// key's site in the context.
func (s *Server) limitAPI(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		site := siteFrom(r.Context())
		if site != nil && replayed(r) == nil && s.refuse(w, r, "key:"+string(site.ID), s.limits.api(site.ID), "per API key") {
			return
		}
		h.ServeHTTP(w, r)
	})
}

// refuse answers 429 with Retry-After when key's bucket is empty.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, key string, rate model.Rate, what string) bool {
	if err := s.allow(key, rate, what); err != nil {
		s.fail(w, r, err)
		return true
	}
	return false
}

// allow takes one request from key's bucket, or returns the 429 refusal
// with Retry-After when it is empty.
func (s *Server) allow(key string, rate model.Rate, what string) error {
	ok, wait := s.limiter.Allow(key, rate)
	if ok {
		return nil
	}
	secs := max(int(math.Ceil(wait.Seconds())), 1)
	return &source.StatusError{Status: http.StatusTooManyRequests, RetryAfter: secs,
		Words: fmt.Sprintf("too many requests: the limit is %s %s; retry in %d s", rate, what, secs)}
}

// admitSite is a lead source's request budget (source.Admit): the site's
// API rate, shared with its API key.
func (s *Server) admitSite(site *model.Site) error {
	return s.allow("key:"+string(site.ID), s.limits.api(site.ID), "per API key")
}

// addrKey is the part of an address one client holds: the address for
// IPv4, the /64 for IPv6.
func addrKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	if a.Is6() && !a.Is4In6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}
