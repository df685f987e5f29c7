package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/cleanads/cleanads/internal/auth"
	"github.com/cleanads/cleanads/internal/model"
)

// sessionCookie holds the admin session token; the database keeps only its
// hash.
const sessionCookie = "cleanads_session"

// adminCSP lets admin pages load only our own script and style: no inline
// script, no framing, forms post only to us.
const adminCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

const adminKey ctxKey = 100

// adminCtx is the logged-in user of an admin request.
type adminCtx struct {
	user    *model.User
	session *model.Session
}

// page is what every admin template gets: the layout's needs and the page's
// own data in D.
type page struct {
	Title  string
	Lang   string
	Nav    string
	User   *model.User
	CSRF   string
	Paused []*model.Site
	// Notice and Problem are a success and an error message for the top of
	// the page, already in the page's language.
	Notice  string
	Problem string
	D       any
}

// adminHeaders sets the strict headers of every admin page.
func adminHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", adminCSP)
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "same-origin")
		hd.Set("Cross-Origin-Opener-Policy", "same-origin")
		hd.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
		hd.Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// crossOrigin refuses state-changing requests sent by other sites' pages
// (by Sec-Fetch-Site, or Origin against Host), before any CSRF token is
// even looked at; login and logout are covered by it too.
var crossOrigin = http.NewCrossOriginProtection()

// requireLogin lets through only requests with a live session cookie; others
// are sent to the login page. An API key opens nothing here. Every POST
// must also carry the session's CSRF token.
func (s *Server) requireLogin(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var token string
		if c, err := r.Cookie(sessionCookie); err == nil {
			token = c.Value
		}
		sess, user, err := s.auth.Session(r.Context(), token)
		if errors.Is(err, model.ErrNotFound) {
			next := ""
			if r.Method == http.MethodGet {
				next = r.URL.RequestURI()
			}
			http.Redirect(w, r, loginURL(next), http.StatusSeeOther)
			return
		}
		if err != nil {
			s.adminFail(w, r, err)
			return
		}
		if r.Method == http.MethodPost && !auth.CheckCSRF(sess, r.PostFormValue("csrf")) {
			s.adminFail(w, r, errStatus(http.StatusForbidden, tr(langOf(r, user), "This form has expired. Go back, reload the page and try again.")))
			return
		}
		ctx := context.WithValue(r.Context(), adminKey, &adminCtx{user: user, session: sess})
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

func loginURL(next string) string {
	if next == "" || next == "/admin/" {
		return "/admin/login"
	}
	return "/admin/login?next=" + url.QueryEscape(next)
}

// safeNext keeps a post-login destination only when it is an admin page of
// this server.
func safeNext(next string) string {
	// Browsers drop tabs and newlines from a URL and read \ as /, and
	// http.Redirect cleans the path: "/admin/../\t/evil.example" would
	// become "//evil.example". So: no control character, space or
	// backslash, no host, and a path that is already clean.
	if strings.IndexFunc(next, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '\\' }) >= 0 {
		return "/admin/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" ||
		!strings.HasPrefix(u.Path, "/admin/") || (path.Clean(u.Path) != u.Path && path.Clean(u.Path)+"/" != u.Path) {
		return "/admin/"
	}
	return next
}

func adminFrom(ctx context.Context) *adminCtx {
	a, _ := ctx.Value(adminKey).(*adminCtx)
	return a
}

// siteList returns the sites the logged-in user may see. Every admin page
// lists sites through it, and opens one site's things through maySee, so a
// user limited to some sites sees only those everywhere.
func (s *Server) siteList(r *http.Request) ([]*model.Site, error) {
	sites, err := s.db.SiteList(r.Context())
	if err != nil {
		return nil, err
	}
	a := adminFrom(r.Context())
	if a == nil || a.user.AllSites {
		return sites, nil
	}
	mine := sites[:0:0]
	for _, site := range sites {
		if a.user.MaySee(site.ID) {
			mine = append(mine, site)
		}
	}
	return mine, nil
}

// onlySites is the store filter for the logged-in user's sites: nil for
// every site.
func onlySites(r *http.Request) []model.SiteID {
	a := adminFrom(r.Context())
	if a == nil || a.user.AllSites {
		return nil
	}
	return append([]model.SiteID{}, a.user.Sites...)
}

// maySee answers model.ErrNotFound for a site the logged-in user may not
// see: to them it does not exist.
func maySee(r *http.Request, site model.SiteID) error {
	if a := adminFrom(r.Context()); a == nil || !a.user.MaySee(site) {
		return fmt.Errorf("site %s: %w", site, model.ErrNotFound)
	}
	return nil
}

// requireAdmin lets through only admins (after requireLogin): people and
// the installation's settings are theirs.
func (s *Server) requireAdmin(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := adminFrom(r.Context()); a == nil || !a.user.IsAdmin() {
			s.adminFail(w, r, errStatus(http.StatusForbidden, tr(langOf(r, a.userOrNil()), "Only an admin can do this.")))
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (a *adminCtx) userOrNil() *model.User {
	if a == nil {
		return nil
	}
	return a.user
}

// newPage starts a page for the logged-in user, with the alert for paused
// sites that every page shows.
func (s *Server) newPage(r *http.Request, nav, title string) *page {
	a := adminFrom(r.Context())
	p := &page{Nav: nav, User: a.user, CSRF: a.session.CSRF, Lang: langOf(r, a.user)}
	p.Title = tr(p.Lang, title)
	if sites, err := s.siteList(r); err == nil {
		for _, site := range sites {
			if site.PausedReason != "" {
				p.Paused = append(p.Paused, site)
			}
		}
	}
	return p
}

// adminFail answers err as an HTML page, with the status decided by
// statusOf, the same mapping the API uses.
func (s *Server) adminFail(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := s.statusOf(w, r, err)
	lang := langOf(r, nil)
	var p *page
	if a := adminFrom(r.Context()); a != nil {
		p = s.newPage(r, "", "Error")
	} else {
		p = &page{Lang: lang, Title: tr(lang, "Error")}
	}
	if status == http.StatusNotFound {
		msg = tr(p.Lang, "This page does not exist, or what it showed was removed.")
	} else if status >= 500 && status != http.StatusServiceUnavailable {
		msg = tr(p.Lang, "Something went wrong on our side. It has been logged; try again.")
	}
	p.Problem = msg
	p.D = status
	s.render(w, r, status, "error", p)
}

// adminNotFound answers unknown admin paths, after the login check, so it
// tells a stranger nothing about which pages exist.
func (s *Server) adminNotFound(w http.ResponseWriter, r *http.Request) {
	s.adminFail(w, r, model.ErrNotFound)
}
