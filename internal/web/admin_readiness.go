package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
)

// readinessKeys are the dashboard's match keys and the two a CRM event is
// matched to its lead with.
var readinessKeys = append(append([]matchKey{}, matchKeys...),
	matchKey{"external_id", "Your id (external_id)"}, matchKey{"lead_id", "Lead Ads id (lead_id)"})

// readinessData is the readiness page of one site.
type readinessData struct {
	Site       *model.Site
	Days       int
	DryRun     bool
	Rows       []readinessRow
	Stages     []readinessStage
	Coverage   []coverageRow
	CoverageOf int
	Meta       metaQualityView
}

// readinessRow is one of Meta's requirements in the page's words.
type readinessRow struct {
	Code, Need, Have, Todo string
	OK                     bool
}

// readinessStage is one stage that reached Meta.
type readinessStage struct {
	Name, Kind  string
	Leads       int
	Pct, Median string
	IsLeadEvent bool
}

// metaQualityView is Meta's own figures, or why they are not shown.
type metaQualityView struct {
	Why, Message, ReadAt string
	Events               []metaEventView
	Read                 bool
}

type metaEventView struct {
	Name, Score, Dedupe string
	Keys                []metaKeyView
}

type metaKeyView struct{ Key, Pct string }

// adminReadiness checks a site against Meta's Conversion Leads guidelines:
// each requirement, where the site stands over the last 28 days, and what
// to do; beside it our match-key coverage and, where Meta answers for the
// site's token, Meta's own Event Match Quality.
func (s *Server) adminReadiness(w http.ResponseWriter, r *http.Request) {
	p := s.newPage(r, "sites", "Conversion Leads readiness")
	ctx := r.Context()
	site, err := s.pathSite(r)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	// Whole UTC days, so the figures and Meta's daily uploads agree.
	now := s.now().UTC()
	to := now.Truncate(24 * time.Hour).Add(24 * time.Hour)
	from := to.AddDate(0, 0, -model.ReadyPeriodDays)
	f, err := s.db.ReadinessFigures(ctx, site.ID, from, to)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	d := readinessData{Site: site, Days: model.ReadyPeriodDays, DryRun: site.Settings.Meta.Mode == model.ModeDryRun}
	d.Coverage, d.CoverageOf = coverageOf(p.Lang, readinessKeys, f.Sampled, func(key string) int { return f.Coverage[key] }), f.Sampled
	for _, req := range model.CheckReadiness(f) {
		d.Rows = append(d.Rows, readinessWords(p.Lang, req, f))
	}
	for _, st := range f.Stages {
		d.Stages = append(d.Stages, readinessStage{Name: st.EventName, Kind: stageLabel(p.Lang, st.Kind), Leads: st.Leads,
			Pct: pct(model.Pct(st.Leads, f.Leads)), Median: days(st.MedianDays), IsLeadEvent: st.Kind == model.KindLead})
	}
	d.Meta = s.metaQualityView(r, p.Lang, site)
	p.Title = tr(p.Lang, "Conversion Leads readiness") + " · " + site.Name
	p.D = d
	s.render(w, r, http.StatusOK, "readiness", p)
}

