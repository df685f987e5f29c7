package web

import (
	"encoding/csv"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
)

// The stage import: the owner uploads a CSV exported from any CRM, says
// which column is what, sees what each row will do, and confirms. The file
// travels with the form from step to step (nothing is kept on the server
// before the confirmation), and each row is recorded as the stage API
// would record it.

const (
	// maxImportFile is the largest CSV taken: tens of thousands of rows.
	maxImportFile = 1 << 20
	// maxImportBody leaves room for the file sent back, URL-encoded, with
	// the preview and confirm steps.
	maxImportBody = 4 << 20
	// maxImportRows keeps one confirmation within a request's time.
	maxImportRows = 5000
)

// importRoles are the columns the owner maps, in the form's order.
var importRoles = []struct {
	Name, Label string
	guesses     []string
}{
	{"email", "E-mail", []string{"e-mail", "email", "e-posta", "eposta", "mail"}},
	{"phone", "Phone", []string{"phone", "telefon", "mobile", "gsm", "cep", "tel"}},
	{"lead", "Lead id (CleanAds or Meta Lead Ads)", []string{"lead id", "lead_id", "leadid", "leadgen"}},
	{"stage", "Stage", []string{"stage", "aşama", "asama", "durum", "status", "lifecycle"}},
	{"at", "Time", []string{"time", "date", "tarih", "zaman", "closed", "when", "at"}},
	{"value", "Value", []string{"value", "amount", "tutar", "değer", "deger", "revenue", "price", "fiyat"}},
	{"currency", "Currency", []string{"currency", "para birimi", "döviz", "doviz", "curr"}},
}

// importData is the import page's data.
type importData struct {
	Step  string // upload, map, preview, done
	Sites []*model.Site
	Site  *model.Site
	CSV   string
	// Header and Sample show the file in the mapping step; Roles the
	// column chosen for each role.
	Header  []string
	Sample  [][]string
	Roles   []importRole
	Rows    []importRowView
	Counts  importCounts
	Problem string
}

type importRole struct {
	Name, Label string
	Col         int // -1: none
}

type importCounts struct{ New, Added, Recorded, NoLead, Invalid int }

// importRowView is a row of the preview or the result.
type importRowView struct {
	Line                        int
	Key, Stage, At, Value       string
	LeadID, LeadName, Verdict   string
	Status, StatusText, Problem string
	OK                          bool
}

// adminImport shows the first step: the site and the file.
func (s *Server) adminImport(w http.ResponseWriter, r *http.Request) {
	p := s.newPage(r, "inbox", "Import stages")
	sites, err := s.importSites(r)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	p.D = importData{Step: "upload", Sites: sites}
	s.render(w, r, http.StatusOK, "import", p)
}

