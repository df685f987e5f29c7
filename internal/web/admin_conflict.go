package web

import (
	"context"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// A conflict is a lead the owner called junk that the CRM has since moved
// to a stage: the owner's word wins, the stages wait, and the inbox and the
// lead page say so with one click to change the word.

// conflictText says what the CRM and the owner disagree on, naming the
// lead's latest stage; empty when they do not.
func conflictText(lang string, l *model.Lead, stages []model.LeadStage) string {
	if !l.OwnerSaidJunk() || len(stages) == 0 {
		return ""
	}
	latest := stages[0]
	for _, st := range stages[1:] {
		if !st.At.Before(latest.At) {
			latest = st
		}
	}
	return tr(lang, "The CRM says %s; you said junk.", latest.Stage)
}

// conflicts returns the conflict text of each lead of a page that has one,
// reading the stages of the owner's junk leads only.
func (s *Server) conflicts(ctx context.Context, lang string, leads []*model.Lead) (map[model.LeadID]string, error) {
	var ids []model.LeadID
	for _, l := range leads {
		if l.OwnerSaidJunk() {
			ids = append(ids, l.ID)
		}
	}
	out := map[model.LeadID]string{}
	if len(ids) == 0 {
		return out, nil
	}
	stages, err := s.db.LeadStagesByLeads(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, l := range leads {
		if text := conflictText(lang, l, stages[l.ID]); text != "" {
			out[l.ID] = text
		}
	}
	return out, nil
}

// heldNote says which held stages the owner's "real customer" sends, and
// which are past Meta's window; empty without held stages.
func heldNote(lang string, stages []model.LeadStage, now time.Time) string {
	var send, late []string
	for _, st := range stages {
		name := st.EventName + " (" + st.Stage + ")"
		if now.Sub(st.At) > model.MaxEventAge-time.Hour {
			late = append(late, name)
		} else {
			send = append(send, name)
		}
	}
	var parts []string
	if len(send) > 0 {
		parts = append(parts, tr(lang, "The stages held back are sent too: %s.", strings.Join(send, ", ")))
	}
	if len(late) > 0 {
		parts = append(parts, tr(lang, "Too old for Meta, recorded here only: %s.", strings.Join(late, ", ")))
	}
	return strings.Join(parts, " ")
}
