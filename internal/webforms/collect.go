package webforms

import (
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/source"
)

// Cookie names: Meta's own for the click and browser ids (the pixel reads
// them), and ours for the visitor.
const (
	cookieFBC     = "_fbc"
	cookieFBP     = "_fbp"
	cookieVisitor = "cleanads_vid"
)

// cookieLifetime is how long the tracker's cookies live: 390 days, set by the
// server so browsers do not cap them at 7 days as they do script-set ones.
const cookieLifetime = 390 * 24 * time.Hour

// collectBody is the JSON body of POST /v1/collect.
type collectBody struct {
	Site     string `json:"site"`
	URL      string `json:"url"`
	Referrer string `json:"referrer"`
	Consent  *bool  `json:"consent"`
	FBC      string `json:"fbc"`
	FBP      string `json:"fbp"`
	// LeadForms is how many lead forms t.js (v2) found on the page when
	// it sent the visit.
	LeadForms *int `json:"lf"`
}

// collectAnswer is what t.js needs after a visit.
type collectAnswer struct {
	// Consent tells the page whether the pixel may be told about events.
	Consent bool `json:"consent"`
	// EventID is the PageView's event_id; the pixel fires PageView with it.
	EventID   string `json:"event_id,omitempty"`
	FormToken string `json:"form_token"`
	FBC       string `json:"fbc,omitempty"`
	FBP       string `json:"fbp,omitempty"`
	// LeadEvent is the pixel event a lead is fired as.
	LeadEvent string `json:"lead_event"`
	// Pixels are the other platforms' browser pixels t.js fires a lead
	// on, with the event's name (platform.PixelPairer): {"tiktok": "Lead"}.
	Pixels map[string]string `json:"pixels,omitempty"`
}

// collect takes a page view from t.js (JSON, or text/plain so the browser
// sends it without a preflight), stores it and sets the click-identity
// cookies with Set-Cookie.
func (s *Source) collect(w http.ResponseWriter, r *http.Request) error {
	var body collectBody
	switch ct := mediaType(r); ct {
	case "application/json", "text/plain":
		if err := decodeJSON(r, &body); err != nil {
			return err
		}
	default:
		return source.Error(http.StatusUnsupportedMediaType, "set Content-Type: application/json or text/plain")
	}
	id := siteParam(r)
	if id == "" {
		id = body.Site
	}
	site, err := site(r, id)
	if err != nil {
		return err
	}
	if err := checkOrigin(w, r, site); err != nil {
		return err
	}
	edge := source.EdgeOf(r)
	in := &app.CollectInput{
		VisitorID: cookieValue(r, cookieVisitor), PageURL: body.URL, Referrer: body.Referrer, Consent: body.Consent,
		FBC: firstNonEmpty(cookieValue(r, cookieFBC), body.FBC), FBP: firstNonEmpty(cookieValue(r, cookieFBP), body.FBP),
		ClientIP: edge.ClientIP(r), UserAgent: r.UserAgent(), LeadForms: body.LeadForms,
	}
	res, err := s.app.Collect(r.Context(), site, in)
	if err != nil {
		return err
	}
	ans := collectAnswer{Consent: res.Consent, FormToken: res.FormToken, LeadEvent: site.Settings.Meta.LeadEventName(),
		Pixels: s.pixelEvents(site)}
	switch {
	case res.Visitor != nil:
		v := res.Visitor
		ans.EventID, ans.FBC, ans.FBP = res.EventID, v.FBC, v.FBP
		s.setCookie(w, r, site, cookieVisitor, v.ID, true)
		s.setCookie(w, r, site, cookieFBP, v.FBP, false)
		if v.FBC != "" {
			s.setCookie(w, r, site, cookieFBC, v.FBC, false)
		}
	case body.Consent != nil && !*body.Consent:
		// A no withdraws what an earlier yes set.
		for _, name := range []string{cookieVisitor, cookieFBC, cookieFBP} {
			if _, err := r.Cookie(name); err == nil {
				s.setCookie(w, r, site, name, "", name == cookieVisitor)
			}
		}
	}
	source.JSON(w, http.StatusOK, ans)
	return nil
}

// setCookie sets one of the tracker's cookies for 390 days on the site's
// cookie domain, or removes it when value is empty. SameSite=Lax: the site's
// pages and the tracker are the same site, and Lax keeps the cookies off
// other sites' requests. Secure on https.
func (s *Source) setCookie(w http.ResponseWriter, r *http.Request, site *model.Site, name, value string, httpOnly bool) {
	c := &http.Cookie{
		Name: name, Value: value, Path: "/", Domain: s.cookieDomain(r, site),
		MaxAge: int(cookieLifetime / time.Second), Expires: s.now().Add(cookieLifetime).UTC(),
		HttpOnly: httpOnly, Secure: source.EdgeOf(r).HTTPS(r), SameSite: http.SameSiteLaxMode,
	}
	if value == "" {
		c.MaxAge, c.Expires = -1, time.Unix(0, 0).UTC()
	}
	http.SetCookie(w, c)
}

