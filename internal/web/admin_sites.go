package web

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/config"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/webforms"
)

// sitesData is the sites page's data.
type sitesData struct {
	Sites []siteRow
	New   siteForm
}

type siteRow struct {
	ID, Name, Mode, PixelID, Paused string
	Pinned                          bool
	// Holds are the pauses of the site's other destinations (the Lead Ads
	// fetch, ...), each its label and reason.
	Holds []string
	// Google is how the site stands with Google Ads, in words; GooglePaused
	// offers the resume button.
	Google       string
	GooglePaused bool
}

// destinationLabel is how the sites page names a destination's pause.
func destinationLabel(lang, dest string) string {
	switch dest {
	case model.DestinationMetaLeadgen:
		return tr(lang, "Lead Ads fetches")
	case model.DestinationGoogle:
		return tr(lang, "Google Ads deliveries")
	}
	return dest
}

// siteData is one site's page: the install snippet and its settings.
type siteData struct {
	Site    *model.Site
	Snippet string
	// Pinned is the snippet of the immutable script with its
	// subresource-integrity hash.
	Pinned string
	APIKey string // only right after the site was made
	Test   *testSend
	Form   siteForm
	// Platforms are the sections of the ad platforms without a hand-made
	// one (admin_platforms.go).
	Platforms []platformSection
	// Hooks is the outgoing webhooks' section (admin_outhooks.go).
	Hooks hooksSection
	// Stages is the stage editor (admin_stages.go).
	Stages stageEditor
}

// siteForm is a site's settings as typed, so a form with a mistake comes
// back with everything the user wrote.
type siteForm struct {
	ID, Name, Origins, Country, CookieDomain, ThankYouURL, Consent string
	PixelID, Token, Mode, TestEventCode, LeadEvent, QualifiedEvent string
	ReviewFrom, JunkFrom                                           string
	// Services are the site's service words (qualify.services), one a
	// line.
	Services string
	Problems map[string]string
}

// adminSites lists the sites, with a form to add one.
func (s *Server) adminSites(w http.ResponseWriter, r *http.Request) {
	p := s.newPage(r, "sites", "Sites")
	if r.URL.Query().Get("google_resumed") != "" {
		p.Notice = tr(p.Lang, "Google Ads deliveries resumed: the waiting events go now. If Google still refuses, they pause again with its reason.")
	}
	s.renderSites(w, r, p, http.StatusOK, siteForm{Country: "TR"})
}

func (s *Server) renderSites(w http.ResponseWriter, r *http.Request, p *page, status int, form siteForm) {
	sites, err := s.siteList(r)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	pauses, err := s.db.DestinationPauses(r.Context(), "")
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	holds := map[model.SiteID][]string{}
	googlePaused := map[model.SiteID]bool{}
	for _, h := range pauses {
		label := destinationLabel(p.Lang, h.Share.Destination)
		if pl := s.platform(h.Share.Destination); pl != nil && label == h.Share.Destination {
			label = pl.Label()
		}
		holds[h.Share.Site] = append(holds[h.Share.Site], label+": "+h.Reason)
		if h.Share.Destination == model.DestinationGoogle {
			googlePaused[h.Share.Site] = true
		}
	}
	d := sitesData{New: form}
	for _, site := range sites {
		row := siteRow{ID: string(site.ID), Name: site.Name, Mode: site.Settings.Meta.Mode,
			PixelID: site.Settings.Meta.PixelID, Paused: site.PausedReason, Pinned: site.Pinned, Holds: holds[site.ID]}
		row.Google, row.GooglePaused = googleState(p.Lang, site, s.platform(model.DestinationGoogle)), googlePaused[site.ID] && site.Settings.Google != nil
		d.Sites = append(d.Sites, row)
	}
	p.D = d
	s.render(w, r, status, "sites", p)
}

