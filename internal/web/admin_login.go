package web

import (
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/cleanads/cleanads/internal/auth"
)

// loginData is the login page's data.
type loginData struct {
	Email string
	Next  string
}

// adminLogin shows the login form; a logged-in user goes on to the inbox.
func (s *Server) adminLogin(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		if _, _, err := s.auth.Session(r.Context(), c.Value); err == nil {
			http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
			return
		}
	}
	lang := langOf(r, nil)
	s.render(w, r, http.StatusOK, "login", &page{Lang: lang, Title: tr(lang, "Log in"),
		D: loginData{Next: r.URL.Query().Get("next")}})
}

// adminLoginPost checks the e-mail and password and starts a session.
func (s *Server) adminLoginPost(w http.ResponseWriter, r *http.Request) {
	lang := langOf(r, nil)
	email, next := r.PostFormValue("email"), r.PostFormValue("next")
	token, sess, err := s.auth.Login(r.Context(), email, r.PostFormValue("password"), s.clientIP(r))
	if err != nil {
		p := &page{Lang: lang, Title: tr(lang, "Log in"), D: loginData{Email: email, Next: next}}
		status := http.StatusUnauthorized
		switch {
		case errors.Is(err, auth.ErrBadLogin):
			p.Problem = tr(lang, "Wrong e-mail or password.")
		case errors.Is(err, auth.ErrThrottled):
			status = http.StatusTooManyRequests
			w.Header().Set("Retry-After", "900")
			p.Problem = tr(lang, "Too many failed attempts. Wait 15 minutes and try again.")
		default:
			s.adminFail(w, r, err)
			return
		}
		s.render(w, r, status, "login", p)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: token, Path: "/admin", Expires: sess.ExpiresAt,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.isHTTPS(r),
	})
	http.Redirect(w, r, safeNext(next), http.StatusSeeOther)
}

// adminLogout ends the session.
func (s *Server) adminLogout(w http.ResponseWriter, r *http.Request) {
	if err := s.auth.Logout(r.Context(), adminFrom(r.Context()).session); err != nil {
		s.adminFail(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/admin", Expires: time.Unix(0, 0), MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.isHTTPS(r)})
	http.Redirect(w, r, "/admin/login", http.StatusSeeOther)
}

// adminLang stores the user's language and returns to the page they were on.
func (s *Server) adminLang(w http.ResponseWriter, r *http.Request) {
	a := adminFrom(r.Context())
	if err := s.auth.SetLang(r.Context(), a.user.ID, r.PostFormValue("lang")); err != nil {
		s.adminFail(w, r, err)
		return
	}
	back := "/admin/"
	if u, err := url.Parse(r.PostFormValue("back")); err == nil && u.Host == "" {
		back = safeNext(u.RequestURI())
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}