// cookieDomain is the site's cookie_domain when the tracker's own host is
// inside it (a browser drops a cookie for a domain it was not sent from);
// else the cookie is left to the tracker's host.
func (s *Source) cookieDomain(r *http.Request, site *model.Site) string {
	d := strings.ToLower(strings.TrimPrefix(site.Settings.CookieDomain, "."))
	if d == "" {
		return ""
	}
	host := strings.ToLower(source.StripPort(r.Host))
	if host == d || strings.HasSuffix(host, "."+d) {
		return d
	}
	s.log.WarnContext(r.Context(), "cookie_domain does not contain the tracker's host; cookies are set for the host only",
		"site", string(site.ID), "cookie_domain", site.Settings.CookieDomain, "host", host)
	return ""
}

// cookieValue returns a request cookie's value, "" when it is absent.
func cookieValue(r *http.Request, name string) string {
	c, err := r.Cookie(name)
	if err != nil {
		return ""
	}
	return c.Value
}

// browserCookies fills a browser-posted lead's missing fbc and fbp from the
// _fbc and _fbp cookies (well-formed ones only), and its visitor from ours.
func (s *Source) browserCookies(r *http.Request, in *app.LeadInput) {
	now := s.now()
	if v := cookieValue(r, cookieFBC); in.FBC == "" && v != "" && capi.CheckFBC(v, now) == nil {
		in.FBC = v
	}
	if v := cookieValue(r, cookieFBP); in.FBP == "" && v != "" && capi.CheckFBP(v, now) == nil {
		in.FBP = v
	}
	// The platforms' own browser ids (TikTok's _ttp), set by their pixels
	// on the site's domain, which the tracker's subdomain shares.
	for _, name := range s.platformCookies() {
		if v := cookieValue(r, name); v != "" && len(v) <= 200 && in.Cookies[name] == "" {
			if in.Cookies == nil {
				in.Cookies = map[string]string{}
			}
			in.Cookies[name] = v
		}
	}
	// Only a value shaped like ours: a tampered cookie must not fail the lead.
	if v := cookieValue(r, cookieVisitor); in.VisitorID == "" && len(v) <= 64 && strings.HasPrefix(v, "v_") {
		in.VisitorID = v
	}
}

// siteParam is r.URL.Query().Get("site") without the map of every
// parameter: the first "site" pair that url.ParseQuery would keep (a pair
// with a semicolon, or a key or value that does not unescape, is skipped).
func siteParam(r *http.Request) string {
	for q := r.URL.RawQuery; q != ""; {
		var kv string
		kv, q, _ = strings.Cut(q, "&")
		if strings.Contains(kv, ";") {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		if k != "site" {
			if !strings.ContainsAny(k, "%+") {
				continue
			}
			if u, err := url.QueryUnescape(k); err != nil || u != "site" {
				continue
			}
		}
		if u, err := url.QueryUnescape(v); err == nil {
			return u
		}
	}
	return ""
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// mediaType is the request's Content-Type without parameters.
func mediaType(r *http.Request) string {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return ct
}

// platformCookies are the names of the first-party cookies the platforms'
// pixels set (platform.CookieReader).
func (s *Source) platformCookies() []string {
	var names []string
	for _, p := range s.app.Platforms() {
		if c, ok := p.(platform.CookieReader); ok {
			names = append(names, c.Cookies()...)
		}
	}
	return names
}

// pixelEvents are the lead events of the platforms' browser pixels t.js
// pairs with, by platform name.
func (s *Source) pixelEvents(site *model.Site) map[string]string {
	var out map[string]string
	for _, p := range s.app.Platforms() {
		if pp, ok := p.(platform.PixelPairer); ok {
			if ev := pp.PixelLeadEvent(site); ev != "" {
				if out == nil {
					out = map[string]string{}
				}
				out[p.Name()] = ev
			}
		}
	}
	return out
}

// requestOrigin is the browser's origin: the Origin header, or the origin
// of the Referer when a browser sent no Origin.
func requestOrigin(r *http.Request) string {
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		return o
	}
	if u, err := url.Parse(r.Referer()); err == nil && u.Host != "" {
		return u.Scheme + "://" + u.Host
	}
	return ""
}