// adminSiteCreate adds a site edited here, in dry_run until it has a pixel
// and a token; its API key is shown once.
func (s *Server) adminSiteCreate(w http.ResponseWriter, r *http.Request) {
	p := s.newPage(r, "sites", "Sites")
	form := siteForm{ID: strings.TrimSpace(r.PostFormValue("id")), Name: strings.TrimSpace(r.PostFormValue("name")),
		Origins: r.PostFormValue("origins"), Country: r.PostFormValue("country"), Mode: model.ModeDryRun}
	cs, problems := form.config(nil)
	if len(problems) == 0 {
		site := cs.SiteModel()
		// A new site starts with a meeting and a deal won, edited in its
		// stage editor.
		site.Settings.Meta.Stages = model.DefaultStages(model.CountryCurrency(site.Settings.Country))
		site.Settings.StageOrder = model.DefaultStageOrder()
		key, err := s.app.SiteCreate(r.Context(), site)
		switch {
		case errors.Is(err, model.ErrConflict):
			problems = map[string]string{"id": tr(p.Lang, "A site with this id exists already.")}
		case err != nil:
			s.adminFail(w, r, err)
			return
		default:
			s.log.InfoContext(r.Context(), "site created", "site", string(site.ID), "user", string(adminFrom(r.Context()).user.ID))
			site, err = s.db.SiteByID(r.Context(), site.ID)
			if err != nil {
				s.adminFail(w, r, err)
				return
			}
			p.Notice = tr(p.Lang, "The site was added. Copy its API key now: it is shown only once.")
			s.renderSite(w, r, p, http.StatusCreated, site, formOf(site), key)
			return
		}
	}
	form.Problems = problems
	p.Problem = tr(p.Lang, "Please correct the marked fields.")
	s.renderSites(w, r, p, http.StatusBadRequest, form)
}

// adminSite shows a site: its install snippet and its settings.
func (s *Server) adminSite(w http.ResponseWriter, r *http.Request) {
	p := s.newPage(r, "sites", "Site")
	site, err := s.pathSite(r)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	if r.URL.Query().Get("saved") != "" {
		p.Notice = tr(p.Lang, "Saved.")
	}
	if n := hookNotice(p.Lang, r.URL.Query().Get("hook")); n != "" {
		p.Notice = n
	}
	switch r.URL.Query().Get("stages") {
	case "saved":
		p.Notice = tr(p.Lang, "The stages were saved. They apply at once: the lead page, the API and the CRM connections take them now.")
	case "file":
		p.Notice = tr(p.Lang, "The config file's stages apply again from the next start.")
	}
	s.renderSite(w, r, p, http.StatusOK, site, formOf(site), "")
}

func (s *Server) renderSite(w http.ResponseWriter, r *http.Request, p *page, status int, site *model.Site, form siteForm, key string) {
	s.renderSiteWith(w, r, p, status, site, form, key, nil)
}

func (s *Server) renderSiteTest(w http.ResponseWriter, r *http.Request, p *page, status int, site *model.Site, test *testSend) {
	s.renderSiteWith(w, r, p, status, site, formOf(site), "", test)
}

func (s *Server) renderSiteWith(w http.ResponseWriter, r *http.Request, p *page, status int, site *model.Site, form siteForm, key string, test *testSend) {
	s.renderSiteFull(w, r, p, status, site, form, key, test, nil, nil)
}

func (s *Server) renderSiteFull(w http.ResponseWriter, r *http.Request, p *page, status int, site *model.Site, form siteForm, key string, test *testSend, edit *platformEdit, stages *stageEditor) {
	if stages == nil {
		ed := s.newStageEditor(p.Lang, site, nil, stageRow{})
		stages = &ed
	}
	sections, err := s.platformSections(r, p.Lang, site, edit)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	hooks, err := s.hooksOf(r, p.Lang, site)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	base := s.baseURL(r)
	p.Title = site.Name
	p.D = siteData{Site: site, Form: form, APIKey: key, Test: test, Platforms: sections, Hooks: hooks, Stages: *stages,
		Snippet: fmt.Sprintf(`<script src="%s/t.js" data-site="%s" async></script>`, base, site.ID),
		Pinned: fmt.Sprintf("<script src=\"%s/t.v2.js\" data-site=\"%s\" async\n        integrity=\"%s\" crossorigin=\"anonymous\"></script>",
			base, site.ID, webforms.TrackerSRI())}
	s.render(w, r, status, "site", p)
}

