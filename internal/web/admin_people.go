package web

import (
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/cleanads/cleanads/internal/auth"
	"github.com/cleanads/cleanads/internal/model"
)

// peopleData is the people page's data.
type peopleData struct {
	Rows  []personRow
	Sites []*model.Site
	Form  personForm
	// Link is a password link to show once, when no mail server is set or
	// it refused the mail; LinkFor is whose it is.
	Link, LinkFor string
}

// personRow is one user in the list.
type personRow struct {
	ID, Email, Role, Sites, LastLogin string
	Me                                bool
	// NoPassword: invited, no password set yet.
	NoPassword bool
	// IsAdmin, AllSites and Sees fill the form that changes them.
	IsAdmin, AllSites bool
	Sees              map[string]bool
}

// personForm is the add-a-user form as typed, with its problems.
type personForm struct {
	Email, Role string
	AllSites    bool
	Sites       map[string]bool
	Problems    map[string]string
}

// adminPeople lists the users and offers to add one.
func (s *Server) adminPeople(w http.ResponseWriter, r *http.Request) {
	p := s.newPage(r, "people", "People")
	switch r.URL.Query().Get("done") {
	case "removed":
		p.Notice = tr(p.Lang, "The user was removed and logged out.")
	case "changed":
		p.Notice = tr(p.Lang, "The role and sites were saved; they apply at once.")
	case "mailed":
		p.Notice = tr(p.Lang, "The password link was sent by e-mail. It works once, for 24 hours.")
	}
	s.renderPeople(w, r, p, http.StatusOK, personForm{Role: string(model.RoleMember), AllSites: true}, "", "")
}

func (s *Server) renderPeople(w http.ResponseWriter, r *http.Request, p *page, status int, form personForm, link, linkFor string) {
	ctx := r.Context()
	users, err := s.db.UserList(ctx)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	sites, err := s.siteList(r)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	names := map[model.SiteID]string{}
	for _, st := range sites {
		names[st.ID] = st.Name
	}
	me := adminFrom(ctx).user.ID
	d := peopleData{Sites: sites, Form: form, Link: link, LinkFor: linkFor}
	for _, u := range users {
		row := personRow{ID: string(u.ID), Email: u.Email, Role: roleWord(p.Lang, u.Role), Me: u.ID == me,
			IsAdmin: u.IsAdmin(), AllSites: u.AllSites, Sees: map[string]bool{}}
		for _, id := range u.Sites {
			row.Sees[string(id)] = true
		}
		if u.AllSites {
			row.Sites = tr(p.Lang, "all sites")
		} else {
			var list []string
			for _, id := range u.Sites {
				if n, ok := names[id]; ok {
					list = append(list, n)
				} else {
					list = append(list, string(id))
				}
			}
			sort.Strings(list)
			row.Sites = strings.Join(list, ", ")
			if row.Sites == "" {
				row.Sites = tr(p.Lang, "no site")
			}
		}
		if !auth.HasPassword(u) {
			row.NoPassword = true
		} else if u.LastLogin.IsZero() {
			row.LastLogin = tr(p.Lang, "never")
		} else {
			row.LastLogin = u.LastLogin.In(s.loc).Format("2006-01-02 15:04")
		}
		d.Rows = append(d.Rows, row)
	}
	p.D = d
	s.render(w, r, status, "people", p)
}

// roleWord is a role in the page's words.
func roleWord(lang string, r model.Role) string {
	if r == model.RoleAdmin {
		return tr(lang, "admin")
	}
	return tr(lang, "member")
}

// adminPeopleAdd adds a user and sends them a password link.
func (s *Server) adminPeopleAdd(w http.ResponseWriter, r *http.Request) {
	p := s.newPage(r, "people", "People")
	ctx := r.Context()
	ac, ticked := accessForm(r)
	form := personForm{Email: strings.TrimSpace(r.PostFormValue("email")), Role: string(ac.Role),
		AllSites: ac.AllSites, Sites: ticked, Problems: map[string]string{}}
	u, err := s.auth.Invite(ctx, form.Email, ac)
	var ie *model.InputError
	switch {
	case errors.As(err, &ie):
		form.Problems["email"] = tr(p.Lang, "Enter an e-mail address such as ayse@example.com.")
	case errors.Is(err, model.ErrConflict):
		form.Problems["email"] = tr(p.Lang, "A user with this e-mail exists already.")
	case err != nil:
		s.adminFail(w, r, err)
		return
	}
	if err != nil {
		p.Problem = tr(p.Lang, "The user was not added. See below.")
		s.renderPeople(w, r, p, http.StatusUnprocessableEntity, form, "", "")
		return
	}
	s.log.InfoContext(ctx, "user added", "user", string(u.ID), "by", string(adminFrom(ctx).user.ID), "role", string(u.Role))
	s.sendLink(w, r, p, u, tr(p.Lang, "%s was added.", u.Email))
}

