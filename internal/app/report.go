package app

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// Where the click of a lead without a campaign came from.
const (
	ClickMeta    = store.ClickMeta
	ClickGoogle  = store.ClickGoogle
	ClickTikTok  = store.ClickTikTok
	ClickOrganic = store.ClickOrganic // no ad click known: organic or direct
)

// ReportTopReasons is how many of the reasons leads were judged junk a row
// names.
const ReportTopReasons = 3

// Money is an amount in one currency, in hundredths.
type Money struct {
	Currency string
	Cents    int64
}

// ReasonCount is how many junk leads a reason was the main one of.
type ReasonCount struct {
	Code string
	N    int
}

// Figures are what became of a group of leads.
type Figures struct {
	Leads, Clean, Review, Junk int
	// JunkReasons are the main reasons of the junk leads, most first, at
	// most ReportTopReasons.
	JunkReasons []ReasonCount
	// Stages is how many of the leads reached each CRM stage (so far).
	Stages map[string]int
	// Won is how many reached the stage model.StageWon; Revenue adds up
	// the values of those stages, one amount per currency (the site's
	// first, then by code).
	Won     int
	Revenue []Money

	reasons map[string]int
	revenue map[string]int64
}

// ReportRow is one row of the campaign report: a campaign, or an ad set or
// ad of the campaign above it.
type ReportRow struct {
	// Level is 0 for a campaign, 1 for an ad set, 2 for an ad (an ad
	// whose ad set is unknown sits under its campaign at level 2).
	Level int
	// Name is what the platform or the campaign's UTM tags call it, ID its
	// id when known; both empty for the leads without a campaign.
	Name, ID string
	// Click is where the leads without a campaign came from (ClickMeta,
	// ...); empty on the other rows.
	Click string
	Figures
}

// Report is the campaign report and funnel of a site over a period.
type Report struct {
	From, To time.Time
	// Currency is the site's: its won stage's, else another stage's.
	Currency string
	// Stages are the stages to show, in the funnel's order: qualified
	// first, won last, the others by how many leads reached them.
	Stages []string
	// Rows are the campaigns (the most won, then clean, then leads first),
	// each followed by its ad sets and ads, then the leads without a
	// campaign by where they came from.
	Rows []ReportRow
	// Total is the site's figures over the period; Visits its visits, from
	// the counters of the UTC days the period touches.
	Total  Figures
	Visits int64
}

// CampaignReport builds the campaign report and funnel of a site for the
// leads received from from (inclusive) to to (exclusive). The UTC days the
// period holds whole it reads from the campaign report's counters
// (model.CounterReport*, kept per site and day); only the leads of the
// part days at its ends (a period in another time zone than UTC) are read
// one by one (store.ReportLeads). It never reads every lead of the period.
func (s *Service) CampaignReport(ctx context.Context, site *model.Site, from, to time.Time) (*Report, error) {
	first, last := model.Day(from), model.Day(to.Add(-time.Millisecond))
	cs, err := s.db.Counters(ctx, site.ID, first, last)
	if err != nil {
		return nil, err
	}
	// The whole days: from the first midnight at or after from to the
	// last at or before to.
	whole1, whole2 := model.Day(from.Add(24*time.Hour-time.Millisecond)), model.Day(to)-1
	b := newReportBuilder(site)
	if whole1 > whole2 {
		leads, err := s.db.ReportLeads(ctx, site.ID, from, to)
		if err != nil {
			return nil, err
		}
		for _, l := range leads {
			b.lead(l)
		}
	} else {
		head, err := s.db.ReportLeads(ctx, site.ID, from, model.DayStart(whole1))
		if err != nil {
			return nil, err
		}
		tail, err := s.db.ReportLeads(ctx, site.ID, model.DayStart(whole2+1), to)
		if err != nil {
			return nil, err
		}
		for _, l := range head {
			b.lead(l)
		}
		rcs, err := s.db.ReportCounters(ctx, site.ID, whole1, whole2)
		if err != nil {
			return nil, err
		}
		for _, c := range rcs {
			b.counter(c)
		}
		for _, l := range tail {
			b.lead(l)
		}
	}
	r := b.finish()
	r.From, r.To = from, to
	r.Visits = cs.Sum(model.CounterVisits, "*", first, last)
	return r, nil
}

// BuildReport groups the leads (store.ReportLeads) by campaign, ad set and
// ad, and sums each group and the site.
func BuildReport(site *model.Site, leads []*store.ReportLead) *Report {
	b := newReportBuilder(site)
	for _, l := range leads {
		b.lead(l)
	}
	return b.finish()
}

// reportBuilder gathers a report's rows from leads and from the campaign
// report's counters, in the order their leads came.
type reportBuilder struct {
	site *model.Site
	r    *Report
	top  map[string]*reportNode
	seen map[string]int
}