// adminImportPost runs a step: upload (read the file, guess the columns),
// preview (what each row will do) or confirm (record).
func (s *Server) adminImportPost(w http.ResponseWriter, r *http.Request) {
	p := s.newPage(r, "inbox", "Import stages")
	sites, err := s.importSites(r)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	d := importData{Step: "upload", Sites: sites}
	fail := func(msg string) {
		d.Problem = msg
		p.D = d
		s.render(w, r, http.StatusBadRequest, "import", p)
	}
	step := r.PostFormValue("step")
	for _, site := range sites {
		if string(site.ID) == r.PostFormValue("site") {
			d.Site = site
		}
	}
	if d.Site == nil {
		fail(tr(p.Lang, "Choose a site."))
		return
	}
	if step == "upload" {
		f, _, err := r.FormFile("file")
		if err != nil {
			fail(tr(p.Lang, "Choose a CSV file."))
			return
		}
		b, err := io.ReadAll(io.LimitReader(f, maxImportFile+1))
		f.Close()
		if err != nil || len(b) > maxImportFile {
			fail(tr(p.Lang, "The file is larger than 1 MB: split it."))
			return
		}
		d.CSV = string(b)
	} else {
		d.CSV = r.PostFormValue("csv")
	}
	header, rows, problem := readImportCSV(d.CSV)
	if problem != "" {
		fail(tr(p.Lang, problem))
		return
	}
	d.Header = header
	for _, role := range importRoles {
		col := guessColumn(header, role.guesses)
		if step != "upload" {
			col = -1
			if n, err := strconv.Atoi(r.PostFormValue("col_" + role.Name)); err == nil && n >= 0 && n < len(header) {
				col = n
			}
		}
		d.Roles = append(d.Roles, importRole{Name: role.Name, Label: tr(p.Lang, role.Label), Col: col})
	}
	if step == "upload" {
		d.Step, d.Sample = "map", rows[:min(len(rows), 3)]
		p.D = d
		s.render(w, r, http.StatusOK, "import", p)
		return
	}
	cols := map[string]int{}
	for _, role := range d.Roles {
		cols[role.Name] = role.Col
	}
	if cols["stage"] < 0 || (cols["email"] < 0 && cols["phone"] < 0 && cols["lead"] < 0) {
		d.Step, d.Sample = "map", rows[:min(len(rows), 3)]
		d.Problem = tr(p.Lang, "Choose the stage's column and at least one of e-mail, phone or lead id.")
		p.D = d
		s.render(w, r, http.StatusBadRequest, "import", p)
		return
	}
	in := make([]app.ImportRow, 0, len(rows))
	for i, row := range rows {
		in = append(in, s.importRow(i+2, row, cols))
	}
	record := step == "confirm"
	results, err := s.app.StageImport(r.Context(), d.Site, in, record)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	for i, res := range results {
		v := importRowView{Line: res.Line, Key: cell(rows[i], cols["email"], cols["phone"], cols["lead"]),
			Stage: cell(rows[i], cols["stage"]), At: cell(rows[i], cols["at"]), Value: strings.TrimSpace(cell(rows[i], cols["value"]) + " " + cell(rows[i], cols["currency"])),
			Status: res.Status, Problem: res.Problem}
		if res.Stage != "" {
			v.Stage = res.Stage
		}
		if in[i].Stage.At != "" {
			if t, err := time.Parse(time.RFC3339, in[i].Stage.At); err == nil {
				v.At = s.when(t)
			}
		}
		if res.Lead != nil {
			v.LeadID, v.LeadName, v.Verdict = string(res.Lead.ID), leadName(p.Lang, res.Lead), string(res.Lead.Verdict)
		}
		switch res.Status {
		case app.ImportNew:
			d.Counts.New++
			v.OK, v.StatusText = true, tr(p.Lang, "will be recorded")
		case app.ImportAdded:
			d.Counts.Added++
			v.OK, v.StatusText = true, tr(p.Lang, "recorded")
		case app.ImportRecorded:
			d.Counts.Recorded++
			v.StatusText = tr(p.Lang, "already recorded: nothing changes")
		case app.ImportRepeat:
			d.Counts.Recorded++
			v.StatusText = tr(p.Lang, "same as an earlier row: nothing changes")
		case app.ImportNoLead:
			d.Counts.NoLead++
			v.StatusText = tr(p.Lang, "no lead matches")
		default:
			d.Counts.Invalid++
			v.StatusText = tr(p.Lang, "not recorded")
		}
		d.Rows = append(d.Rows, v)
	}
	d.Step = "preview"
	if record {
		d.Step = "done"
		s.log.InfoContext(r.Context(), "stage import", "site", string(d.Site.ID), "rows", len(rows), "added", d.Counts.Added,
			"unchanged", d.Counts.Recorded, "no_lead", d.Counts.NoLead, "invalid", d.Counts.Invalid,
			"user", string(adminFrom(r.Context()).user.ID))
	}
	p.D = d
	s.render(w, r, http.StatusOK, "import", p)
}

// importSites are the sites the user may import stages for: those they
// see that have stages.
func (s *Server) importSites(r *http.Request) ([]*model.Site, error) {
	sites, err := s.siteList(r)
	if err != nil {
		return nil, err
	}
	out := sites[:0:0]
	for _, site := range sites {
		if len(site.Settings.Meta.Stages) > 0 {
			out = append(out, site)
		}
	}
	return out, nil
}

// importRow turns a CSV row into a stage call by the owner's columns.
func (s *Server) importRow(line int, row []string, cols map[string]int) app.ImportRow {
	out := app.ImportRow{Line: line}
	out.Ref.Email, out.Ref.Phone = cell(row, cols["email"]), cell(row, cols["phone"])
	if id := cell(row, cols["lead"]); strings.HasPrefix(id, "ld_") {
		out.Ref.ID = id
	} else {
		out.Ref.LeadAdsID = id
	}
	if out.Ref.Email == "" && out.Ref.Phone == "" && out.Ref.ID == "" && out.Ref.LeadAdsID == "" {
		out.Problem = "the row names no lead: its e-mail, phone and lead id are empty"
		return out
	}
	out.Stage.Stage = cell(row, cols["stage"])
	if v := cell(row, cols["at"]); v != "" {
		t, ok := parseImportTime(v, s.loc)
		if !ok {
			out.Problem = "the time " + strconv.Quote(v) + " is in no known form: write it like 2026-12-02 15:04 or 02.12.2026 15:04"
			return out
		}
		out.Stage.At = t.Format(time.RFC3339)
	}
	if v := cell(row, cols["value"]); v != "" {
		f, ok := parseImportValue(v)
		if !ok {
			out.Problem = "the value " + strconv.Quote(v) + " is not a number"
			return out
		}
		out.Stage.Value = &f
	}
	out.Stage.Currency = strings.ToUpper(cell(row, cols["currency"]))
	return out
}

