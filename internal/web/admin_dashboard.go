package web

import (
	"fmt"
	"net/http"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// dashboardDays is the period the dashboard looks back over.
const dashboardDays = 30

// dashboardData is the dashboard's data for one site.
type dashboardData struct {
	Sites                          []*model.Site
	Site                           *model.Site
	Days                           int
	Total, Clean, Review, Junk     int
	QualifiedSent, QualifiedQueued int
	Health                         []stateCount
	Coverage                       []coverageRow
	CoverageOf                     int
	Chart                          chart
	Learning                       learningData
	// Google is the qualified events for Google Ads, nil when the site
	// sends nothing to Google.
	Google *googleStat
	// Visits and FormVisits (to pages where t.js found a lead form) over
	// the period, from the site's counters (UTC days).
	Visits, FormVisits int64
	// Notices say how the site seems to lose leads, if it does.
	Notices []captureNotice
	// Trouble is a banner per platform that cannot be reached or refuses.
	Trouble []trouble
	// Won is the deals won (the stage won) in the period's UTC days,
	// from the counters; Revenue their values, one amount per currency
	// (the site's first), "–" for none.
	Won     int64
	Revenue []string
}

// captureNotice is a lost-leads notice in the page's language.
type captureNotice struct{ Text, Fix string }

// googleStat is what became of the qualified events for Google Ads.
type googleStat struct{ Sent, Queued, Dead int }

type stateCount struct {
	State, Word string
	N           int
}

// coverageRow is the share of events carrying one match key.
type coverageRow struct {
	Key, Label string
	N, Pct     int
}

// matchKey is a user_data key and its label.
type matchKey struct{ key, label string }

// matchKeys are the user_data keys whose presence lifts Meta's Event Match
// Quality the most.
var matchKeys = []matchKey{
	{"em", "E-mail"}, {"ph", "Phone"}, {"fbc", "Click id (fbc)"}, {"fbp", "Browser id (fbp)"},
	{"client_ip_address", "IP address"}, {"client_user_agent", "User agent"},
}

// adminDashboard shows one site's last 30 days: leads per day by verdict,
// the share clean, qualified events sent, delivery health and match-key
// coverage.
func (s *Server) adminDashboard(w http.ResponseWriter, r *http.Request) {
	p := s.newPage(r, "dashboard", "Dashboard")
	ctx := r.Context()
	sites, err := s.siteList(r)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	d := dashboardData{Sites: sites, Days: dashboardDays}
	want := r.URL.Query().Get("site")
	for _, site := range sites {
		if d.Site == nil || string(site.ID) == want {
			d.Site = site
		}
	}
	if d.Site == nil {
		p.D = d
		s.render(w, r, http.StatusOK, "dashboard", p)
		return
	}
	now := s.now().In(s.loc)
	_, offset := now.Zone()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, s.loc)
	since := today.AddDate(0, 0, -(dashboardDays - 1))
	counters, notices, err := s.app.Capture(ctx, d.Site.ID, dashboardDays)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	// The leads per day and verdict from the counters, by UTC day as the
	// visits: a read of a few rows, not a count of the period's leads.
	daily := leadsByDay(counters, (since.Unix()+int64(offset))/86400)
	for _, c := range daily {
		d.Total += c.N
		switch c.Verdict {
		case model.VerdictClean:
			d.Clean += c.N
		case model.VerdictReview:
			d.Review += c.N
		case model.VerdictJunk:
			d.Junk += c.N
		}
	}
	d.Visits = counters.Sum(model.CounterVisits, "*", 0, 1<<40)
	d.FormVisits = counters.Sum(model.CounterFormVisits, "*", 0, 1<<40)
	won, revenue := app.WonFromCounters(counters, app.SiteCurrency(d.Site))
	d.Won, d.Revenue = won, []string{"–"}
	if len(revenue) > 0 {
		d.Revenue = d.Revenue[:0]
		for _, m := range revenue {
			d.Revenue = append(d.Revenue, moneyText(p.Lang, []app.Money{m}))
		}
	}
	for _, n := range notices {
		d.Notices = append(d.Notices, captureWords(p.Lang, n))
	}
	if d.Trouble, err = s.troubles(ctx, p.Lang, d.Site.ID, sites); err != nil {
		s.adminFail(w, r, err)
		return
	}
	d.Chart = drawChart(p.Lang, since, offset, daily)
	visitsByDay(&d.Chart, counters)
	byDest, err := s.db.DeliveryStatsByDestination(ctx, d.Site.ID, model.KindQualified, since)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	// A qualified lead is one event at Meta and one at Google: each is
	// counted where it went.
	q := byDest[model.DestinationMeta]
	d.QualifiedSent = q[model.DeliverySent]
	d.QualifiedQueued = q[model.DeliveryPending] + q[model.DeliveryRetry] + q[model.DeliveryPaused]
	if d.Site.Settings.Google != nil {
		g := byDest[model.DestinationGoogle]
		d.Google = &googleStat{Sent: g[model.DeliverySent], Queued: g[model.DeliveryPending] + g[model.DeliveryRetry] + g[model.DeliveryPaused],
			Dead: g[model.DeliveryDead]}
	}
	all, err := s.db.DeliveryStats(ctx, d.Site.ID, "", since)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	// PageViews sent from their queue have no row; they count here.
	queued, sent, err := s.db.PageViewStats(ctx, d.Site.ID, since)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	all[model.DeliveryPending] += queued
	all[model.DeliverySent] += sent
	for _, st := range []model.DeliveryState{model.DeliverySent, model.DeliveryPending, model.DeliveryRetry,
		model.DeliveryDead, model.DeliveryExpired, model.DeliveryPaused, model.DeliveryDryRun} {
		d.Health = append(d.Health, stateCount{State: string(st), Word: stateWord(p.Lang, string(st)), N: all[st]})
	}
	// The match-key coverage of the period's events sent, from the
	// counters (UTC days, as the chart's). Dry-run events are counted
	// too: a site checks its coverage before it goes live.
	first := (since.Unix() + int64(offset)) / 86400
	n := int(counters.Sum(model.CounterCoverageEvents, "", first, 1<<40))
	d.Coverage, d.CoverageOf = coverageOf(p.Lang, matchKeys, n, func(key string) int {
		return int(counters.Sum(model.CounterCoverageKeys, key, first, 1<<40))
	}), n
	if d.Learning, err = s.learning(ctx, p.Lang, d.Site, since); err != nil {
		s.adminFail(w, r, err)
		return
	}
	p.Title = tr(p.Lang, "Dashboard") + " · " + d.Site.Name
	p.D = d
	s.render(w, r, http.StatusOK, "dashboard", p)
}

