package web

import (
	"context"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
	"github.com/cleanads/cleanads/internal/store"
)

// learningData is the dashboard's "what your word teaches" card: for each
// reason code, how the owner's word went on the leads it was given to, and
// what the site's text model is doing.
type learningData struct {
	Totals store.AgreementTotals
	Codes  []agreementRow
	// Model is the text model's state in a sentence.
	Model string
}

// agreementRow is one reason code's figures, with the sentence an owner
// reads after the code ("63 leads, 22 turned out real customers").
type agreementRow struct {
	store.CodeAgreement
	// Label names the reason in a few words; the code stays in a title
	// for support.
	Label, Summary string
}

// learning reads the owner's word on the site's leads since the given time.
func (s *Server) learning(ctx context.Context, lang string, site *model.Site, since time.Time) (learningData, error) {
	var d learningData
	var err error
	if d.Totals, err = s.db.AgreementTotals(ctx, site.ID, since); err != nil {
		return d, err
	}
	codes, err := s.db.ReasonAgreement(ctx, site.ID, since)
	if err != nil {
		return d, err
	}
	for _, c := range codes {
		d.Codes = append(d.Codes, agreementRow{CodeAgreement: c, Label: qualify.Label(c.Code, lang), Summary: agreementSummary(lang, c)})
	}
	st, err := s.app.TextModelStatus(ctx, site)
	if err != nil {
		return d, err
	}
	maxPts := site.Settings.Qualify.TextModel.MaxPoints
	if maxPts == 0 {
		maxPts = qualify.DefaultTextMaxPoints
	}
	d.Model = textModelSentence(lang, st, maxPts)
	return d, nil
}

// agreementSummary is a code's figures as an owner reads them after the
// code: "PRICE_ONLY: 63 leads, 22 turned out real customers (5 shown by the
// CRM)".
func agreementSummary(lang string, c store.CodeAgreement) string {
	var s string
	switch {
	case c.Leads == 1 && c.Overturned == 0:
		s = tr(lang, "1 lead, overturned 0")
	case c.Overturned == 0:
		s = tr(lang, "%d leads, overturned 0", c.Leads)
	case c.Leads == 1:
		s = tr(lang, "1 lead, it turned out a real customer")
	case c.Overturned == 1:
		s = tr(lang, "%d leads, 1 turned out a real customer", c.Leads)
	default:
		s = tr(lang, "%d leads, %d turned out real customers", c.Leads, c.Overturned)
	}
	if c.CRM > 0 {
		s += " " + tr(lang, "(%d shown by the CRM)", c.CRM)
	}
	return s
}

// textModelSentence says what the text model is doing.
func textModelSentence(lang string, st app.TextModelStatus, maxPts int) string {
	switch {
	case st.Off:
		return tr(lang, "The text model is off for this site (qualify.text_model.enabled: false).")
	case st.Judged == 0:
		return tr(lang, "The text model has nothing to learn from yet: mark leads as junk or as real customers.")
	case !st.Live && st.Judged == 1:
		return tr(lang, "The text model runs in shadow: it learnt from 1 lead you judged and counts from %d. Its reason shows on each lead with 0 points.", st.MinJudged)
	case !st.Live:
		return tr(lang, "The text model runs in shadow: it learnt from %d leads you judged and counts from %d. Its reason shows on each lead with 0 points.", st.Judged, st.MinJudged)
	}
	return tr(lang, "The text model counts: it learnt from %d leads you judged (%d junk) and gives or takes up to %d points.", st.Judged, st.Junk, maxPts)
}