// accessForm reads the role and sites a form asks for; only sites the
// admin may see can be given.
func accessForm(r *http.Request) (auth.Access, map[string]bool) {
	ac := auth.Access{Role: model.Role(r.PostFormValue("role")), AllSites: r.PostFormValue("sites") != "some"}
	if ac.Role != model.RoleAdmin {
		ac.Role = model.RoleMember
	}
	ticked := map[string]bool{}
	for _, id := range r.PostForm["site"] {
		if maySee(r, model.SiteID(id)) == nil && !ticked[id] {
			ticked[id] = true
			ac.Sites = append(ac.Sites, model.SiteID(id))
		}
	}
	return ac, ticked
}

// adminPeopleAccess changes a user's role and sites; the last admin stays.
func (s *Server) adminPeopleAccess(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	a := adminFrom(ctx)
	id := model.UserID(r.PathValue("id"))
	ac, _ := accessForm(r)
	err := s.auth.SetAccess(ctx, id, ac)
	if errors.Is(err, auth.ErrLastAdmin) {
		err = errStatus(http.StatusConflict, tr(langOf(r, a.user), "This is the last admin. Make another user an admin first."))
	}
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	s.log.InfoContext(ctx, "user access changed", "user", string(id), "by", string(a.user.ID), "role", string(ac.Role))
	http.Redirect(w, r, "/admin/people?done=changed", http.StatusSeeOther)
}

// adminPeopleLink sends a user a new password link.
func (s *Server) adminPeopleLink(w http.ResponseWriter, r *http.Request) {
	p := s.newPage(r, "people", "People")
	u, err := s.db.UserByID(r.Context(), model.UserID(r.PathValue("id")))
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	s.sendLink(w, r, p, u, "")
}

// sendLink makes a password link for u and mails it through the
// installation's mail server; without one, or when it refuses, the page
// shows the link once, to pass on by hand.
func (s *Server) sendLink(w http.ResponseWriter, r *http.Request, p *page, u *model.User, notice string) {
	ctx := r.Context()
	token, expires, err := s.auth.PasswordLink(ctx, u.ID)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	link := s.baseURL(r) + "/admin/password?token=" + url.QueryEscape(token)
	lang := u.Lang
	if lang == "" {
		lang = p.Lang
	}
	set, err := s.db.NotifySMTPGet(ctx)
	switch {
	case errors.Is(err, model.ErrNotFound) || s.notifier == nil:
		p.Notice = strings.TrimSpace(notice + " " + tr(p.Lang, "No mail server is set, so the link was not sent. Copy it below and give it to %s yourself; it is shown only now.", u.Email))
	case err != nil:
		s.adminFail(w, r, err)
		return
	default:
		subject := tr(lang, "Set your CleanAds password")
		body := tr(lang, "Open this link to set your password for CleanAds:") + "\n\n" + link + "\n\n" +
			tr(lang, "It works once, until %s. If you did not expect it, ignore this mail.", expires.In(s.loc).Format("2006-01-02 15:04 MST")) + "\n"
		a := s.notifier.SendMail(ctx, set, u.Email, subject, body)
		if a.OK {
			if notice == "" {
				http.Redirect(w, r, "/admin/people?done=mailed", http.StatusSeeOther)
				return
			}
			p.Notice = notice + " " + tr(p.Lang, "The password link was sent by e-mail. It works once, for 24 hours.")
			s.renderPeople(w, r, p, http.StatusOK, personForm{Role: string(model.RoleMember), AllSites: true}, "", "")
			return
		}
		s.log.WarnContext(ctx, "password link not mailed", "user", string(u.ID), "stage", a.Stage, "code", a.Code)
		p.Problem = strings.TrimSpace(notice + " " + tr(p.Lang, "The mail server did not take the link (%s). Copy it below and give it to %s yourself; it is shown only now.", answerText(a), u.Email))
	}
	s.renderPeople(w, r, p, http.StatusOK, personForm{Role: string(model.RoleMember), AllSites: true}, link, u.Email)
}

