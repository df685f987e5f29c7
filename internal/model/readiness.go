package model

import (
	"sort"
	"time"
)

// Meta's Conversion Leads guidelines, as its CRM integration guide and FAQ
// state them (docs/admin.md, "Conversion Leads readiness", has the sources).
const (
	// ReadyLeadsPerMonth is the monthly lead volume Meta asks for best
	// results: the figure its guide is quoted with; the copy of the page
	// read when this was written was cut before it (docs/admin.md).
	ReadyLeadsPerMonth = 200
	// ReadyRateMin and ReadyRateMax bound, in percent, the approximate
	// conversion rate of the stage to optimise for.
	ReadyRateMin, ReadyRateMax = 1.0, 40.0
	// ReadyStageDays is how soon after the lead the stage to optimise for
	// must happen.
	ReadyStageDays = 28
	// ReadyStages is how many funnel stages must reach Meta: the initial
	// lead and at least one stage after it.
	ReadyStages = 2
)

// Our own bars where Meta gives no number.
const (
	// ReadyUploadedPct is the share of the leads not judged junk whose
	// events Meta must have. Meta asks for every lead; the newest wait for
	// their upload, and a review lead may wait for evidence.
	ReadyUploadedPct = 90.0
	// ReadyUploadDays is how many of the last ReadyPeriodDays days must have
	// an upload: Meta asks for one a day, and a day without any lead or
	// stage has nothing to send.
	ReadyUploadDays = 24
	// ReadyMatchPct is the share of sent events that must carry lead_id, an
	// e-mail or a phone, Meta's keys for matching a CRM event to its lead.
	ReadyMatchPct = 90.0
	// ReadyPeriodDays is the period the figures are read over.
	ReadyPeriodDays = 28
)

// ReadinessFigures are one site's figures over a period, read from its
// leads (received in the period) and the Meta events of those leads.
type ReadinessFigures struct {
	From, To time.Time
	// Leads received in the period; NotJunk of them not judged junk (the
	// ones that are ever sent); LeadAds of them from Meta's Instant Forms.
	Leads, NotJunk, LeadAds int
	// Uploaded is the leads with at least one event Meta accepted (or, on
	// a dry-run site, that was built for it).
	Uploaded int
	// Stages are the event names sent for the period's leads, each with
	// the leads that reached it, the lead event first, then by leads.
	Stages []StageFigure
	// UploadDays is the days of the period (UTC) on which Meta accepted an
	// event of a lead (or, on a dry-run site, one was built), whenever the
	// lead came.
	UploadDays int
	// Matchable of Sampled events sent (or built) in the period carry
	// lead_id, an e-mail or a phone, and Coverage[key] carry key (one of
	// CoverageKeys): all of them, from the coverage counters, as the
	// dashboard's coverage is.
	Matchable, Sampled int
	Coverage           map[string]int
}

// StageFigure is one funnel stage as it reached Meta.
type StageFigure struct {
	EventName string
	// Kind is the delivery kind: KindLead (the initial lead), KindQualified,
	// or "stage:<name>".
	Kind string
	// Leads of the period that reached it, with an event sent.
	Leads int
	// MedianDays is the median time from the lead to the stage, in days
	// (from counters: the waits rounded down to a tenth of a day,
	// MedianBucketDays).
	MedianDays float64
}

// MedianDays is the median of durations, in days; 0 for none.
func MedianDays(d []time.Duration) float64 {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return m.Hours() / 24
}

// Requirement codes, in the order they are shown.
const (
	ReqInstantForms = "instant_forms"
	ReqVolume       = "volume"
	ReqUploaded     = "uploaded"
	ReqStages       = "stages"
	ReqRate         = "rate"
	ReqTiming       = "timing"
	ReqDaily        = "daily"
	ReqMatchKeys    = "match_keys"
)

// Fix codes: what to do about a requirement not met.
const (
	FixConnectLeadAds = "connect_lead_ads"
	FixMoreLeads      = "more_leads"
	FixUploadAll      = "upload_all"
	FixSendStages     = "send_stages"
	FixDeeperStage    = "deeper_stage"
	FixEarlierStage   = "earlier_stage"
	FixSoonerStage    = "sooner_stage"
	FixDailyUploads   = "daily_uploads"
	FixMatchKeys      = "match_keys"
)