// coverageOf is the coverage rows of keys: of n events, has(key) carry
// key.
func coverageOf(lang string, keys []matchKey, n int, has func(key string) int) []coverageRow {
	rows := make([]coverageRow, 0, len(keys))
	for _, k := range keys {
		row := coverageRow{Key: k.key, Label: tr(lang, k.label), N: has(k.key)}
		if n > 0 {
			row.Pct = (row.N*100 + n/2) / n
		}
		rows = append(rows, row)
	}
	return rows
}

// chart is a stacked bar chart drawn as SVG on the server.
type chart struct {
	W, H, Top, Bottom, Left int
	Bars                    []chartBar
	YTicks, XLabels         []chartTick
	Rows                    []chartRow // the same numbers as a table
}

type chartBar struct {
	X, W  int
	Segs  []chartSeg
	Title string
}

type chartSeg struct {
	Y, H  int
	Class string
}

type chartTick struct {
	Pos   int
	Label string
}

type chartRow struct {
	Day                 string
	Clean, Review, Junk int
	// Visits are the visits of the UTC day of the same date.
	Visits int64
}

// drawChart lays out one bar per day from since, clean at the bottom, then
// review, then junk.
func drawChart(lang string, since time.Time, offset int, daily []store.DayCount) chart {
	c := chart{W: 720, H: 240, Top: 12, Bottom: 28, Left: 36}
	first := (since.Unix() + int64(offset)) / 86400
	byDay := make([][3]int, dashboardDays)
	for _, dc := range daily {
		i := int(dc.Day - first)
		if i < 0 || i >= dashboardDays {
			continue
		}
		switch dc.Verdict {
		case model.VerdictClean:
			byDay[i][0] += dc.N
		case model.VerdictReview:
			byDay[i][1] += dc.N
		case model.VerdictJunk:
			byDay[i][2] += dc.N
		}
	}
	max := 0
	for _, v := range byDay {
		if t := v[0] + v[1] + v[2]; t > max {
			max = t
		}
	}
	top := niceMax(max)
	plotH := c.H - c.Top - c.Bottom
	slot := (c.W - c.Left) / dashboardDays
	for i := 0; i <= 4; i++ {
		val := top * i / 4
		c.YTicks = append(c.YTicks, chartTick{Pos: c.Top + plotH - plotH*i/4, Label: fmt.Sprint(val)})
	}
	for i, v := range byDay {
		day := since.AddDate(0, 0, i)
		b := chartBar{X: c.Left + i*slot + 2, W: slot - 4,
			Title: tr(lang, "%s: %d clean, %d review, %d junk", day.Format("2006-01-02"), v[0], v[1], v[2])}
		y := c.Top + plotH
		for j, class := range []string{"clean", "review", "junk"} {
			if v[j] == 0 {
				continue
			}
			h := plotH * v[j] / top
			if h < 1 {
				h = 1
			}
			y -= h
			b.Segs = append(b.Segs, chartSeg{Y: y, H: h, Class: class})
		}
		c.Bars = append(c.Bars, b)
		if i%5 == 0 || i == dashboardDays-1 {
			c.XLabels = append(c.XLabels, chartTick{Pos: b.X + b.W/2, Label: day.Format("02.01")})
		}
		c.Rows = append(c.Rows, chartRow{Day: day.Format("2006-01-02"), Clean: v[0], Review: v[1], Junk: v[2]})
	}
	return c
}

