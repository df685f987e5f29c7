package web

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
	"github.com/cleanads/cleanads/internal/source"
)

// leadData is the lead page's data.
type leadData struct {
	Lead     *model.Lead
	Name     string
	Site     *model.Site
	Received string
	Window   string
	Urgent   bool
	Reasons  []reasonRow
	Fields   []kv
	Click    []kv
	Facts    []kv
	Tech     []kv
	// Source is where the lead came from and Origin what the source says
	// (form, ad, campaign, ...).
	Source   string
	Origin   []kv
	Timeline []timelineItem
	Actions  []leadAction
	Stages   []stageOption
	// StageForm is what the stage form starts with.
	StageForm stageForm

	// Conflict says the CRM reached a stage with a lead the owner called
	// junk; Customer is the owner's "real customer" action that resolves it.
	Conflict string
	Customer leadAction
	// Repeat is the earlier lead this one repeats, when it stands.
	Repeat *repeatNote
}

type kv struct{ K, V string }

type reasonRow struct {
	Code, Text, Evidence string
	Points               int
	Final                bool
	// Earlier is the lead a repeat repeats.
	Earlier string
}

// repeatNote says that a lead repeats an earlier one, and what became of
// that one: a real customer's second message is not junk to hide.
type repeatNote struct {
	ID      model.LeadID
	Name    string
	Verdict model.Verdict
}

// timelineItem is one moment in a lead's story.
type timelineItem struct {
	at     time.Time
	order  int
	When   string
	Kind   string
	Title  string
	Detail string
	// Tech is the stored detail as it is, for support: behind "technical
	// details", never the main text.
	Tech     string
	Delivery *deliveryRow
}

// deliveryRow is one event for Meta as the pages show it.
type deliveryRow struct {
	ID, Site, LeadID, Kind, EventName, EventID, State, Mode string
	LastError, Payload, Response, When, NextAt, SentAt      string
	Attempts                                                int
	Replayable                                              bool
	// Google marks a row for Google Ads: its messages are Google's.
	Google bool
	// Dest is the label of where the row goes, when it is not Meta
	// ("Google Ads", "TikTok", "HubSpot", "Webhooks"): its messages and
	// answers are that one's.
	Dest string
	// Cause says in plain words why the row failed, Said what the
	// platform answered (empty when it said nothing: it could not be
	// reached, or our own check refused the event before sending).
	Cause, Said string
	// Answered says the stored response is the platform's answer, not an
	// error we recorded when it gave none.
	Answered bool
	// StateWord and ModeWord are the state and mode in words.
	StateWord, ModeWord string
	// Shrunk marks an event whose payload retention shrank, ShrunkDays
	// after it was queued: Payload is what is left of it.
	Shrunk     bool
	ShrunkDays int
}

// adminLead shows one lead: contact, message, reasons with their points,
// and its story with every event sent to Meta, as sent, and Meta's answer.
func (s *Server) adminLead(w http.ResponseWriter, r *http.Request) {
	p := s.newPage(r, "inbox", "Lead")
	switch r.URL.Query().Get("done") {
	case "customer":
		p.Notice = tr(p.Lang, "Marked as a real customer.")
	case "junk":
		p.Notice = tr(p.Lang, "Marked as junk.")
	case "stage":
		p.Notice = tr(p.Lang, "The stage was added.")
	}
	if r.URL.Query().Get("replayed") != "" {
		p.Notice = tr(p.Lang, "The event is queued again; the delivery worker sends it shortly.")
	}
	s.renderLead(w, r, p, http.StatusOK)
}