// adminSiteSave saves the settings of a site edited here; a form with
// mistakes comes back with each one marked and nothing saved.
func (s *Server) adminSiteSave(w http.ResponseWriter, r *http.Request) {
	p := s.newPage(r, "sites", "Site")
	site, err := s.pathSite(r)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	if site.Pinned {
		s.adminFail(w, r, errStatus(http.StatusConflict, tr(p.Lang, "This site is set in the config file; change it there.")))
		return
	}
	form := siteForm{ID: string(site.ID)}
	fields := map[string]*string{"name": &form.Name, "origins": &form.Origins, "country": &form.Country,
		"cookie_domain": &form.CookieDomain, "thank_you_url": &form.ThankYouURL, "consent": &form.Consent,
		"pixel_id": &form.PixelID, "access_token": &form.Token, "mode": &form.Mode, "test_event_code": &form.TestEventCode,
		"lead_event": &form.LeadEvent, "qualified_event": &form.QualifiedEvent,
		"review_from": &form.ReviewFrom, "junk_from": &form.JunkFrom, "services": &form.Services}
	for k, dst := range fields {
		*dst = r.PostFormValue(k)
	}
	cs, problems := form.config(site)
	if len(problems) > 0 {
		form.Problems = problems
		form.Token = "" // never echo a secret back into a page
		p.Problem = tr(p.Lang, "Nothing was saved. Please correct the marked fields.")
		// A setting the form does not show (whatsapp, lead_ads) that the
		// change contradicts can only be named here.
		var hidden []string
		for k, msg := range problems {
			if _, shown := fields[k]; !shown {
				hidden = append(hidden, k+": "+msg)
			}
		}
		sort.Strings(hidden)
		if len(hidden) > 0 {
			p.Problem += " " + tr(p.Lang, "Settings of the config file this form does not show: %s", strings.Join(hidden, "; "))
		}
		s.renderSite(w, r, p, http.StatusBadRequest, site, form, "")
		return
	}
	next := cs.SiteModel()
	// Not a config file's setting: the call tracker's token stays, and so
	// do the platforms' settings, saved by their own sections.
	next.Settings.CallTokenHash = site.Settings.CallTokenHash
	next.Settings.Platforms = site.Settings.Platforms
	if err := s.app.SiteSave(r.Context(), next); err != nil {
		if errors.Is(err, app.ErrPinned) {
			err = errStatus(http.StatusConflict, tr(p.Lang, "This site is set in the config file; change it there."))
		}
		s.adminFail(w, r, err)
		return
	}
	// This node's public endpoints see the change at once; others within
	// the cache's TTL.
	s.sites.forget(site.ID)
	s.log.InfoContext(r.Context(), "site saved", "site", string(site.ID), "mode", next.Settings.Meta.Mode,
		"user", string(adminFrom(r.Context()).user.ID))
	http.Redirect(w, r, "/admin/sites/"+string(site.ID)+"?saved=1", http.StatusSeeOther)
}

// formOf fills the form from a stored site; the token is never put in it.
func formOf(site *model.Site) siteForm {
	st, m, q := site.Settings, site.Settings.Meta, site.Settings.Qualify
	f := siteForm{ID: string(site.ID), Name: site.Name, Origins: strings.Join(st.Origins, "\n"), Country: st.Country,
		CookieDomain: st.CookieDomain, ThankYouURL: st.ThankYouURL, Consent: st.Consent, PixelID: m.PixelID,
		Mode: m.Mode, TestEventCode: m.TestEventCode, LeadEvent: m.LeadEvent, QualifiedEvent: m.QualifiedEvent}
	if q.ReviewFrom != 0 {
		f.ReviewFrom = strconv.Itoa(q.ReviewFrom)
	}
	if q.JunkFrom != 0 {
		f.JunkFrom = strconv.Itoa(q.JunkFrom)
	}
	f.Services = strings.Join(q.Services, "\n")
	return f
}

