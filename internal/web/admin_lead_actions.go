package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
)

// leadAction is a button on the lead page with what pressing it will send.
type leadAction struct {
	Type, Label, Sends string
	Current            bool // the owner already said this
}

// leadActions says, for the owner's two words, what each will do at Meta
// now: the qualified event as it would be built, or why nothing is sent.
// held are the stages a junk word of the owner keeps from Meta.
func leadActions(lang string, site *model.Site, l *model.Lead, dels []*model.Delivery, held []model.LeadStage, now time.Time) []leadAction {
	m := site.Settings.Meta
	sentQualified := false
	for _, d := range dels {
		if d.Kind == model.KindQualified && d.State == model.DeliverySent {
			sentQualified = true
		}
	}
	owner := l.DecidedBy == model.DecidedByOwner
	customer := leadAction{Type: qualify.EvidenceCustomer, Label: tr(lang, "Real customer"),
		Current: owner && l.Verdict == model.VerdictClean}
	switch {
	case l.Verdict == model.VerdictClean:
		customer.Sends = tr(lang, "Already clean: nothing new is sent to Meta.")
	case now.After(l.SubmittedAt.Add(model.MaxEventAge - time.Hour)):
		customer.Sends = tr(lang, "Too late for Meta: the lead came in more than 7 days ago. It is only recorded here.")
	default:
		customer.Sends = tr(lang, "Sends %s to Meta (pixel %s) with the time of the form, as system_generated.",
			m.QualifiedEventName(), orDash(m.PixelID))
		if l.Verdict == model.VerdictJunk {
			customer.Sends += " " + tr(lang, "The %s event held back for junk is sent too.", m.LeadEventName())
		}
		customer.Sends += " " + modeNote(lang, m.Mode)
	}
	if sends, ok := ctwaCustomerSends(lang, site, l, now); ok {
		customer.Sends = sends
	}
	if note := heldNote(lang, held, now); note != "" && l.Verdict != model.VerdictClean {
		customer.Sends = strings.TrimSpace(customer.Sends + " " + note)
	}
	junk := leadAction{Type: qualify.EvidenceJunk, Label: tr(lang, "Junk"), Current: owner && l.Verdict == model.VerdictJunk,
		Sends: tr(lang, "Nothing is sent; events of this lead not yet sent are cancelled.")}
	if sentQualified {
		junk.Sends += " " + tr(lang, "Meta already received %s for it; that cannot be taken back.", m.QualifiedEventName())
	}
	return []leadAction{customer, junk}
}

