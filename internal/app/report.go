package app

import (
	"cmp"
	"context"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
	"github.com/cleanads/cleanads/internal/store"
)

// Where the click of a lead without a campaign came from.
const (
	ClickMeta    = "meta"
	ClickGoogle  = "google"
	ClickTikTok  = "tiktok"
	ClickOrganic = "organic" // no ad click known: organic or direct
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
// leads received from from (inclusive) to to (exclusive). It reads the
// period's leads (on their (site, received) index) and the visits counter,
// never every lead of the site.
func (s *Service) CampaignReport(ctx context.Context, site *model.Site, from, to time.Time) (*Report, error) {
	leads, err := s.db.ReportLeads(ctx, site.ID, from, to)
	if err != nil {
		return nil, err
	}
	first, last := model.Day(from), model.Day(to.Add(-time.Millisecond))
	cs, err := s.db.Counters(ctx, site.ID, first, last)
	if err != nil {
		return nil, err
	}
	r := BuildReport(site, leads)
	r.From, r.To = from, to
	r.Visits = cs.Sum(model.CounterVisits, "*", first, last)
	return r, nil
}

// BuildReport groups the leads (store.ReportLeads) by campaign, ad set and
// ad, and sums each group and the site.
func BuildReport(site *model.Site, leads []*store.ReportLead) *Report {
	r := &Report{Currency: SiteCurrency(site)}
	type node struct {
		row  ReportRow
		kids map[string]*node
	}
	top := map[string]*node{}
	child := func(m map[string]*node, key string, row ReportRow) *node {
		n := m[key]
		if n == nil {
			n = &node{row: row, kids: map[string]*node{}}
			m[key] = n
		}
		return n
	}
	seen := map[string]int{}
	for _, l := range leads {
		a := Attribute(l)
		r.Total.add(l)
		if a.Campaign.empty() {
			n := child(top, "\x00"+a.Click, ReportRow{Click: a.Click})
			n.row.add(l)
			if !a.Ad.empty() {
				child(n.kids, a.Ad.key(), ReportRow{Level: 2, Name: a.Ad.Name, ID: a.Ad.ID}).row.add(l)
			}
		} else {
			n := child(top, a.Campaign.key(), ReportRow{Name: a.Campaign.Name, ID: a.Campaign.ID})
			n.row.add(l)
			under := n
			if !a.AdSet.empty() {
				under = child(n.kids, a.AdSet.key(), ReportRow{Level: 1, Name: a.AdSet.Name, ID: a.AdSet.ID})
				under.row.add(l)
			}
			if !a.Ad.empty() {
				child(under.kids, a.Ad.key(), ReportRow{Level: 2, Name: a.Ad.Name, ID: a.Ad.ID}).row.add(l)
			}
		}
		for _, st := range l.Stages {
			seen[st.Stage]++
		}
	}
	for name := range site.Settings.Meta.Stages {
		if _, ok := seen[name]; !ok {
			seen[name] = 0
		}
	}
	r.Stages = stageOrder(seen)

	var walk func(m map[string]*node)
	walk = func(m map[string]*node) {
		list := make([]*node, 0, len(m))
		for _, n := range m {
			n.row.finish(r.Currency)
			list = append(list, n)
		}
		slices.SortFunc(list, func(a, b *node) int { return compareRows(&a.row, &b.row) })
		for _, n := range list {
			r.Rows = append(r.Rows, n.row)
			walk(n.kids)
		}
	}
	walk(top)
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

// mainReason is the code of the reason a junk lead is junk for: the word
// of whoever decided it when not the rules (the owner, evidence), else a
// final reason, else the one with the most points.
func mainReason(d model.Decision) string {
	if d.DecidedBy != "" && d.DecidedBy != model.DecidedByRules {
		for i := len(d.Reasons) - 1; i >= 0; i-- {
			if !qualify.RuleReason(d.Reasons[i].Code) {
				return d.Reasons[i].Code
			}
		}
	}
	best := -1
	for i, r := range d.Reasons {
		if best < 0 || (r.Final && !d.Reasons[best].Final) || (r.Final == d.Reasons[best].Final && r.Points > d.Reasons[best].Points) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return d.Reasons[best].Code
}

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

// AdRef names a campaign, ad set or ad: its id and name, either may be
// empty.
type AdRef struct{ ID, Name string }

func (a AdRef) empty() bool { return a.ID == "" && a.Name == "" }

// key groups refs: by id when there is one (a campaign renamed stays
// one), else by name.
func (a AdRef) key() string {
	if a.ID != "" {
		return "id:" + a.ID
	}
	return "name:" + a.Name
}

// Attribution is where a lead came from, as the report groups it.
type Attribution struct {
	Campaign, AdSet, Ad AdRef
	// Click is the ad platform whose click brought the lead (ClickMeta,
	// ...), ClickOrganic when none is known.
	Click string
}

// Attribute says where a lead came from: a Lead Ads lead by the campaign,
// ad set and ad Meta gives with it (an organic one by none); a Click-to-WhatsApp lead by its ad; a
// web lead by its landing visit's utm_campaign, utm_term (the ad set, as
// Meta's URL parameters fill it) and utm_content (the ad), else those of the
// form's page; the click by the click ids (fbclid, gclid, ttclid) of the
// landing visit, the lead and its page, else by utm_source.
func Attribute(l *store.ReportLead) Attribution {
	d := l.Detail
	switch l.Source {
	case model.SourceLeadAds:
		if d[model.DetailOrganic] == "true" {
			// A form reached from the Page, not from an ad.
			return Attribution{Click: ClickOrganic}
		}
		return Attribution{Click: ClickMeta,
			Campaign: AdRef{d[model.DetailCampaign], d[model.DetailCampaignName]},
			AdSet:    AdRef{d[model.DetailAdSet], d[model.DetailAdSetName]},
			Ad:       AdRef{d[model.DetailAd], d[model.DetailAdName]}}
	case model.SourceWhatsApp:
		a := Attribution{Click: ClickOrganic}
		if d[model.DetailAdID] != "" || d[model.DetailCTWAClid] != "" {
			a.Click = ClickMeta
			a.Ad = AdRef{d[model.DetailAdID], d[model.DetailAdHeadline]}
		}
		return a
	}
	var (
		a          Attribution
		page       url.Values
		utmSource  string
		fb, gc, tt bool
	)
	if u, err := url.Parse(l.PageURL); err == nil {
		page = u.Query()
	}
	if v := l.Landing; v != nil {
		if v.Campaign != "" {
			a.Campaign, a.AdSet, a.Ad = AdRef{Name: v.Campaign}, AdRef{Name: v.Term}, AdRef{Name: v.Content}
		}
		utmSource = v.Source
		fb, gc, tt = v.FBClid != "", v.GClid != "", v.TTClid != ""
	}
	if a.Campaign.empty() && page.Get("utm_campaign") != "" {
		a.Campaign, a.AdSet, a.Ad = AdRef{Name: page.Get("utm_campaign")}, AdRef{Name: page.Get("utm_term")}, AdRef{Name: page.Get("utm_content")}
	}
	utmSource = cmp.Or(utmSource, page.Get("utm_source"))
	fb = fb || l.FBClid != "" || page.Get("fbclid") != ""
	gc = gc || l.GClid != "" || page.Get("gclid") != ""
	tt = tt || page.Get("ttclid") != ""
	switch src := strings.ToLower(utmSource); {
	case fb:
		a.Click = ClickMeta
	case gc:
		a.Click = ClickGoogle
	case tt:
		a.Click = ClickTikTok
	case slices.Contains([]string{"facebook", "fb", "instagram", "ig", "meta"}, src):
		a.Click = ClickMeta
	case src == "google" || src == "adwords":
		a.Click = ClickGoogle
	case src == "tiktok":
		a.Click = ClickTikTok
	default:
		a.Click = ClickOrganic
	}
	return a
}

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
