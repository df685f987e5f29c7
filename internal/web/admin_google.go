package web

import (
	"errors"
	"net/http"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
)

// googleState says in words how a site stands with Google Ads on the sites
// page. When the program lists Google among the platforms with a section
// on the site's page (gp not nil), a site added here sets it up there,
// its credentials sealed with the site; otherwise Google's credentials live
// only in the config file, and the page says so rather than point to a
// form that is not there.
func googleState(lang string, site *model.Site, gp platform.Configurable) string {
	g := site.Settings.Google
	switch {
	case g != nil && g.Mode == model.GoogleModeValidate:
		return tr(lang, "Google Ads: account %s, validate only (Google checks the events and records nothing)", g.OperatingAccountID)
	case g != nil:
		return tr(lang, "Google Ads: account %s", g.OperatingAccountID)
	case site.Pinned:
		return tr(lang, "Google Ads: off (no google block in the config file)")
	case gp != nil && gp.On(site):
		return tr(lang, "Google Ads: on, set on the site's page")
	case gp != nil:
		return tr(lang, "Google Ads: off; set it up on the site's page, in its Google Ads section.")
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