func modeNote(lang, mode string) string {
	switch mode {
	case model.ModeTest:
		return tr(lang, "Test mode: it shows in Meta's Test Events tab.")
	case model.ModeDryRun:
		return tr(lang, "Dry run: it is built and shown here, not sent.")
	}
	return ""
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// adminLeadEvidence records the owner's word on a lead: a real customer or
// junk. The owner's word is final and can be changed again.
func (s *Server) adminLeadEvidence(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	typ := r.PostFormValue("type")
	if typ != qualify.EvidenceCustomer && typ != qualify.EvidenceJunk {
		s.adminFail(w, r, model.Invalid("type", "want customer or junk"))
		return
	}
	l, site, err := s.pathLead(r)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	if _, err := s.app.AddEvidence(ctx, site, l.ID, qualify.Evidence{Type: typ}); err != nil {
		s.adminFail(w, r, err)
		return
	}
	s.log.InfoContext(ctx, "owner's word", "lead", string(l.ID), "type", typ, "user", string(adminFrom(ctx).user.ID))
	http.Redirect(w, r, "/admin/leads/"+string(l.ID)+"?done="+typ, http.StatusSeeOther)
}

// stageOption is one of a site's CRM stages, with the Meta event it sends
// for the lead: a Click-to-WhatsApp lead's stage goes to the WhatsApp
// dataset under the site's whatsapp.stages name. Recorded says the lead
// reached it already (adding it again changes nothing); Selected is the
// form's default, the first stage not recorded.
type stageOption struct {
	Name, Event, Value, Currency string
	Recorded, Selected           bool
}

func stageOptions(site *model.Site, l *model.Lead, recorded []model.LeadStage) []stageOption {
	var out []stageOption
	ctwa := l.Source == model.SourceWhatsApp && l.SourceDetail[model.DetailCTWAClid] != ""
	for _, name := range site.Settings.StageNames() {
		se := site.Settings.Meta.Stages[name]
		o := stageOption{Name: name, Event: se.Event, Currency: se.Currency}
		if ctwa {
			o.Event = site.Settings.WhatsApp.StageEventName(name, site.Settings.Meta)
		}
		if se.Value != 0 {
			o.Value = strconv.FormatFloat(se.Value, 'f', -1, 64)
		}
		for _, st := range recorded {
			o.Recorded = o.Recorded || st.Stage == name
		}
		out = append(out, o)
	}
	for i := range out {
		if !out[i].Recorded {
			out[i].Selected = true
			break
		}
	}
	return out
}

// stageTimeLayout is the value of an HTML datetime-local input.
const stageTimeLayout = "2006-01-02T15:04"

// stageForm is what the stage form starts with: now, the earliest and
// latest time the site takes (Service.StageTimeLimit), and the site's currency.
type stageForm struct {
	At, Min, Max, Currency string
	Days                   int
}

func (s *Server) newStageForm(site *model.Site, now time.Time) stageForm {
	limit := s.app.StageTimeLimit(site)
	return stageForm{At: now.In(s.loc).Format(stageTimeLayout), Min: now.Add(-limit).In(s.loc).Format(stageTimeLayout),
		Max: now.Add(capi.MaxClockSkew).In(s.loc).Format(stageTimeLayout), Currency: siteCurrency(site),
		Days: int((limit + time.Hour) / (24 * time.Hour))}
}

// parseStageTime reads the form's time, in the admin's zone; empty is now.
func (s *Server) parseStageTime(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", nil
	}
	for _, layout := range []string{stageTimeLayout, "2006-01-02T15:04:05", "2006-01-02 15:04"} {
		if t, err := time.ParseInLocation(layout, v, s.loc); err == nil {
			return t.Format(time.RFC3339), nil
		}
	}
	return "", model.Invalid("at", "want a date and time like 2026-12-02 15:04")
}

// adminLeadStage records a CRM stage the owner reached with the lead (a
// meeting, a sale with its value); its Meta event is queued at once, once
// per stage.
func (s *Server) adminLeadStage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	l, site, err := s.pathLead(r)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	in := &app.LeadEventInput{Type: app.TypeStage, Stage: r.PostFormValue("stage"),
		Currency: strings.ToUpper(strings.TrimSpace(r.PostFormValue("currency"))), ActionSource: r.PostFormValue("action_source")}
	at, err := s.parseStageTime(r.PostFormValue("at"))
	if err != nil {
		s.stageProblem(w, r, err)
		return
	}
	in.At = at
	if v := strings.TrimSpace(strings.ReplaceAll(r.PostFormValue("value"), ",", ".")); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			s.stageProblem(w, r, model.Invalid("value", "is not a number"))
			return
		}
		in.Value = &f
	}
	if _, err := s.app.AddLeadEvent(ctx, site, l.ID, in); err != nil {
		var ie *model.InputError
		if errors.As(err, &ie) {
			s.stageProblem(w, r, err)
			return
		}
		s.adminFail(w, r, err)
		return
	}
	s.log.InfoContext(ctx, "stage from the admin", "lead", string(l.ID), "stage", in.Stage, "user", string(adminFrom(ctx).user.ID))
	http.Redirect(w, r, "/admin/leads/"+string(l.ID)+"?done=stage", http.StatusSeeOther)
}

// stageProblem shows the lead page again with why the stage was refused.
func (s *Server) stageProblem(w http.ResponseWriter, r *http.Request, err error) {
	p := s.newPage(r, "inbox", "Lead")
	p.Problem = tr(p.Lang, "The stage was not added: %s", err.Error())
	s.renderLead(w, r, p, http.StatusBadRequest)
}
