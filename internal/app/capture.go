package app

import (
	"context"

	"github.com/cleanads/cleanads/internal/model"
)

// The lost-leads notice: a site whose pages are visited but whose leads do
// not arrive, or arrive without the tracker, is losing what every other
// part of CleanAds works from. The dashboard and `cleanads doctor` say so,
// from the site's counters.
const (
	// CaptureFormDays is how many days back (today, UTC, and the days
	// before it) visits to pages with a form without a lead are looked for.
	CaptureFormDays = 3
	// CaptureMinFormVisits is how many visits to pages with a lead form,
	// without a single web lead, make the notice: about one visit in twenty
	// to fifty to a form page leaves a lead on a lead-generation site, so
	// none of 50 is rarely chance.
	CaptureMinFormVisits = 50
	// CaptureDays is the period of the other notices.
	CaptureDays = 7
	// CaptureMinVisits is how many visits, none to a page where t.js found
	// a lead form and no web lead, make the notice that no form is seen.
	CaptureMinVisits = 300
	// CaptureMinUntracked is how many web leads, none with t.js's fill
	// time, make the notice that the form is posted without the tracker.
	CaptureMinUntracked = 3
)

// Capture notice kinds.
const (
	// NoticeFormNoLead: visits to pages with a lead form, no lead.
	NoticeFormNoLead = "form_no_lead"
	// NoticeNoForm: visits, t.js found no lead form anywhere, no lead.
	NoticeNoForm = "no_form"
	// NoticeUntracked: leads, none timed by t.js.
	NoticeUntracked = "untracked"
)

// CaptureNotice is one way a site seems to lose leads, with the figures
// that show it; the dashboard and doctor word it.
type CaptureNotice struct {
	Kind string
	// Days is the period the figures cover, today included.
	Days int
	// Visits, FormVisits, Leads (web leads) and Untracked (web leads
	// without the tracker's fill time) over Days.
	Visits, FormVisits, Leads, Untracked int64
}

// CaptureNotices reads a site's counters (covering at least the last
// CaptureDays days up to today, model.Day) for signs that it loses leads.
// Only web leads count: Lead Ads and WhatsApp leads never pass the form.
func CaptureNotices(cs model.Counters, today int64) []CaptureNotice {
	var out []CaptureNotice
	sum := func(name string, days int) int64 {
		dim := "*"
		if name == model.CounterLeads || name == model.CounterLeadsUntracked {
			dim = model.SourceWeb
		}
		return cs.Sum(name, dim, today-int64(days-1), today)
	}
	if fv, leads := sum(model.CounterFormVisits, CaptureFormDays), sum(model.CounterLeads, CaptureFormDays); fv >= CaptureMinFormVisits && leads == 0 {
		out = append(out, CaptureNotice{Kind: NoticeFormNoLead, Days: CaptureFormDays, Visits: sum(model.CounterVisits, CaptureFormDays), FormVisits: fv})
	} else if v, fv, leads := sum(model.CounterVisits, CaptureDays), sum(model.CounterFormVisits, CaptureDays), sum(model.CounterLeads, CaptureDays); v >= CaptureMinVisits && fv == 0 && leads == 0 {
		out = append(out, CaptureNotice{Kind: NoticeNoForm, Days: CaptureDays, Visits: v})
	}
	if leads, un := sum(model.CounterLeads, CaptureDays), sum(model.CounterLeadsUntracked, CaptureDays); leads >= CaptureMinUntracked && un == leads {
		out = append(out, CaptureNotice{Kind: NoticeUntracked, Days: CaptureDays, Leads: leads, Untracked: un})
	}
	return out
}

// Capture returns a site's counters of the last days (days >= CaptureDays)
// up to today, and the notices they give.
func (s *Service) Capture(ctx context.Context, site model.SiteID, days int) (model.Counters, []CaptureNotice, error) {
	days = max(days, CaptureDays)
	today := model.Day(s.now())
	cs, err := s.db.Counters(ctx, site, today-int64(days-1), today)
	if err != nil {
		return nil, nil, err
	}
	return cs, CaptureNotices(cs, today), nil
}