// renderLead draws the lead page with status, after an action that failed
// too, so the owner sees why next to what they tried.
func (s *Server) renderLead(w http.ResponseWriter, r *http.Request, p *page, status int) {
	ctx := r.Context()
	l, site, err := s.pathLead(r)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	hist, err := s.db.HistoryByLead(ctx, l.ID)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	dels, err := s.db.DeliveriesByLead(ctx, l.ID)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	now := s.now()
	d := leadData{Lead: l, Name: leadName(p.Lang, l), Site: site, Received: s.when(l.ReceivedAt)}
	p.Title = d.Name
	d.Window, d.Urgent = windowNote(p.Lang, l, now)
	for _, rs := range l.Reasons {
		row := reasonRow{Code: rs.Code, Text: reasonText(p.Lang, rs), Points: rs.Points,
			Final: rs.Final, Evidence: evidenceText(rs.Evidence)}
		if id, _ := rs.Evidence["lead_id"].(string); rs.Code == qualify.CodeDuplicate && id != "" {
			row.Earlier = id
			if first, err := s.db.LeadByID(ctx, model.LeadID(id)); err == nil && first.SiteID == l.SiteID && first.Verdict != model.VerdictJunk {
				d.Repeat = &repeatNote{ID: first.ID, Name: leadName(p.Lang, first), Verdict: first.Verdict}
			}
		}
		d.Reasons = append(d.Reasons, row)
	}
	keys := make([]string, 0, len(l.Fields))
	for k := range l.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		d.Fields = append(d.Fields, kv{k, l.Fields[k]})
	}
	d.Click = clickFacts(p.Lang, l)
	d.Source, d.Origin = sourceName(p.Lang, l), sourceFacts(p.Lang, l)
	d.Facts, d.Tech = leadFacts(p.Lang, l), s.techFacts(p.Lang, l)
	d.Timeline = s.timeline(p.Lang, l, hist, dels, now)
	recorded, err := s.db.LeadStagesByLead(ctx, l.ID)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	var held []model.LeadStage
	if l.OwnerSaidJunk() {
		held = recorded
	}
	d.Actions = leadActions(p.Lang, site, l, dels, held, now)
	d.Stages, d.StageForm = stageOptions(site, l, recorded), s.newStageForm(site, now)
	if d.Conflict = conflictText(p.Lang, l, held); d.Conflict != "" {
		d.Customer = d.Actions[0]
	}
	p.D = d
	s.render(w, r, status, "lead", p)
}

// clickFacts are what is known of the ad click: Meta's and Google's click
// ids and the campaign parameters of the page the form was sent from.
func clickFacts(lang string, l *model.Lead) []kv {
	var out []kv
	add := func(k, v string) {
		if v != "" {
			out = append(out, kv{k, v})
		}
	}
	add(tr(lang, "Meta click id (fbclid)"), l.FBClid)
	add(tr(lang, "Meta click cookie (fbc)"), l.FBC)
	add(tr(lang, "Meta browser id (fbp)"), l.FBP)
	add(tr(lang, "Google click id (gclid)"), l.GClid)
	if u, err := url.Parse(l.PageURL); err == nil {
		q := u.Query()
		if l.FBClid == "" {
			add(tr(lang, "Meta click id (fbclid)"), q.Get("fbclid"))
		}
		if l.GClid == "" {
			add(tr(lang, "Google click id (gclid)"), q.Get("gclid"))
		}
		add(tr(lang, "TikTok click id (ttclid)"), q.Get("ttclid"))
		for _, k := range []struct{ param, label string }{{"utm_source", "Ad source (utm_source)"},
			{"utm_medium", "Medium (utm_medium)"}, {"utm_campaign", "Campaign (utm_campaign)"},
			{"utm_content", "Ad content (utm_content)"}, {"utm_term", "Keyword (utm_term)"},
			{"campaign_id", "Campaign id"}, {"adset_id", "Ad set id"}, {"ad_id", "Ad id"}} {
			add(tr(lang, k.label), q.Get(k.param))
		}
	}
	return out
}