// Requirement is one of Meta's guidelines checked against a site.
type Requirement struct {
	Code string
	OK   bool
	// Have is where the site stands (a count or a percentage, see Code);
	// Want is the bar.
	Have, Want float64
	// Stage is the stage the rate and timing are judged on, "" when none.
	Stage string
	// Fix is what to do when not OK.
	Fix string
}

// Pct is n of of in percent; 0 when of is 0.
func Pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// OptimisedStage picks the stage after the lead that Meta's model could be
// optimised for: the deepest (fewest leads) whose rate is within Meta's
// range; when none is, the one nearest the range. ok is false when no stage
// after the lead reached Meta.
func (f *ReadinessFigures) OptimisedStage() (st StageFigure, ok bool) {
	best, bestMiss := -1, 0.0
	for i, s := range f.Stages {
		if s.Kind == KindLead {
			continue
		}
		rate := Pct(s.Leads, f.Leads)
		miss := 0.0
		switch {
		case rate < ReadyRateMin:
			miss = ReadyRateMin - rate
		case rate > ReadyRateMax:
			miss = rate - ReadyRateMax
		}
		if best < 0 || miss < bestMiss || miss == bestMiss && s.Leads < f.Stages[best].Leads {
			best, bestMiss = i, miss
		}
	}
	if best < 0 {
		return StageFigure{}, false
	}
	return f.Stages[best], true
}

// CheckReadiness checks the figures against Meta's Conversion Leads
// guidelines and says, for each one missed, what to do.
func CheckReadiness(f *ReadinessFigures) []Requirement {
	days := f.To.Sub(f.From).Hours() / 24
	perMonth := float64(f.Leads)
	if days > 0 {
		perMonth = float64(f.Leads) * 30 / days
	}
	uploaded := Pct(f.Uploaded, f.NotJunk)
	stages := len(f.Stages)
	out := []Requirement{
		{Code: ReqInstantForms, OK: f.LeadAds > 0, Have: float64(f.LeadAds), Want: 1, Fix: FixConnectLeadAds},
		{Code: ReqVolume, OK: perMonth >= ReadyLeadsPerMonth, Have: perMonth, Want: ReadyLeadsPerMonth, Fix: FixMoreLeads},
		{Code: ReqUploaded, OK: f.NotJunk > 0 && uploaded >= ReadyUploadedPct, Have: uploaded, Want: ReadyUploadedPct, Fix: FixUploadAll},
		{Code: ReqStages, OK: stages >= ReadyStages, Have: float64(stages), Want: ReadyStages, Fix: FixSendStages},
	}
	rate := Requirement{Code: ReqRate, Want: ReadyRateMax, Fix: FixSendStages}
	timing := Requirement{Code: ReqTiming, Want: ReadyStageDays, Fix: FixSendStages}
	if st, ok := f.OptimisedStage(); ok {
		r := Pct(st.Leads, f.Leads)
		rate.Stage, rate.Have = st.EventName, r
		rate.OK = r >= ReadyRateMin && r <= ReadyRateMax
		switch {
		case r > ReadyRateMax:
			rate.Fix = FixDeeperStage
		case r < ReadyRateMin:
			rate.Fix, rate.Want = FixEarlierStage, ReadyRateMin
		}
		timing.Stage, timing.Have = st.EventName, st.MedianDays
		timing.OK = st.MedianDays <= ReadyStageDays
		timing.Fix = FixSoonerStage
	}
	match := Pct(f.Matchable, f.Sampled)
	out = append(out, rate, timing,
		Requirement{Code: ReqDaily, OK: f.UploadDays >= ReadyUploadDays, Have: float64(f.UploadDays), Want: ReadyUploadDays, Fix: FixDailyUploads},
		Requirement{Code: ReqMatchKeys, OK: f.Sampled > 0 && match >= ReadyMatchPct, Have: match, Want: ReadyMatchPct, Fix: FixMatchKeys})
	for i := range out {
		if out[i].OK {
			out[i].Fix = ""
		}
	}
	return out
}