type reportNode struct {
	row  ReportRow
	kids map[string]*reportNode
}

func newReportBuilder(site *model.Site) *reportBuilder {
	return &reportBuilder{site: site, r: &Report{Currency: SiteCurrency(site)}, top: map[string]*reportNode{}, seen: map[string]int{}}
}

// place applies fn to the site's figures and to those of the rows a lead
// of attribution a counts in: its campaign, ad set and ad, or where the
// click came from.
func (b *reportBuilder) place(a Attribution, fn func(*Figures)) {
	child := func(m map[string]*reportNode, key string, row ReportRow) *reportNode {
		n := m[key]
		if n == nil {
			n = &reportNode{row: row, kids: map[string]*reportNode{}}
			m[key] = n
		}
		return n
	}
	fn(&b.r.Total)
	if a.Campaign.Empty() {
		n := child(b.top, "\x00"+a.Click, ReportRow{Click: a.Click})
		fn(&n.row.Figures)
		if !a.Ad.Empty() {
			fn(&child(n.kids, a.Ad.Key(), ReportRow{Level: 2, Name: a.Ad.Name, ID: a.Ad.ID}).row.Figures)
		}
		return
	}
	n := child(b.top, a.Campaign.Key(), ReportRow{Name: a.Campaign.Name, ID: a.Campaign.ID})
	fn(&n.row.Figures)
	under := n
	if !a.AdSet.Empty() {
		under = child(n.kids, a.AdSet.Key(), ReportRow{Level: 1, Name: a.AdSet.Name, ID: a.AdSet.ID})
		fn(&under.row.Figures)
	}
	if !a.Ad.Empty() {
		fn(&child(under.kids, a.Ad.Key(), ReportRow{Level: 2, Name: a.Ad.Name, ID: a.Ad.ID}).row.Figures)
	}
}

// lead counts one lead.
func (b *reportBuilder) lead(l *store.ReportLead) {
	b.place(Attribute(l), func(f *Figures) { f.add(l) })
	for _, st := range l.Stages {
		b.seen[st.Stage]++
	}
}

// counter counts one of the campaign report's counters (a day's leads of
// one attribution); other counters are left out.
func (b *reportBuilder) counter(c model.Counter) {
	if !store.IsReportCounter(c.Name) || c.N == 0 {
		return
	}
	figure, a, ok := store.ParseReportDim(c.Dim)
	if !ok {
		return
	}
	b.place(a, func(f *Figures) { f.addCount(c.Name, figure, c.N) })
	if c.Name == model.CounterReportStages {
		b.seen[figure] += int(c.N)
	}
}

// finish orders the rows and the stages.
func (b *reportBuilder) finish() *Report {
	r := b.r
	for name := range b.site.Settings.Meta.Stages {
		if _, ok := b.seen[name]; !ok {
			b.seen[name] = 0
		}
	}
	r.Stages = stageOrder(b.seen)
	var walk func(m map[string]*reportNode)
	walk = func(m map[string]*reportNode) {
		list := make([]*reportNode, 0, len(m))
		for _, n := range m {
			n.row.finish(r.Currency)
			list = append(list, n)
		}
		slices.SortFunc(list, func(a, b *reportNode) int { return compareRows(&a.row, &b.row) })
		for _, n := range list {
			r.Rows = append(r.Rows, n.row)
			walk(n.kids)
		}
	}
	walk(b.top)
	r.Total.finish(r.Currency)
	return r
}

// compareRows puts the campaigns that brought the most won deals, then
// clean leads, then leads first; the leads without a campaign last, by
// where they came from (Meta, Google, TikTok, organic).
func compareRows(a, b *ReportRow) int {
	if ac, bc := a.Click != "", b.Click != ""; ac || bc {
		switch {
		case ac && bc:
			return cmp.Compare(clickRank(a.Click), clickRank(b.Click))
		case ac:
			return 1
		}
		return -1
	}
	if c := cmp.Compare(b.Won, a.Won); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Clean, a.Clean); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Leads, a.Leads); c != 0 {
		return c
	}
	return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID))
}

func clickRank(c string) int {
	return slices.Index([]string{ClickMeta, ClickGoogle, ClickTikTok, ClickOrganic}, c)
}

// stageOrder puts the qualified stage first, won last, and the others
// between by how many leads reached them (a funnel narrows), then by name.
func stageOrder(seen map[string]int) []string {
	rank := func(s string) int {
		switch s {
		case model.StageQualified:
			return 0
		case model.StageWon:
			return 2
		}
		return 1
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b string) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(seen[b], seen[a]), cmp.Compare(a, b))
	})
	return out
}