func (s *Server) techFacts(lang string, l *model.Lead) []kv {
	var out []kv
	add := func(k, v string) {
		if v != "" {
			out = append(out, kv{tr(lang, k), v})
		}
	}
	add("Lead id", string(l.ID))
	add("Event id", l.EventID)
	add("Site", string(l.SiteID))
	add("Page", l.PageURL)
	add("Referrer", l.Referrer)
	add("IP address", l.ClientIP)
	add("Browser", l.UserAgent)
	add("Visitor", l.VisitorID)
	add("External id", l.ExternalID)
	add("Lead Ads id", l.LeadAdsID)
	if l.Honeypot != "" {
		add("Trap field", l.Honeypot)
	}
	add("Rules version", l.RulesVersion)
	return out
}

// leadFacts are the details an owner reads about how the form was sent;
// the rest (ids, addresses, the full page address) is in techFacts.
func leadFacts(lang string, l *model.Lead) []kv {
	var out []kv
	if l.PageURL != "" {
		out = append(out, kv{tr(lang, "Page"), shortPage(l.PageURL)})
	}
	if l.FillMS != nil {
		out = append(out, kv{tr(lang, "Time to fill"), fmt.Sprintf("%.1f s", float64(*l.FillMS)/1000) + fillByNote(lang, app.LeadFillBy(l))})
	}
	if l.Consent != nil {
		out = append(out, kv{tr(lang, "Consent"), map[bool]string{true: tr(lang, "yes"), false: tr(lang, "no")}[*l.Consent]})
	}
	if l.Honeypot != "" {
		out = append(out, kv{tr(lang, "Trap field"), tr(lang, "filled in: a bot")})
	}
	return out
}

// fillByNote says who measured a lead's fill time, as the rules weigh it:
// our tracker's figure settles a fast fill, the site's server's gives points.
func fillByNote(lang, by string) string {
	switch by {
	case model.FillByTracker:
		return " (" + tr(lang, "measured by our tracker in the visitor's browser") + ")"
	case model.FillByBackend:
		return " (" + tr(lang, "the site's server's figure, not measured by us") + ")"
	}
	return ""
}

// timeline puts the lead's moments in order: the click, the submit, each
// verdict, evidence and stage, and each event for Meta.
func (s *Server) timeline(lang string, l *model.Lead, hist []model.HistoryEntry, dels []*model.Delivery, now time.Time) []timelineItem {
	var items []timelineItem
	if title, tech, ok := adClick(lang, l); ok {
		t, known := fbcTime(l.FBC)
		if !known {
			t = l.SubmittedAt
		}
		var detail string
		if u, err := url.Parse(l.PageURL); err == nil && u.Query().Get("utm_campaign") != "" {
			detail = tr(lang, "campaign %s", u.Query().Get("utm_campaign"))
		}
		items = append(items, timelineItem{at: t, order: 0, Kind: "click", Title: title, Detail: detail, Tech: tech})
	}
	submit, detail, tech := sourceArrival(lang, l), "", ""
	if l.Source != "" && l.Source != model.SourceWeb {
		detail = sourceSummary(lang, l)
	} else if l.PageURL != "" {
		detail, tech = tr(lang, "on %s", shortPage(l.PageURL)), l.PageURL
	}
	if l.FillMS != nil {
		detail = strings.TrimPrefix(detail+" · "+tr(lang, "filled in %.1f s", float64(*l.FillMS)/1000)+fillByNote(lang, app.LeadFillBy(l)), " · ")
	}
	items = append(items, timelineItem{at: l.SubmittedAt, order: 1, Kind: "submit", Title: submit, Detail: detail, Tech: tech})
	for _, h := range hist {
		title, detail := historyItem(lang, h)
		items = append(items, timelineItem{at: h.At, order: 2, Kind: h.Kind, Title: title, Detail: detail, Tech: evidenceText(h.Data)})
	}
	for _, d := range dels {
		row := s.deliveryRow(lang, d, now)
		title := tr(lang, "Event %s for Meta", d.EventName)
		if row.Google {
			title = tr(lang, "Event %s for Google Ads", d.EventName)
		} else if row.Dest != "" {
			title = tr(lang, "Event %s for %s", d.EventName, row.Dest)
		}
		items = append(items, timelineItem{at: d.CreatedAt, order: 3, Kind: "event", Title: title, Delivery: &row})
	}
	sort.SliceStable(items, func(i, j int) bool {
		if !items[i].at.Equal(items[j].at) {
			return items[i].at.Before(items[j].at)
		}
		return items[i].order < items[j].order
	})
	for i := range items {
		items[i].When = s.when(items[i].at)
	}
	return items
}

