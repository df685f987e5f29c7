package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// The outgoing webhooks' section of a site's page (docs/webhooks.md):
// endpoints added and removed, the secret shown once, a test event, and
// the latest posts with their answers and a replay.

// hookPostsShown is how many of the latest posts the section lists.
const hookPostsShown = 20

// hooksSection is the section's data.
type hooksSection struct {
	Endpoints []hookEndpointRow
	Posts     []hookPostRow
	// Events are the events an endpoint may choose, for the add form.
	Events []hookChoice
	// URL and Problem are the add form as typed and why it was refused.
	URL, Problem string
	// Secret is a new endpoint's secret, shown this once, for SecretURL.
	Secret, SecretURL string
}

type hookEndpointRow struct {
	ID, URL string
	Events  []string
	Created time.Time
}

type hookChoice struct {
	Name, Words string
	Checked     bool
}

// hookEventWords say what each event is.
var hookEventWords = map[string]string{
	model.HookLeadReceived:  "a new lead, with its verdict and reasons",
	model.HookVerdictChange: "its verdict changed",
	model.HookQualified:     "it became a real lead (clean)",
	model.HookStage:         "a stage was recorded",
}

// hookStateWords name a post's state.
var hookStateWords = map[model.DeliveryState]string{
	model.DeliveryPending: "waiting", model.DeliveryRetry: "retrying", model.DeliveryPaused: "paused",
	model.DeliverySent: "sent", model.DeliveryDead: "failed", model.DeliveryExpired: "expired",
}

type hookPostRow struct {
	ID, Event, Lead, URL, State, Error string
	StateWord                          string
	Attempts                           int
	Created                            time.Time
	Status                             int
	Body                               string
	Replayable                         bool
}

// hookEdit is what an add brings back to the page.
type hookEdit struct {
	URL, Problem, Secret, SecretURL string
	Events                          []string
}

type hookEditKey struct{}

// hooksOf builds the section of site, with the add's outcome when the
// request carries one.
func (s *Server) hooksOf(r *http.Request, lang string, site *model.Site) (hooksSection, error) {
	var sec hooksSection
	eps, err := s.app.Webhooks(r.Context(), site.ID)
	if err != nil {
		return sec, err
	}
	urls := map[string]string{}
	for _, e := range eps {
		sec.Endpoints = append(sec.Endpoints, hookEndpointRow{ID: e.ID, URL: e.URL, Events: e.Events, Created: e.CreatedAt})
		urls[e.ID] = e.URL
	}
	edit, _ := r.Context().Value(hookEditKey{}).(*hookEdit)
	for _, ev := range model.HookEvents {
		sec.Events = append(sec.Events, hookChoice{Name: ev, Words: tr(lang, hookEventWords[ev]), Checked: edit == nil || edit.Problem == "" || slices.Contains(edit.Events, ev)})
	}
	if edit != nil {
		sec.Problem, sec.Secret, sec.SecretURL = edit.Problem, edit.Secret, edit.SecretURL
		if edit.Problem != "" {
			sec.URL = edit.URL
		}
	}
	posts, err := s.app.WebhookDeliveries(r.Context(), site.ID, hookPostsShown)
	if err != nil {
		return sec, err
	}
	for _, d := range posts {
		row := hookPostRow{ID: d.ID, Event: d.Kind, Lead: string(d.LeadID), URL: urls[d.PixelID], State: string(d.State),
			StateWord: tr(lang, hookStateWords[d.State]), Error: hookErrorWords(lang, d.LastError), Attempts: d.Attempts, Created: d.CreatedAt}
		if row.URL == "" {
			row.URL = "—"
		}
		var a struct {
			Status int    `json:"status"`
			Body   string `json:"body"`
		}
		if len(d.Response) > 0 && json.Unmarshal(d.Response, &a) == nil {
			row.Status, row.Body = a.Status, a.Body
			if len(row.Body) > 160 {
				row.Body = strings.ToValidUTF8(row.Body[:160], "") + "…"
			}
		}
		switch d.State {
		case model.DeliverySent, model.DeliveryDead, model.DeliveryExpired:
			row.Replayable = string(d.Payload) != "{}" && d.ShrunkAt == nil
		}
		sec.Posts = append(sec.Posts, row)
	}
	return sec, nil
}

