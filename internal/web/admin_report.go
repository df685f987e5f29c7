package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
)

// reportMaxDays caps the period of the campaign report: it reads the
// period's leads.
const reportMaxDays = 366

// reportPresets are the periods offered in one click, in days up to today.
var reportPresets = []int{7, 30, 90}

// reportData is the campaign report page: one site's period.
type reportData struct {
	Sites    []*model.Site
	Site     *model.Site
	From, To string // the period's first and last day (inclusive), 2006-01-02
	Days     int
	Presets  []reportPreset
	Problem  string
	Stages   []string
	Rows     []reportRow
	Total    reportRow
	Funnel   funnelChart
	Revenue  string
	HasLeads bool
}

// reportPreset is a one-click period.
type reportPreset struct {
	Label, URL string
	Current    bool
}

// reportRow is a row of the report as shown: a campaign, ad set or ad.
type reportRow struct {
	Level int
	// Name is what the row is called; Title its full name and id (the name
	// may be cut on a phone); Sub says what kind of row it is or where its
	// leads came from.
	Name, Title, Sub       string
	Leads, Clean, Won      int
	JunkPct, Junk, Revenue string
	Reasons                []string
	Stages                 []int
}

// funnelChart is the site's funnel as horizontal SVG bars.
type funnelChart struct {
	W, H  int
	Steps []funnelStep
}

// funnelStep is one bar of the funnel.
type funnelStep struct {
	Label, Value string
	N            int64
	Y, W         int
	Class        string
}

// adminReport shows which ads bring real customers: a site's leads of a
// period by campaign, ad set and ad, each with its junk, clean, stages, won
// deals and revenue, and the site's funnel.
func (s *Server) adminReport(w http.ResponseWriter, r *http.Request) {
	p := s.newPage(r, "dashboard", "Campaign report")
	ctx := r.Context()
	sites, err := s.siteList(r)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	d := reportData{Sites: sites}
	q := r.URL.Query()
	for _, site := range sites {
		if d.Site == nil || string(site.ID) == q.Get("site") {
			d.Site = site
		}
	}
	if d.Site == nil {
		p.D = d
		s.render(w, r, http.StatusOK, "report", p)
		return
	}
	now := s.now().In(s.loc)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, s.loc)
	first, last := today.AddDate(0, 0, -(dashboardDays-1)), today
	if n, err := strconv.Atoi(q.Get("days")); err == nil && n > 0 && n <= reportMaxDays {
		first = today.AddDate(0, 0, -(n - 1))
	}
	if q.Get("from") != "" || q.Get("to") != "" {
		f, ferr := time.ParseInLocation(time.DateOnly, q.Get("from"), s.loc)
		t, terr := time.ParseInLocation(time.DateOnly, q.Get("to"), s.loc)
		switch {
		case ferr != nil || terr != nil:
			d.Problem = tr(p.Lang, "Give the period's first and last day.")
		case t.Before(f):
			d.Problem = tr(p.Lang, "The last day is before the first.")
		case t.Sub(f) > reportMaxDays*24*time.Hour:
			d.Problem = tr(p.Lang, "The period is longer than %d days.", reportMaxDays)
		default:
			first, last = f, t
		}
	}
	d.From, d.To = first.Format(time.DateOnly), last.Format(time.DateOnly)
	d.Days = int(last.Sub(first).Hours()/24+0.5) + 1
	for _, n := range reportPresets {
		v := url.Values{"site": {string(d.Site.ID)}, "days": {strconv.Itoa(n)}}
		d.Presets = append(d.Presets, reportPreset{Label: tr(p.Lang, "last %d days", n), URL: "/admin/report?" + v.Encode(),
			Current: last.Equal(today) && first.Equal(today.AddDate(0, 0, -(n-1)))})
	}
	rep, err := s.app.CampaignReport(ctx, d.Site, first, last.AddDate(0, 0, 1))
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	d.HasLeads = rep.Total.Leads > 0
	d.Stages = rep.Stages
	for _, row := range rep.Rows {
		d.Rows = append(d.Rows, reportRowView(p.Lang, rep, row))
	}
	d.Total = reportRowView(p.Lang, rep, app.ReportRow{Name: tr(p.Lang, "All leads"), Figures: rep.Total})
	d.Total.Sub = ""
	d.Funnel = drawFunnel(p.Lang, rep)
	d.Revenue = moneyText(p.Lang, rep.Total.Revenue)
	p.Title = tr(p.Lang, "Campaign report") + " · " + d.Site.Name
	p.D = d
	s.render(w, r, http.StatusOK, "report", p)
}