// fbcTime reads the click time from an fbc value, fb.1.<ms>.<fbclid>.
func fbcTime(fbc string) (time.Time, bool) {
	parts := strings.SplitN(fbc, ".", 4)
	if len(parts) != 4 || parts[0] != "fb" {
		return time.Time{}, false
	}
	ms, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || ms <= 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(ms).UTC(), true
}

func (s *Server) deliveryRow(lang string, d *model.Delivery, now time.Time) deliveryRow {
	row := deliveryRow{ID: d.ID, Site: string(d.SiteID), LeadID: string(d.LeadID), Kind: d.Kind, EventName: d.EventName,
		EventID: d.EventID, State: string(d.State), Mode: d.Mode, LastError: d.LastError, Attempts: d.Attempts,
		Payload: prettyJSON(d.Payload), Response: prettyJSON(d.Response), When: s.when(d.CreatedAt),
		Replayable: d.State == model.DeliveryDead && d.DeadlineAt.After(now), Google: d.Destination == model.DestinationGoogle}
	if d.ShrunkAt != nil {
		row.Shrunk, row.ShrunkDays, row.Replayable = true, d.ShrunkDays(), false
	}
	if d.Destination != model.DestinationMeta && d.Destination != "" {
		row.Dest = s.destLabel(d.Destination)
	}
	if d.State == model.DeliveryRetry || d.State == model.DeliveryPending {
		row.NextAt = s.when(d.NextAt)
	}
	if d.SentAt != nil {
		row.SentAt = s.when(*d.SentAt)
	}
	dest := d.Destination
	if dest == "" || dest == model.DestinationMetaLeadgen {
		dest = model.DestinationMeta
	}
	row.StateWord, row.ModeWord = stateWord(lang, string(d.State)), stateWord(lang, d.Mode)
	f := failureOf(dest, d.State, d.LastError, d.Response)
	switch d.State {
	case model.DeliveryRetry, model.DeliveryPaused, model.DeliveryDead, model.DeliverySent:
		// A pending row (replayed, or never tried) keeps the error of an
		// earlier try, which says nothing of now.
		row.Cause, row.Said = causeText(lang, platformName(dest), f.Cause), f.Said
	}
	row.Answered = f.Said != "" || d.State == model.DeliverySent || d.State == model.DeliveryDryRun
	return row
}

// pathLead returns the lead named by the path's {id} and its site.
func (s *Server) pathLead(r *http.Request) (*model.Lead, *model.Site, error) {
	l, err := s.db.LeadByID(r.Context(), model.LeadID(r.PathValue("id")))
	if err != nil {
		return nil, nil, err
	}
	if err := maySee(r, l.SiteID); err != nil {
		return nil, nil, fmt.Errorf("lead %s: %w", l.ID, err)
	}
	site, err := s.db.SiteByID(r.Context(), l.SiteID)
	if err != nil {
		return nil, nil, err
	}
	return l, site, nil
}

// destLabel is the label of a delivery's destination as the owner knows
// it: its platform's, or the lead source's whose worker sends its rows.
func (s *Server) destLabel(dest string) string {
	if dest == model.DestinationGoogle {
		return "Google Ads"
	}
	for _, p := range s.platforms {
		if p.Name() == dest {
			return p.Label()
		}
	}
	for _, src := range s.sources {
		if w, ok := src.(source.Worker); ok && w.Destination() == dest {
			return w.Label()
		}
	}
	return dest
}
