package app

import (
	"context"
	"errors"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
	"github.com/cleanads/cleanads/internal/store"
)

// ReplayResult is what the current rules and text model would make of a
// site's recent leads. Nothing in it was stored or sent.
type ReplayResult struct {
	Since time.Time
	// Leads is how many leads were judged again.
	Leads int
	// Model is the text model they were judged with (trained now from the
	// owner's word as it stands), nil when the site has it off or has no
	// owner-judged lead.
	Model *qualify.TextModel
	// Changes are the leads whose rules verdict would change, newest first.
	Changes []ReplayChange
	// Before and After compare the rules' verdicts with the owner's word on
	// the replayed leads the owner judged: Missed the owner marked junk and
	// the rules passed as clean, Rescued the owner marked real customers and
	// the rules held (review or junk).
	Judged                      int
	MissedBefore, MissedAfter   int
	RescuedBefore, RescuedAfter int
}

// ReplayChange is one lead whose rules verdict would change.
type ReplayChange struct {
	Lead *model.Lead
	// Was is the rules' verdict at intake and the rules' reasons as stored;
	// Now is the decision of the current rules and model.
	Was     model.Verdict
	WasWhy  []model.Reason
	Now     model.Decision
	OwnerBy bool // the owner judged the lead: their word stays final
}

// Replay judges again the site's leads received since the given time with
// the current rules (site's settings as given, so a changed config can be
// tried before it goes live) and the text model trained from the owner's
// word as it is now, and tells what would change. It only reads: nothing is
// stored, queued or sent. An owner-judged lead is judged by a model that
// leaves its own judgement out.
func (s *Service) Replay(ctx context.Context, site *model.Site, since time.Time) (*ReplayResult, error) {
	res := &ReplayResult{Since: since}
	r := s.rules(site)
	var own map[model.LeadID]bool
	if site.Settings.Qualify.TextModel.On() {
		js, err := s.db.LeadOwnerJudged(ctx, site.ID, maxTrainingLeads)
		if err != nil {
			return nil, err
		}
		if len(js) > 0 {
			res.Model = qualify.TrainText(judgements(js), s.now())
			own = make(map[model.LeadID]bool, len(js))
			for _, j := range js {
				own[j.LeadID] = j.Junk
			}
		}
	}
	f := store.LeadFilter{Site: site.ID, Limit: 500}
	for {
		page, err := s.db.LeadList(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, lead := range page {
			if lead.ReceivedAt.Before(since) {
				return res, nil
			}
			if err := s.replayLead(ctx, r, site, lead, res, own); err != nil {
				return nil, err
			}
		}
		if len(page) < f.Limit {
			return res, nil
		}
		last := page[len(page)-1]
		f.Before, f.BeforeID = last.ReceivedAt, last.ID
	}
}

func (s *Service) replayLead(ctx context.Context, r *qualify.Rules, site *model.Site, lead *model.Lead, res *ReplayResult, own map[model.LeadID]bool) error {
	res.Leads++
	hist, err := s.db.HistoryByLead(ctx, lead.ID)
	if err != nil {
		return err
	}
	was, token := lead.Verdict, qualify.TokenCheck{}
	for _, h := range hist {
		if h.Kind != model.HistoryVerdict {
			continue
		}
		// The first verdict is the rules' at intake, with the form token's
		// check as it was then (a token cannot be checked twice).
		if v, ok := h.Data["verdict"].(string); ok {
			was = model.Verdict(v)
		}
		if ft, ok := h.Data["form_token"].(map[string]any); ok {
			token.Checked, _ = ft["checked"].(bool)
			token.Valid, _ = ft["valid"].(bool)
			token.Problem, _ = ft["problem"].(string)
			if n, ok := ft["server_fill_ms"].(float64); ok {
				token.ServerFillMS = int64(n)
			}
		}
		break
	}
	qc := qualify.Context{Now: lead.ReceivedAt, Country: site.Settings.Country, Token: token}
	leadContext(&qc, lead)
	qc.FillBy = LeadFillBy(lead)
	if res.Model != nil {
		qc.Text = &qualify.Text{Model: res.Model, MaxPoints: site.Settings.Qualify.TextModel.MaxPoints}
		if junk, ok := own[lead.ID]; ok {
			qc.Text.LeaveOut = &junk
		}
	}
	if lead.EmailKey != "" || lead.PhoneKey != "" {
		id, at, match, err := s.db.LeadPreviousOf(ctx, lead, lead.ReceivedAt.Add(-r.DuplicateWindow()))
		switch {
		case err == nil:
			qc.Previous = &qualify.Previous{LeadID: id, At: at, Match: match}
		case !errors.Is(err, model.ErrNotFound):
			return err
		}
	}
	now := r.Score(lead, qc)
	owner := lead.DecidedBy == model.DecidedByOwner
	if owner {
		res.Judged++
		missed := func(v model.Verdict) bool { return lead.Verdict == model.VerdictJunk && v == model.VerdictClean }
		rescued := func(v model.Verdict) bool { return lead.Verdict == model.VerdictClean && v != model.VerdictClean }
		res.MissedBefore += b2i(missed(was))
		res.MissedAfter += b2i(missed(now.Verdict))
		res.RescuedBefore += b2i(rescued(was))
		res.RescuedAfter += b2i(rescued(now.Verdict))
	}
	if now.Verdict == was {
		return nil
	}
	var why []model.Reason
	for _, x := range lead.Reasons {
		if qualify.RuleReason(x.Code) {
			why = append(why, x)
		}
	}
	res.Changes = append(res.Changes, ReplayChange{Lead: lead, Was: was, WasWhy: why, Now: now, OwnerBy: owner})
	return nil
}

// LeadFillBy is who measured a lead's fill time: Lead.FillBy, or for a lead
// stored before leads kept it, what its judgement at intake said when the
// fill was too fast; otherwise "" (for the rules, the tracker, as they then
// read it).
func LeadFillBy(lead *model.Lead) string {
	if lead.FillBy != "" || lead.FillMS == nil {
		return lead.FillBy
	}
	for _, x := range lead.Reasons {
		if x.Code == qualify.CodeFillTooFast {
			switch x.Evidence["source"] {
			case qualify.FillSourceBackend:
				return qualify.FillByBackend
			case qualify.FillSourceTracker:
				return qualify.FillByTracker
			}
		}
	}
	return ""
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