// cell is the first non-empty of the row's cells at the columns (-1: none),
// trimmed.
func cell(row []string, cols ...int) string {
	for _, c := range cols {
		if c >= 0 && c < len(row) {
			if v := strings.TrimSpace(row[c]); v != "" {
				return v
			}
		}
	}
	return ""
}

// readImportCSV reads a CSV as spreadsheets and CRMs write it: with or
// without a byte order mark, separated by commas, semicolons (Excel in
// Turkish and most of Europe) or tabs; the first row names the columns. It
// returns a problem for the owner (an English key of tr) when it cannot.
func readImportCSV(text string) (header []string, rows [][]string, problem string) {
	text = strings.TrimPrefix(text, "\uFEFF")
	if !utf8.ValidString(text) {
		return nil, nil, "The file is not UTF-8 text: save it from the spreadsheet as \"CSV UTF-8\"."
	}
	first, _, _ := strings.Cut(text, "\n")
	sep, most := ',', strings.Count(first, ",")
	for _, c := range []rune{';', '\t'} {
		if n := strings.Count(first, string(c)); n > most {
			sep, most = c, n
		}
	}
	cr := csv.NewReader(strings.NewReader(text))
	cr.Comma, cr.FieldsPerRecord, cr.LazyQuotes = sep, -1, true
	all, err := cr.ReadAll()
	if err != nil {
		return nil, nil, "The file could not be read as CSV."
	}
	// Rows with nothing in them (a spreadsheet's trailing lines) are
	// dropped.
	for _, row := range all {
		if strings.TrimSpace(strings.Join(row, "")) != "" {
			rows = append(rows, row)
		}
	}
	if len(rows) < 2 {
		return nil, nil, "The file has no rows under its header."
	}
	if len(rows)-1 > maxImportRows {
		return nil, nil, "The file has more than 5000 rows: split it."
	}
	header = rows[0]
	for i := range header {
		header[i] = strings.TrimSpace(header[i])
	}
	return header, rows[1:], ""
}

// guessColumn is the first column whose header names the role, or -1.
func guessColumn(header []string, guesses []string) int {
	for _, g := range guesses {
		for i, h := range header {
			h = strings.ToLower(h)
			if h == g || (len(g) > 3 && strings.Contains(h, g)) {
				return i
			}
		}
	}
	return -1
}

// importTimeLayouts are the forms of a time the import reads, in the
// admin's zone unless the time names its own.
var importTimeLayouts = []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04",
	"2006-01-02", "02.01.2006 15:04:05", "02.01.2006 15:04", "02.01.2006"}

func parseImportTime(v string, loc *time.Location) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, true
	}
	for _, l := range importTimeLayouts {
		if t, err := time.ParseInLocation(l, v, loc); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// parseImportValue reads an amount as people write it: "6000", "6.000,50",
// "6,000.50", "₺ 6.000", "12500,5". Of two separators the last is the
// decimal one; a lone one followed by exactly three digits groups
// thousands.
func parseImportValue(v string) (float64, bool) {
	v = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || strings.ContainsRune("₺€$£", r) {
			return -1
		}
		return r
	}, v)
	for _, code := range []string{"TRY", "TL", "EUR", "USD", "GBP"} {
		v = strings.TrimSuffix(strings.TrimPrefix(v, code), code)
	}
	dot, comma := strings.LastIndex(v, "."), strings.LastIndex(v, ",")
	switch {
	case dot >= 0 && comma >= 0:
		dec, group := ".", ","
		if comma > dot {
			dec, group = ",", "."
		}
		v = strings.ReplaceAll(strings.ReplaceAll(v, group, ""), dec, ".")
	case dot >= 0 || comma >= 0:
		sep := "."
		if comma >= 0 {
			sep = ","
		}
		if i := strings.LastIndex(v, sep); strings.Count(v, sep) > 1 || len(v)-i-1 == 3 {
			v = strings.ReplaceAll(v, sep, "")
		} else {
			v = strings.Replace(v, sep, ".", 1)
		}
	}
	f, err := strconv.ParseFloat(v, 64)
	return f, err == nil
}

// limitBodyTo is limitBody with a larger limit, for the import's upload.
func limitBodyTo(n int64, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, n)
		h.ServeHTTP(w, r)
	})
}