// reportRowView words a row of the report in lang.
func reportRowView(lang string, rep *app.Report, row app.ReportRow) reportRow {
	v := reportRow{Level: row.Level, Name: row.Name, Leads: row.Leads, Clean: row.Clean, Won: row.Won,
		JunkPct: pctText(row.Junk, row.Leads), Junk: strconv.Itoa(row.Junk), Revenue: moneyText(lang, row.Revenue)}
	switch {
	case row.Click != "":
		v.Name = tr(lang, "No campaign")
		v.Sub = clickText(lang, row.Click)
	case row.Level == 0:
		v.Sub = tr(lang, "Campaign")
	case row.Level == 1:
		v.Sub = tr(lang, "Ad set")
	default:
		v.Sub = tr(lang, "Ad")
	}
	if v.Name == "" {
		v.Name = row.ID
	}
	v.Title = v.Name
	if row.ID != "" && row.ID != v.Name {
		v.Title += " (" + tr(lang, "id %s", row.ID) + ")"
	}
	for _, rc := range row.JunkReasons {
		v.Reasons = append(v.Reasons, fmt.Sprintf("%s (%d)", reasonName(lang, rc.Code), rc.N))
	}
	for _, st := range rep.Stages {
		v.Stages = append(v.Stages, row.Stages[st])
	}
	return v
}

// pctText is n of all as a whole percentage, "–" of none.
func pctText(n, all int) string {
	if all == 0 {
		return "–"
	}
	return fmt.Sprintf("%d%%", (n*100+all/2)/all)
}

// clickText says where the click of leads without a campaign came from.
func clickText(lang, click string) string {
	switch click {
	case app.ClickMeta:
		return tr(lang, "Meta ad click")
	case app.ClickGoogle:
		return tr(lang, "Google ad click")
	case app.ClickTikTok:
		return tr(lang, "TikTok ad click")
	}
	return tr(lang, "organic or direct")
}

// moneyText writes amounts in their currencies, the first first: "6,000
// EUR · 1,500.50 TRY" (Turkish: "6.000 EUR · 1.500,50 TRY"); "–" for none.
func moneyText(lang string, ms []app.Money) string {
	if len(ms) == 0 {
		return "–"
	}
	parts := make([]string, 0, len(ms))
	for _, m := range ms {
		// A no-break space keeps an amount with its currency.
		parts = append(parts, amountText(lang, m.Cents)+"\u00a0"+m.Currency)
	}
	return strings.Join(parts, " · ")
}

// amountText writes hundredths with thousands grouped, and the fraction
// only when there is one.
func amountText(lang string, cents int64) string {
	group, dec := ",", "."
	if lang == "tr" {
		group, dec = ".", ","
	}
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	whole := strconv.FormatInt(cents/100, 10)
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteString(group)
		}
		b.WriteRune(c)
	}
	if f := cents % 100; f != 0 {
		fmt.Fprintf(&b, "%s%02d", dec, f)
	}
	return sign + b.String()
}

