package web

import (
	"encoding/csv"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// exportPage is how many leads the CSV export reads at a time.
const exportPage = 500

// exportHeader names the export's columns.
var exportHeader = []string{"id", "site", "received_at", "verdict", "score", "decided_by", "reasons",
	"name", "email", "phone", "message", "source", "page_url", "external_id", "lead_id", "stages"}

// adminExport answers the inbox, with its filters (site, verdict, search),
// as a CSV file: every lead that matches, newest first, UTF-8 with a byte
// order mark (so spreadsheet programs read Turkish letters right) and a
// header row. Cells a spreadsheet would take for a formula are escaped.
func (s *Server) adminExport(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := store.LeadFilter{Site: model.SiteID(q.Get("site")), Only: onlySites(r), Search: strings.TrimSpace(q.Get("q")),
		Limit: exportPage}
	switch v := model.Verdict(q.Get("verdict")); v {
	case model.VerdictClean, model.VerdictReview, model.VerdictJunk:
		f.Verdict = v
	}
	// As the inbox searches.
	if f.Search != "" {
		sites, err := s.siteList(r)
		if err != nil {
			s.adminFail(w, r, err)
			return
		}
		searchBy(&f, sites)
	}
	// The first page is read before anything is written, so that a failing
	// database is an error page, not a truncated file.
	leads, err := s.db.LeadList(r.Context(), f)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	name := "cleanads-leads-" + s.now().In(s.loc).Format("2006-01-02") + ".csv"
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte("\uFEFF"))
	cw := csv.NewWriter(w)
	cw.Write(exportHeader)
	for {
		ids := make([]model.LeadID, len(leads))
		for i, l := range leads {
			ids[i] = l.ID
		}
		stages, err := s.db.LeadStagesByLeads(r.Context(), ids)
		if err != nil {
			// The header is sent: the file ends here, and the log says why.
			s.log.ErrorContext(r.Context(), "csv export", "err", err)
			break
		}
		for _, l := range leads {
			cw.Write(csvSafe(s.exportRow(l, stages[l.ID])))
		}
		if len(leads) < exportPage {
			break
		}
		last := leads[len(leads)-1]
		f.Before, f.BeforeID = last.ReceivedAt, last.ID
		if leads, err = s.db.LeadList(r.Context(), f); err != nil {
			s.log.ErrorContext(r.Context(), "csv export", "err", err)
			break
		}
	}
	cw.Flush()
}

func (s *Server) exportRow(l *model.Lead, stages []model.LeadStage) []string {
	codes := make([]string, 0, len(l.Reasons))
	for _, r := range l.Reasons {
		codes = append(codes, r.Code)
	}
	var st []string
	for _, x := range stages {
		v := x.Stage + " " + x.At.In(s.loc).Format(time.RFC3339)
		if x.Value != nil {
			v += " " + strconv.FormatFloat(*x.Value, 'f', -1, 64) + " " + x.Currency
		}
		st = append(st, v)
	}
	return []string{string(l.ID), string(l.SiteID), l.ReceivedAt.In(s.loc).Format(time.RFC3339), string(l.Verdict),
		strconv.Itoa(l.Score), l.DecidedBy, strings.Join(codes, " "), leadFullName(l), l.Email, l.Phone, l.Message,
		l.Source, l.PageURL, l.ExternalID, l.LeadAdsID, strings.Join(st, "; ")}
}

// leadFullName is the lead's name as given, or its first and last names.
func leadFullName(l *model.Lead) string {
	if l.Name != "" {
		return l.Name
	}
	return strings.TrimSpace(l.FirstName + " " + l.LastName)
}

// csvSafe escapes cells a spreadsheet would run as a formula (those that
// start with = + - @, or a tab or carriage return that hides one) with a
// leading apostrophe, as OWASP advises: a lead's name or message is
// written by anyone on the internet.
func csvSafe(row []string) []string {
	for i, v := range row {
		if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
			row[i] = "'" + v
		}
	}
	return row
}