// add counts one lead in the figures.
func (f *Figures) add(l *store.ReportLead) {
	f.Leads++
	switch l.Verdict {
	case model.VerdictClean:
		f.Clean++
	case model.VerdictReview:
		f.Review++
	case model.VerdictJunk:
		f.Junk++
		if f.reasons == nil {
			f.reasons = map[string]int{}
		}
		f.reasons[mainReason(l.Decision)]++
	}
	for _, st := range l.Stages {
		if f.Stages == nil {
			f.Stages = map[string]int{}
		}
		f.Stages[st.Stage]++
		if st.Stage != model.StageWon {
			continue
		}
		f.Won++
		if st.Value != nil && st.Currency != "" {
			if f.revenue == nil {
				f.revenue = map[string]int64{}
			}
			f.revenue[st.Currency] += model.Cents(*st.Value)
		}
	}
}

// addCount counts n of one of the campaign report's counters (name) in
// the figures: figure is its verdict, reason, stage or currency.
func (f *Figures) addCount(name, figure string, n int64) {
	switch name {
	case model.CounterReportVerdicts:
		f.Leads += int(n)
		switch model.Verdict(figure) {
		case model.VerdictClean:
			f.Clean += int(n)
		case model.VerdictReview:
			f.Review += int(n)
		case model.VerdictJunk:
			f.Junk += int(n)
		}
	case model.CounterReportJunk:
		if f.reasons == nil {
			f.reasons = map[string]int{}
		}
		f.reasons[figure] += int(n)
	case model.CounterReportStages:
		if f.Stages == nil {
			f.Stages = map[string]int{}
		}
		f.Stages[figure] += int(n)
		if figure == model.StageWon {
			f.Won += int(n)
		}
	case model.CounterReportCents, model.CounterReportValued:
		if f.revenue == nil {
			f.revenue = map[string]int64{}
		}
		if name == model.CounterReportCents {
			f.revenue[figure] += n
		} else {
			f.revenue[figure] += 0
		}
	}
}

// finish orders what add gathered: the top junk reasons, and the revenue
// with the site's currency first.
func (f *Figures) finish(currency string) {
	f.JunkReasons = f.JunkReasons[:0]
	for code, n := range f.reasons {
		f.JunkReasons = append(f.JunkReasons, ReasonCount{Code: code, N: n})
	}
	slices.SortFunc(f.JunkReasons, func(a, b ReasonCount) int { return cmp.Or(cmp.Compare(b.N, a.N), cmp.Compare(a.Code, b.Code)) })
	if len(f.JunkReasons) > ReportTopReasons {
		f.JunkReasons = f.JunkReasons[:ReportTopReasons]
	}
	f.Revenue = f.Revenue[:0]
	for c, n := range f.revenue {
		f.Revenue = append(f.Revenue, Money{Currency: c, Cents: n})
	}
	slices.SortFunc(f.Revenue, func(a, b Money) int {
		if (a.Currency == currency) != (b.Currency == currency) {
			if a.Currency == currency {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Currency, b.Currency)
	})
}

// mainReason is the code of the reason a junk lead is junk for
// (store.MainReason).
func mainReason(d model.Decision) string { return store.MainReason(d) }

// SiteCurrency is the currency a site's values are in first: its won
// stage's, else the first of its other stages' (by name), else none.
func SiteCurrency(site *model.Site) string {
	stages := site.Settings.Meta.Stages
	if c := stages[model.StageWon].Currency; c != "" {
		return c
	}
	names := make([]string, 0, len(stages))
	for n := range stages {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if c := stages[n].Currency; c != "" {
			return c
		}
	}
	return ""
}

// AdRef names a campaign, ad set or ad (store.AdRef).
type AdRef = store.AdRef

// Attribution is where a lead came from, as the report groups it
// (store.Attribution).
type Attribution = store.Attribution

// Attribute says where a lead came from (store.Attribute).
func Attribute(l *store.ReportLead) Attribution { return store.Attribute(l) }

// WonFromCounters reads the won deals and their revenue (one amount per
// currency, currency first) from a site's counters: the stages won on the
// counters' days, whenever their leads came.
func WonFromCounters(cs model.Counters, currency string) (won int64, revenue []Money) {
	var f Figures
	for _, c := range cs {
		switch c.Name {
		case model.CounterStages:
			if c.Dim == model.StageWon {
				won += c.N
			}
		case model.CounterStageCents:
			if stage, cur := model.SplitStageCentsDim(c.Dim); stage == model.StageWon && cur != "" {
				if f.revenue == nil {
					f.revenue = map[string]int64{}
				}
				f.revenue[cur] += c.N
			}
		}
	}
	f.finish(currency)
	return won, f.Revenue
}