// drawFunnel lays out the site's funnel as bars: visits, leads, clean, each
// stage (won last), each as wide as its share of the widest.
func drawFunnel(lang string, rep *app.Report) funnelChart {
	c := funnelChart{W: 360}
	type step struct {
		label, class string
		n            int64
	}
	steps := []step{{tr(lang, "visits"), "visits", rep.Visits}, {tr(lang, "leads"), "leads", int64(rep.Total.Leads)},
		{tr(lang, "clean"), "clean", int64(rep.Total.Clean)}}
	for _, st := range rep.Stages {
		steps = append(steps, step{stageName(lang, st), "stage", int64(rep.Total.Stages[st])})
	}
	var top int64 = 1
	for _, st := range steps {
		top = max(top, st.n)
	}
	// Each step is its label and value on a line, its bar under them: a
	// narrow drawing that stays legible scaled down to a phone.
	const rowH = 50
	plot := c.W
	// Leads say their share of the visits; the rest their share of the
	// leads (stages need not follow one another).
	for i, st := range steps {
		w := int(int64(plot) * st.n / top)
		if st.n > 0 && w < 2 {
			w = 2
		}
		value := strconv.FormatInt(st.n, 10)
		switch {
		case i == 1 && rep.Visits > 0:
			value += " · " + tr(lang, "%s of visits", pctText(int(st.n), int(rep.Visits)))
		case i > 1 && rep.Total.Leads > 0:
			value += " · " + tr(lang, "%s of leads", pctText(int(st.n), rep.Total.Leads))
		}
		c.Steps = append(c.Steps, funnelStep{Label: st.label, Value: value, N: st.n, Y: 8 + i*rowH, W: w, Class: st.class})
	}
	c.H = 8 + len(steps)*rowH
	return c
}

// stageName is a CRM stage's name as the owner reads it: the usual ones in
// words, others as the CRM calls them.
func stageName(lang, st string) string {
	switch st {
	case model.StageQualified:
		return tr(lang, "qualified")
	case model.StageWon:
		return tr(lang, "won")
	case "meeting":
		return tr(lang, "meeting")
	}
	return st
}

// reasonName is a reason code as a few words, for a count of leads.
func reasonName(lang, code string) string {
	if k, ok := reasonNames[code]; ok {
		return tr(lang, k)
	}
	w := strings.ReplaceAll(strings.ToLower(code), "_", " ")
	if w == "" {
		return tr(lang, "no reason given")
	}
	return strings.ToUpper(w[:1]) + w[1:]
}

// reasonNames are the reason codes' short names (English keys of tr).
var reasonNames = map[string]string{
	"HONEYPOT":                "Trap field filled",
	"DUPLICATE":               "Same person again",
	"TOKEN_FORGED":            "Forged form token",
	"TOKEN_REPLAYED":          "Form token used again",
	"TOKEN_EXPIRED":           "Form token expired",
	"FILL_TOO_FAST":           "Filled too fast",
	"FILL_TIME_MISSING":       "No fill time",
	"PHONE_INVALID":           "Invalid phone",
	"PHONE_PATTERN":           "Fake phone pattern",
	"PHONE_FICTIONAL":         "Fictional phone",
	"PHONE_PREMIUM":           "Premium-rate phone",
	"PHONE_BUSINESS":          "A business's phone",
	"PHONE_MISSING":           "No phone",
	"NO_VALID_CONTACT":        "No valid contact",
	"EMAIL_INVALID":           "Invalid e-mail",
	"EMAIL_DISPOSABLE":        "Disposable e-mail",
	"TEST_ENTRY":              "Test entry",
	"GIBBERISH":               "Gibberish",
	"VENDOR_PITCH":            "Vendor pitch",
	"JOB_APPLICATION":         "Job application",
	"MESSAGE_HAS_LINK":        "Link in the message",
	"MOSTLY_LINKS":            "Mostly links",
	"PRICE_ONLY":              "Price question only",
	"NO_MESSAGE":              "No message",
	"MODEL_OFFER":             "An offer to the business",
	"MODEL_JOB":               "Looking for work",
	"MODEL_NONSENSE":          "Typed without meaning",
	"NO_REQUEST_EVIDENCE":     "Nothing shows a request",
	"TEXT_MODEL":              "Like leads you marked junk",
	"OWNER_JUNK":              "You marked it junk",
	"EVIDENCE_WHATSAPP_REPLY": "WhatsApp reply",
	"EVIDENCE_CALL":           "Call",
}
