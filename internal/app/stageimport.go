package app

import (
	"context"
	"errors"
	"strings"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
)

// What becomes of a row of a stage import.
const (
	ImportNew      = "new"      // preview: the stage will be recorded
	ImportAdded    = "added"    // confirm: the stage was recorded
	ImportRecorded = "recorded" // the lead has the stage already: nothing changes
	ImportRepeat   = "repeat"   // an earlier row of the file gives the same lead the same stage
	ImportNoLead   = "no_lead"  // no lead of the site matches the row
	ImportInvalid  = "invalid"  // the row itself is wrong (see Problem)
)

// ImportRow is one row of a CSV of stages, as the owner's columns map it:
// the lead as the CRM knows it and the stage call it stands for.
type ImportRow struct {
	Line  int
	Ref   LeadRef
	Stage LeadEventInput
	// Problem is set when the row could not even be read (a time or value
	// in no form known): it is reported as is.
	Problem string
}

// ImportResult is what becomes (preview) or became (confirm) of a row.
type ImportResult struct {
	Line    int
	Lead    *model.Lead // nil when no lead matched
	Stage   string      // the site's name of the stage
	Status  string
	Problem string
}

// StageImport checks each row of a stage import as the stage API would,
// and, when record is set, records the rows that pass, each exactly as
// POST /v1/events would. A bad row gets its own problem and never stops
// the others. Nothing is recorded for a row that is refused, so importing
// the same file again changes nothing: its stages are all recorded
// already, and its bad rows are refused again without a trace.
func (s *Service) StageImport(ctx context.Context, site *model.Site, rows []ImportRow, record bool) ([]ImportResult, error) {
	out := make([]ImportResult, 0, len(rows))
	seen := map[string]bool{}
	for _, row := range rows {
		res, err := s.importRow(ctx, site, row, record, seen)
		if err != nil {
			return out, err
		}
		out = append(out, res)
	}
	if record {
		s.wake()
	}
	return out, nil
}

func (s *Service) importRow(ctx context.Context, site *model.Site, row ImportRow, record bool, seen map[string]bool) (ImportResult, error) {
	res := ImportResult{Line: row.Line, Status: ImportInvalid}
	if row.Problem != "" {
		res.Problem = row.Problem
		return res, nil
	}
	in := row.Stage
	in.Type = TypeStage
	lead, err := s.FindLead(ctx, site, row.Ref)
	switch {
	case errors.Is(err, model.ErrNotFound):
		res.Status, res.Problem = ImportNoLead, "no lead of this site has this "+refWhat(row.Ref)
		return res, nil
	case err != nil:
		if msg, ok := inputProblem(err); ok {
			res.Problem = msg
			return res, nil
		}
		return res, err
	}
	res.Lead = lead
	// A value without a currency is in the site's, unless the stage has
	// its own.
	if in.Value != nil && strings.TrimSpace(in.Currency) == "" {
		if ev, ok := stageNamed(site, in.Stage); !ok || ev.Currency == "" {
			in.Currency = SiteCurrency(site)
		}
	}
	now := s.now().UTC()
	c, err := s.checkStage(site, &in, now)
	if err != nil {
		if msg, ok := inputProblem(err); ok {
			res.Problem = msg
			return res, nil
		}
		return res, err
	}
	res.Stage = c.name
	key := string(lead.ID) + "\x00" + c.name
	if seen[key] {
		res.Status = ImportRepeat
		return res, nil
	}
	seen[key] = true
	has, err := s.leadHasStage(ctx, lead.ID, c.name)
	if err != nil {
		return res, err
	}
	if has {
		res.Status = ImportRecorded
		return res, nil
	}
	// The time, as applyStage will judge it: refused rows are refused here,
	// before anything is written, so that they leave no history behind.
	kind := model.KindStage + ":" + c.name
	if c.shared {
		kind = model.KindQualified
	}
	why := ""
	if c.at.After(now.Add(capi.MaxClockSkew)) {
		why = "is in the future"
	} else if old, err := s.tooOldForAll(ctx, site, lead, eventSpec{Kind: kind, EventTime: c.at, ActionSource: c.source,
		Value: c.value, Currency: c.currency, FromStage: c.name}, now); err != nil {
		return res, err
	} else if old != "" {
		why = "is too old: " + old
	}
	if why != "" {
		res.Problem = "at " + c.at.Format("2006-01-02 15:04") + " " + why
		return res, nil
	}
	if !record {
		res.Status = ImportNew
		return res, nil
	}
	if _, err := s.AddLeadEvent(ctx, site, lead.ID, &in); err != nil {
		if msg, ok := inputProblem(err); ok {
			res.Problem = msg
			return res, nil
		}
		return res, err
	}
	res.Status = ImportAdded
	return res, nil
}

// leadHasStage tells whether the lead reached the stage already.
func (s *Service) leadHasStage(ctx context.Context, id model.LeadID, stage string) (bool, error) {
	list, err := s.db.LeadStagesByLead(ctx, id)
	for _, st := range list {
		if st.Stage == stage {
			return true, err
		}
	}
	return false, err
}

// inputProblem is the message of an error the row caused, as the API's 400
// would say it.
func inputProblem(err error) (string, bool) {
	var ie *model.InputError
	if !errors.As(err, &ie) {
		return "", false
	}
	return err.Error(), true
}

// refWhat names the keys of a reference, for "no lead has this ...".
func refWhat(ref LeadRef) string {
	var what []string
	if ref.ID != "" || ref.LeadAdsID != "" {
		what = append(what, "lead id")
	}
	if ref.Email != "" {
		what = append(what, "e-mail")
	}
	if ref.Phone != "" {
		what = append(what, "phone")
	}
	return strings.Join(what, " or ")
}

// stageNamed is the site's stage of that name, in any letter case.
func stageNamed(site *model.Site, name string) (model.StageEvent, bool) {
	name = strings.TrimSpace(name)
	for k, v := range site.Settings.Meta.Stages {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return model.StageEvent{}, false
}