// adminHookAdd adds an endpoint; the page comes back with its secret,
// shown this once, or with why the address was refused (nothing added).
func (s *Server) adminHookAdd(w http.ResponseWriter, r *http.Request) {
	p := s.newPage(r, "sites", "Site")
	site, err := s.pathSite(r)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	if err := r.ParseForm(); err != nil {
		s.adminFail(w, r, errStatus(http.StatusBadRequest, tr(p.Lang, "The form could not be read.")))
		return
	}
	edit := &hookEdit{URL: r.PostFormValue("url"), Events: r.PostForm["event"]}
	status := http.StatusCreated
	ep, err := s.app.WebhookAdd(r.Context(), site.ID, edit.URL, edit.Events)
	var ie *model.InputError
	switch {
	case errors.As(err, &ie):
		status = http.StatusBadRequest
		edit.Problem = hookProblem(p.Lang, ie)
		p.Problem = tr(p.Lang, "The webhook was not added: %s", edit.Problem)
	case err != nil:
		s.adminFail(w, r, err)
		return
	default:
		s.log.InfoContext(r.Context(), "webhook added", "site", string(site.ID), "webhook", ep.ID,
			"user", string(adminFrom(r.Context()).user.ID))
		edit.Secret, edit.SecretURL = ep.Secret, ep.URL
		p.Notice = tr(p.Lang, "The webhook was added. Copy its secret now: it is shown only once.")
	}
	r = r.WithContext(context.WithValue(r.Context(), hookEditKey{}, edit))
	s.renderSite(w, r, p, status, site, formOf(site), "")
}

// hookProblem says why an endpoint was refused, in lang.
func hookProblem(lang string, ie *model.InputError) string {
	msg := ie.Message
	if strings.HasPrefix(msg, "unknown event ") {
		return tr(lang, "Choose events from the list.")
	}
	if strings.HasPrefix(msg, "a site has at most") {
		return tr(lang, "A site has at most 10 webhooks: remove one first.")
	}
	return tr(lang, msg)
}

// adminHookRemove removes an endpoint.
func (s *Server) adminHookRemove(w http.ResponseWriter, r *http.Request) {
	site, err := s.pathSite(r)
	if err == nil {
		err = s.app.WebhookRemove(r.Context(), site.ID, r.PathValue("hook"))
	}
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	s.log.InfoContext(r.Context(), "webhook removed", "site", string(site.ID), "webhook", r.PathValue("hook"),
		"user", string(adminFrom(r.Context()).user.ID))
	http.Redirect(w, r, "/admin/sites/"+string(site.ID)+"?hook=removed#webhooks", http.StatusSeeOther)
}

// adminHookTest queues a test event for an endpoint.
func (s *Server) adminHookTest(w http.ResponseWriter, r *http.Request) {
	site, err := s.pathSite(r)
	if err == nil {
		err = s.app.WebhookTest(r.Context(), site.ID, r.PathValue("hook"))
	}
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	http.Redirect(w, r, "/admin/sites/"+string(site.ID)+"?hook=tested#webhooks", http.StatusSeeOther)
}

// adminHookReplay posts a settled post again.
func (s *Server) adminHookReplay(w http.ResponseWriter, r *http.Request) {
	p := s.newPage(r, "sites", "Site")
	site, err := s.pathSite(r)
	if err == nil {
		err = s.app.WebhookReplay(r.Context(), site.ID, r.PathValue("post"))
	}
	if errors.Is(err, model.ErrConflict) {
		err = errStatus(http.StatusConflict, tr(p.Lang, "This post cannot be replayed: it is still being sent, its lead was erased, or its detail was cleared after retention.event_days."))
	}
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	http.Redirect(w, r, "/admin/sites/"+string(site.ID)+"?hook=replayed#webhooks", http.StatusSeeOther)
}

// hookErrorWords are a post's error in lang: the runner's own words are
// translated, a receiver's answer stays as it came.
func hookErrorWords(lang, e string) string {
	switch {
	case e == "waits for the endpoint, which failed just before", e == "the webhook was removed",
		e == "waits for an earlier event of this lead":
		return tr(lang, e)
	case strings.HasPrefix(e, "waits for the earlier event "):
		return tr(lang, "waits for an earlier event of this lead")
	case strings.HasPrefix(e, "answered "):
		return tr(lang, "The receiver answered %s.", strings.TrimPrefix(e, "answered "))
	}
	return e
}

// hookNotice is the page's notice after a webhook action's redirect.
func hookNotice(lang, what string) string {
	switch what {
	case "removed":
		return tr(lang, "The webhook was removed.")
	case "tested":
		return tr(lang, "A test event was queued: its answer shows in the list of posts in a moment.")
	case "replayed":
		return tr(lang, "The event was queued again: its answer shows in the list of posts in a moment.")
	}
	return ""
}