// niceMax rounds a maximum up to a value that divides into 4 clean ticks.
func niceMax(n int) int {
	for _, step := range []int{1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000} {
		if n <= step*4 {
			return step * 4
		}
	}
	return (n/4 + 1) * 4
}

// leadsByDay is the verdict counters of the days from first on, as the
// chart draws them.
func leadsByDay(cs model.Counters, first int64) []store.DayCount {
	var daily []store.DayCount
	for _, c := range cs {
		if c.Name == model.CounterVerdicts && c.Day >= first && c.N != 0 {
			daily = append(daily, store.DayCount{Day: c.Day, Verdict: model.Verdict(c.Dim), N: int(c.N)})
		}
	}
	return daily
}

// visitsByDay puts each day's visits in the chart's table, by date: the
// counters keep UTC days, the chart the admin's local ones.
func visitsByDay(c *chart, cs model.Counters) {
	byDate := map[string]int64{}
	for _, x := range cs {
		if x.Name == model.CounterVisits {
			byDate[model.DayStart(x.Day).Format("2006-01-02")] += x.N
		}
	}
	for i := range c.Rows {
		c.Rows[i].Visits = byDate[c.Rows[i].Day]
	}
}

// captureWords says a lost-leads notice in plain words with its likely
// cause and what to do (cleanads doctor says the same).
func captureWords(lang string, n app.CaptureNotice) captureNotice {
	switch n.Kind {
	case app.NoticeFormNoLead:
		return captureNotice{Text: tr(lang, "%d visits to pages with a lead form in the last %d days, and no lead: the form may not be captured.", n.FormVisits, n.Days),
			Fix: tr(lang, "Send the form once yourself and look for it in the Inbox. A form that posts by JavaScript (a form plugin) or sits in an iframe of another site is the usual cause; see docs/tracker.md, 'When leads do not arrive'.")}
	case app.NoticeNoForm:
		return captureNotice{Text: tr(lang, "%d visits in the last %d days, no lead, and t.js found no lead form on any page.", n.Visits, n.Days),
			Fix: tr(lang, "Check that the install snippet is on the form's page too, that the form is not in an iframe of another site (HubSpot, Typeform), and that the page loads /t.js rather than the old /t.v1.js, which takes only forms marked data-cleanads.")}
	case app.NoticeUntracked:
		return captureNotice{Text: tr(lang, "None of the %d web leads of the last %d days carries t.js's fill time: they reach CleanAds without the tracker.", n.Leads, n.Days),
			Fix: tr(lang, "The two-second rule cannot judge them. Put the install snippet on the form's page and let the form post as it did; a lead your own server posts with the API carries no fill time of t.js's.")}
	}
	return captureNotice{Text: n.Kind}
}