// config turns the form into a config site checked by the file's rules;
// settings the form does not show are kept from old. Problems are keyed by
// form field.
func (f *siteForm) config(old *model.Site) (*config.Site, map[string]string) {
	problems := map[string]string{}
	cs := &config.Site{ID: f.ID, Name: strings.TrimSpace(f.Name), Country: strings.TrimSpace(f.Country),
		CookieDomain: strings.TrimSpace(f.CookieDomain), ThankYouURL: strings.TrimSpace(f.ThankYouURL),
		Consent: f.Consent}
	if old != nil {
		cs.Qualify = old.Settings.Qualify
		cs.Meta.MetaSettings = old.Settings.Meta
		cs.Meta.AccessToken = old.AccessToken
		cs.LeadAds = config.SiteLeadAds{LeadAdsSettings: old.Settings.LeadAds, AccessToken: old.LeadAds.AccessToken,
			AppSecret: old.LeadAds.AppSecret, VerifyToken: old.LeadAds.VerifyToken}
		cs.WhatsApp = old.Settings.WhatsApp
		if g := old.Settings.Google; g != nil {
			cs.Google.GoogleSettings = *g
		}
	}
	for _, line := range strings.Split(f.Origins, "\n") {
		if o := strings.TrimSpace(line); o != "" {
			cs.Origins = append(cs.Origins, o)
		}
	}
	if len(cs.Origins) == 0 {
		problems["origins"] = "list at least one origin, e.g. https://www.example.com"
	}
	if old != nil {
		m := &cs.Meta
		m.PixelID, m.Mode, m.TestEventCode = strings.TrimSpace(f.PixelID), f.Mode, strings.TrimSpace(f.TestEventCode)
		m.LeadEvent, m.QualifiedEvent = strings.TrimSpace(f.LeadEvent), strings.TrimSpace(f.QualifiedEvent)
		if t := strings.TrimSpace(f.Token); t != "" {
			m.AccessToken = t
		}
		for _, th := range []struct {
			field, v string
			dst      *int
		}{{"review_from", f.ReviewFrom, &cs.Qualify.ReviewFrom}, {"junk_from", f.JunkFrom, &cs.Qualify.JunkFrom}} {
			*th.dst = 0
			if v := strings.TrimSpace(th.v); v != "" {
				n, err := strconv.Atoi(v)
				if err != nil {
					problems[th.field] = "want a whole number from 0 to 100"
				}
				*th.dst = n
			}
		}
		cs.Qualify.Services = nil
		for _, line := range strings.Split(f.Services, "\n") {
			if w := strings.TrimSpace(line); w != "" {
				cs.Qualify.Services = append(cs.Qualify.Services, w)
			}
		}
	}
	for _, pr := range config.CheckSite(cs) {
		field := pr.Key
		if i := strings.IndexAny(field, "[."); i >= 0 && !strings.HasPrefix(field, "meta.") && !strings.HasPrefix(field, "qualify.") {
			field = field[:i]
		}
		field = strings.TrimPrefix(strings.TrimPrefix(field, "meta."), "qualify.")
		if i := strings.IndexAny(field, ".["); i >= 0 {
			field = field[:i]
		}
		if field == "qualify" {
			field = "review_from"
		}
		if _, dup := problems[field]; !dup {
			problems[field] = pr.Message
		}
	}
	return cs, problems
}

// testSend is the outcome of "send test event" on a site's page.
type testSend struct {
	Code, Event, Answer, Error string
}

// adminSiteTest sends one sample lead event to Meta with the site's
// test_event_code and shows what was sent and Meta's answer.
func (s *Server) adminSiteTest(w http.ResponseWriter, r *http.Request) {
	p := s.newPage(r, "sites", "Site")
	ctx := r.Context()
	site, err := s.pathSite(r)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	res, err := s.app.SendTest(ctx, site.ID)
	var (
		ie     *model.InputError
		apiErr *capi.APIError
		out    testSend
		status = http.StatusOK
	)
	switch {
	case err == nil:
		p.Notice = tr(p.Lang, "Meta received the test event. Look for it in Events Manager, Test events.")
	case errors.As(err, &ie):
		p.Problem = tr(p.Lang, "No test event was sent: %s", err.Error())
		status = http.StatusBadRequest
	case errors.Is(err, app.ErrNoGraph):
		p.Problem = tr(p.Lang, "No test event was sent: this server has no connection to Meta configured.")
		status = http.StatusServiceUnavailable
	case errors.As(err, &apiErr) && res != nil:
		p.Problem = tr(p.Lang, "Meta refused the test event.")
		out.Error = apiErr.Error()
		status = http.StatusBadGateway
	case res != nil:
		// The request failed on the way (network, timeout): say so, with
		// what was built.
		p.Problem = tr(p.Lang, "The test event could not reach Meta; try again.")
		out.Error = err.Error()
		status = http.StatusBadGateway
	default:
		s.adminFail(w, r, err)
		return
	}
	if res != nil {
		out.Code, out.Event, out.Answer = res.TestEventCode, prettyJSON(res.Event), prettyJSON(res.Answer)
	}
	s.log.InfoContext(ctx, "test event from the admin", "site", string(site.ID), "ok", err == nil,
		"user", string(adminFrom(ctx).user.ID))
	s.renderSiteTest(w, r, p, status, site, &out)
}

// pathSite returns the site named by the path's {id}, if the logged-in user
// may see it.
func (s *Server) pathSite(r *http.Request) (*model.Site, error) {
	id := model.SiteID(r.PathValue("id"))
	if err := maySee(r, id); err != nil {
		return nil, err
	}
	return s.db.SiteByID(r.Context(), id)
}