func pct(v float64) string  { return strconv.FormatFloat(v, 'f', 1, 64) + "%" }
func days(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// stageLabel says what kind of stage an event is.
func stageLabel(lang, kind string) string {
	switch {
	case kind == model.KindLead:
		return tr(lang, "the lead")
	case kind == model.KindQualified:
		return tr(lang, "qualified lead")
	case len(kind) > len(model.KindStage)+1:
		return tr(lang, "CRM stage %s", kind[len(model.KindStage)+1:])
	}
	return kind
}

// readinessWords puts one requirement in the page's words: what Meta asks,
// where the site stands, and what to do when it is not met.
func readinessWords(lang string, req model.Requirement, f *model.ReadinessFigures) readinessRow {
	row := readinessRow{Code: req.Code, OK: req.OK}
	switch req.Code {
	case model.ReqInstantForms:
		row.Need = tr(lang, "Leads from Meta's Instant Forms (Lead Ads): Conversion Leads optimises Lead Ads campaigns only.")
		row.Have = tr(lang, "%d of %d leads came from Instant Forms.", f.LeadAds, f.Leads)
	case model.ReqVolume:
		row.Need = tr(lang, "About %d leads a month or more, so Meta's model has enough to learn from.", model.ReadyLeadsPerMonth)
		row.Have = tr(lang, "%d leads a month (%d in the last %d days).", int(req.Have+0.5), f.Leads, model.ReadyPeriodDays)
	case model.ReqUploaded:
		row.Need = tr(lang, "An event for every lead, the first stage of the funnel, uploaded as it comes.")
		row.Have = tr(lang, "%s of the %d leads not judged junk reached Meta.", pct(req.Have), f.NotJunk)
	case model.ReqStages:
		row.Need = tr(lang, "At least two stages: the lead, and a later one from your sales process.")
		row.Have = tr(lang, "%d stages reached Meta.", len(f.Stages))
	case model.ReqRate:
		row.Need = tr(lang, "A later stage reached by about 1% to 40% of leads: the stage Meta optimises for.")
		row.Have = tr(lang, "No stage after the lead reached Meta.")
		if req.Stage != "" {
			row.Have = tr(lang, "%s: %s of leads.", req.Stage, pct(req.Have))
		}
	case model.ReqTiming:
		row.Need = tr(lang, "That stage happens within %d days of the lead.", model.ReadyStageDays)
		row.Have = tr(lang, "No stage after the lead reached Meta.")
		if req.Stage != "" {
			row.Have = tr(lang, "%s: about %s days after the lead (median).", req.Stage, days(req.Have))
		}
	case model.ReqDaily:
		row.Need = tr(lang, "Uploads at least once a day.")
		row.Have = tr(lang, "Events reached Meta on %d of the last %d days.", f.UploadDays, model.ReadyPeriodDays)
	case model.ReqMatchKeys:
		row.Need = tr(lang, "Each event carries lead_id, an e-mail or a phone, so Meta can match it to its lead.")
		row.Have = tr(lang, "%s of %d events sent.", pct(req.Have), f.Sampled)
	}
	switch req.Fix {
	case model.FixConnectLeadAds:
		row.Todo = tr(lang, "Connect Lead Ads to this site, so Instant Form leads come in here and their stages go back to Meta.")
	case model.FixMoreLeads:
		row.Todo = tr(lang, "Keep optimising for leads until there are more; Conversion Leads needs the volume to learn.")
	case model.FixUploadAll:
		row.Todo = tr(lang, "Look in Deliveries for events that wait or failed. Leads in review are sent once evidence confirms them.")
	case model.FixSendStages:
		row.Todo = tr(lang, "Send your sales stages (a meeting, a sale) from your CRM through the API, or mark them on the lead's page.")
	case model.FixDeeperStage:
		row.Todo = tr(lang, "Too many leads reach this stage to tell them apart: send and optimise for a later one, such as a meeting or a sale.")
	case model.FixEarlierStage:
		row.Todo = tr(lang, "Too few leads reach this stage: optimise for an earlier one, such as a qualified lead or a meeting.")
	case model.FixSoonerStage:
		row.Todo = tr(lang, "This stage comes too late: choose one that happens within %d days of the lead.", model.ReadyStageDays)
	case model.FixDailyUploads:
		row.Todo = tr(lang, "Record stages as they happen rather than in a batch now and then, and keep deliveries from pausing.")
	case model.FixMatchKeys:
		row.Todo = tr(lang, "Ask for an e-mail or a phone on your forms; Instant Form leads carry lead_id by themselves.")
	}
	return row
}

// metaQualityView reads Meta's own figures through the app, or says in
// plain words why they cannot be read.
func (s *Server) metaQualityView(r *http.Request, lang string, site *model.Site) metaQualityView {
	var v metaQualityView
	if s.app == nil {
		v.Why = tr(lang, "This server has no connection to Meta configured, so Meta's figures cannot be read.")
		return v
	}
	q := s.app.MetaQuality(r.Context(), site)
	switch q.Reason {
	case app.QualityNoGraph:
		v.Why = tr(lang, "This server has no connection to Meta configured, so Meta's figures cannot be read.")
	case app.QualityNoPixel:
		v.Why = tr(lang, "The site has no pixel id, so Meta's figures cannot be read.")
	case app.QualityNoToken:
		v.Why = tr(lang, "The site has no Meta access token, so Meta's figures cannot be read.")
	case app.QualityDryRun:
		v.Why = tr(lang, "The site is in dry run: nothing is sent to Meta, so Meta has no figures of it to show.")
	case app.QualityError:
		v.Why = tr(lang, "Meta's figures could not be read.")
		var ae *capi.APIError
		if errors.As(q.Err, &ae) {
			v.Message = ae.Message
		} else {
			v.Message = q.Err.Error()
		}
	default:
		v.Read = true
		v.ReadAt = q.ReadAt.In(s.loc).Format("2006-01-02 15:04")
		for _, e := range q.Quality.Web {
			ev := metaEventView{Name: e.EventName}
			if m := e.EventMatchQuality; m != nil {
				ev.Score = m.CompositeScore.String()
				for _, k := range m.MatchKeyFeedback {
					ev.Keys = append(ev.Keys, metaKeyView{Key: k.Identifier, Pct: percentOf(k.Coverage)})
				}
			}
			for _, dk := range e.DedupeKeyFeedback {
				if p := percentOf(dk.ServerEventsWithDedupeKey); p != "" {
					ev.Dedupe = tr(lang, "%s on %s of server events", dk.DedupeKey, p)
				}
			}
			v.Events = append(v.Events, ev)
		}
	}
	return v
}

// percentOf writes Meta's percentage with one decimal, "" when none.
func percentOf(p capi.Percent) string {
	f, err := p.Percentage.Float64()
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%.1f%%", f)
}
