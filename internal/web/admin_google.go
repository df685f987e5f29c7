package web

import (
	"errors"
	"net/http"

	"github.com/cleanads/cleanads/internal/model"
)

// googleState says in words how a site stands with Google Ads on the sites
// page. Google's credentials live only in the config file (never in the
// database), so a site added here cannot send to Google: the page says so
// rather than offer a form that could not work.
func googleState(lang string, site *model.Site) string {
	g := site.Settings.Google
	switch {
	case g != nil && g.Mode == model.GoogleModeValidate:
		return tr(lang, "Google Ads: account %s, validate only (Google checks the events and records nothing)", g.OperatingAccountID)
	case g != nil:
		return tr(lang, "Google Ads: account %s", g.OperatingAccountID)
	case site.Pinned:
		return tr(lang, "Google Ads: off (no google block in the config file)")
	}
	return tr(lang, "Google Ads: not available for a site added here. Google's credentials are kept only in the config file: define the site there, with its google block, to send to Google.")
}

// adminGoogleResume lifts a site's Google pause once the owner has fixed
// what Google refused in Google Ads (the terms, enhanced conversions for
// leads, the account's access): the parked events go again now.
func (s *Server) adminGoogleResume(w http.ResponseWriter, r *http.Request) {
	p := s.newPage(r, "sites", "Sites")
	id := model.SiteID(r.PathValue("id"))
	if err := maySee(r, id); err != nil {
		s.adminFail(w, r, err)
		return
	}
	n, err := s.app.ResumeGoogle(r.Context(), id)
	if errors.Is(err, model.ErrNotFound) {
		err = errStatus(http.StatusConflict, tr(p.Lang, "Google Ads deliveries of this site are not paused."))
	}
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	s.log.InfoContext(r.Context(), "google deliveries resumed", "site", string(id), "due", n,
		"user", string(adminFrom(r.Context()).user.ID))
	http.Redirect(w, r, "/admin/sites?google_resumed="+string(id), http.StatusSeeOther)
}