// baseURL is the server's address as the browser sees it.
func (s *Server) baseURL(r *http.Request) string {
	if s.publicURL != "" {
		return s.publicURL
	}
	scheme := "http"
	if s.isHTTPS(r) {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// adminPeopleRemove removes a user, who is logged out at once.
func (s *Server) adminPeopleRemove(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	a := adminFrom(ctx)
	id := model.UserID(r.PathValue("id"))
	err := s.auth.RemoveUser(ctx, a.user.ID, id)
	lang := langOf(r, a.user)
	switch {
	case errors.Is(err, auth.ErrSelf):
		err = errStatus(http.StatusConflict, tr(lang, "You cannot remove yourself. Another admin can."))
	case errors.Is(err, auth.ErrLastAdmin):
		err = errStatus(http.StatusConflict, tr(lang, "This is the last admin. Make another user an admin first."))
	}
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	s.log.InfoContext(ctx, "user removed", "user", string(id), "by", string(a.user.ID))
	http.Redirect(w, r, "/admin/people?done=removed", http.StatusSeeOther)
}

// passwordData is the set-password page's data.
type passwordData struct {
	Token, Email string
	// Gone says, in plain words, why the link no longer works.
	Gone    string
	Problem string
}

// adminPassword shows the form a password link opens; no login needed.
func (s *Server) adminPassword(w http.ResponseWriter, r *http.Request) {
	lang := langOf(r, nil)
	token := r.URL.Query().Get("token")
	p := &page{Lang: lang, Title: tr(lang, "Set your password")}
	d := passwordData{Token: token}
	status := http.StatusOK
	u, err := s.auth.LinkUser(r.Context(), token)
	if err == nil {
		d.Email = u.Email
	} else if d.Gone, status = linkGone(lang, err); status == 0 {
		s.adminFail(w, r, err)
		return
	}
	p.D = d
	s.render(w, r, status, "password", p)
}

// linkGone says why a password link does not work, with its status; 0 for
// an error that is not about the link.
func linkGone(lang string, err error) (string, int) {
	switch {
	case errors.Is(err, model.ErrLinkUsed):
		return tr(lang, "This link was used already: each link works once. Log in with your password, or ask an admin for a new link."), http.StatusGone
	case errors.Is(err, model.ErrLinkExpired):
		return tr(lang, "This link has expired: links work for 24 hours. Ask an admin for a new one."), http.StatusGone
	case errors.Is(err, model.ErrNotFound):
		return tr(lang, "This link is not valid. Check that you copied all of it, or ask an admin for a new one."), http.StatusNotFound
	}
	return "", 0
}

// adminPasswordPost sets the password, uses the link up and logs the user in.
func (s *Server) adminPasswordPost(w http.ResponseWriter, r *http.Request) {
	lang := langOf(r, nil)
	token := r.PostFormValue("token")
	p := &page{Lang: lang, Title: tr(lang, "Set your password")}
	pw := r.PostFormValue("password")
	d := passwordData{Token: token}
	if pw != r.PostFormValue("password2") {
		d.Problem = tr(lang, "The two passwords differ. Type the same password twice.")
	}
	var (
		cookie string
		sess   *model.Session
		err    error
	)
	if d.Problem == "" {
		cookie, sess, err = s.auth.UseLink(r.Context(), token, pw, s.clientIP(r))
	}
	var ie *model.InputError
	status := http.StatusUnprocessableEntity
	switch {
	case d.Problem != "":
	case err == nil:
		http.SetCookie(w, &http.Cookie{
			Name: sessionCookie, Value: cookie, Path: "/admin", Expires: sess.ExpiresAt,
			HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.isHTTPS(r),
		})
		http.Redirect(w, r, "/admin/", http.StatusSeeOther)
		return
	case errors.Is(err, auth.ErrThrottled):
		status = http.StatusTooManyRequests
		w.Header().Set("Retry-After", "900")
		d.Problem = tr(lang, "Too many failed attempts. Wait 15 minutes and try again.")
	case errors.As(err, &ie):
		d.Problem = tr(lang, "Choose a password of %d to %d characters.", auth.MinPassword, auth.MaxPassword)
	default:
		if d.Gone, status = linkGone(lang, err); status == 0 {
			s.adminFail(w, r, err)
			return
		}
	}
	if d.Gone == "" {
		if u, err := s.auth.LinkUser(r.Context(), token); err == nil {
			d.Email = u.Email
		}
	}
	p.D = d
	s.render(w, r, status, "password", p)
}
