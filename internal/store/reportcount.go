package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// reportSep separates the parts of a campaign report counter's dim: the
// figure (a verdict, reason code, stage or currency), then the lead's
// Attribution (click, campaign id and name, ad set id and name, ad id and
// name).
const reportSep = "\x1f"

// ReportDim is the dim of a campaign report counter: the figure, then
// where the lead came from.
func ReportDim(figure string, a Attribution) string {
	return strings.Join([]string{figure, a.Click, a.Campaign.ID, a.Campaign.Name, a.AdSet.ID, a.AdSet.Name, a.Ad.ID, a.Ad.Name}, reportSep)
}

// ParseReportDim splits a campaign report counter's dim (ReportDim); ok is
// false for another counter's.
func ParseReportDim(dim string) (figure string, a Attribution, ok bool) {
	p := strings.Split(dim, reportSep)
	if len(p) != 8 {
		return "", a, false
	}
	return p[0], Attribution{Click: p[1], Campaign: AdRef{p[2], p[3]}, AdSet: AdRef{p[4], p[5]}, Ad: AdRef{p[6], p[7]}}, true
}

// IsReportCounter reports whether a counter is one of the campaign report's.
func IsReportCounter(name string) bool { return strings.HasPrefix(name, "report_") }

// ReportCounts are the campaign report counts one lead adds (n 1) or
// takes away (n -1), on its day of receipt: its verdict, its main reason
// when junk, its stages and its won revenue, each under where it came
// from.
func ReportCounts(l *ReportLead, n int64) []model.Count {
	a := Attribute(l)
	cs := []model.Count{{Name: model.CounterReportVerdicts, Dim: ReportDim(string(l.Verdict), a), N: n}}
	if l.Verdict == model.VerdictJunk {
		cs = append(cs, model.Count{Name: model.CounterReportJunk, Dim: ReportDim(MainReason(l.Decision), a), N: n})
	}
	for _, st := range l.Stages {
		cs = append(cs, model.Count{Name: model.CounterReportStages, Dim: ReportDim(st.Stage, a), N: n})
		if st.Stage == model.StageWon && st.Value != nil && st.Currency != "" {
			cs = append(cs, model.Count{Name: model.CounterReportCents, Dim: ReportDim(st.Currency, a), N: n * model.Cents(*st.Value)},
				model.Count{Name: model.CounterReportValued, Dim: ReportDim(st.Currency, a), N: n})
		}
	}
	return cs
}

// reportLanding reads the landing visit of a web lead (ReportLead.Landing):
// its visitor's last visit up to the lead, within ReportLookback, that
// carried a campaign or an ad click id.
func (q Q) reportLanding(ctx context.Context, site model.SiteID, visitor string, received int64) (*model.Visit, error) {
	v := &model.Visit{SiteID: site, VisitorID: visitor}
	var at int64
	err := q.queryRow(ctx, `/* Store.reportLanding */ SELECT v.at, COALESCE(v.fbclid, ''), COALESCE(v.gclid, ''),
		COALESCE(v.ttclid, ''), COALESCE(v.utm_source, ''), COALESCE(v.utm_medium, ''), COALESCE(v.utm_campaign, ''),
		COALESCE(v.utm_term, ''), COALESCE(v.utm_content, '')
		FROM visits v WHERE v.site_id = ? AND v.visitor_id = ? AND v.at >= ? AND v.at <= ?
		AND (COALESCE(v.fbclid, '') <> '' OR COALESCE(v.gclid, '') <> '' OR COALESCE(v.ttclid, '') <> ''
			OR COALESCE(v.utm_campaign, '') <> '' OR COALESCE(v.utm_source, '') <> '')
		ORDER BY v.at DESC, v.event_id DESC LIMIT 1`,
		string(site), visitor, received-ReportLookback.Milliseconds(), received).Scan(&at, &v.FBClid, &v.GClid, &v.TTClid,
		&v.Source, &v.Medium, &v.Campaign, &v.Term, &v.Content)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: landing visit: %w", err)
	}
	v.At = time.UnixMilli(at).UTC()
	return v, nil
}

// reportLeadOf is what the campaign report reads of a lead being stored
// (no stages yet).
func (q Q) reportLeadOf(ctx context.Context, l *model.Lead) (*ReportLead, error) {
	rl := &ReportLead{ID: l.ID, ReceivedAt: l.ReceivedAt, Source: leadSource(l.Source), Detail: l.SourceDetail,
		PageURL: l.PageURL, FBClid: l.FBClid, GClid: l.GClid, Decision: l.Decision}
	if rl.Source != model.SourceLeadAds && rl.Source != model.SourceWhatsApp && l.VisitorID != "" {
		v, err := q.reportLanding(ctx, l.SiteID, l.VisitorID, l.ReceivedAt.UnixMilli())
		if err != nil {
			return nil, err
		}
		rl.Landing = v
	}
	return rl, nil
}

// reportLead reads what the campaign report reads of one lead, with its
// site; nil when there is no such lead. On PostgreSQL the lead's row is
// locked for the transaction, so that the counts read stay true until the
// caller's change.
func (q Q) reportLead(ctx context.Context, id model.LeadID) (*ReportLead, model.SiteID, error) {
	lock := ""
	if q.dialect == Postgres {
		lock = " FOR UPDATE"
	}
	var (
		l                   ReportLead
		site, visitor, verd string
		detail, reasons     string
		received            int64
	)
	err := q.queryRow(ctx, `/* Store.reportLead */ SELECT site_id, received_at, visitor_id, source, source_detail, page_url, fbclid, gclid,
		verdict, score, reasons, rules_version, decided_by FROM leads WHERE id = ?`+lock, string(id)).Scan(&site, &received, &visitor,
		&l.Source, &detail, &l.PageURL, &l.FBClid, &l.GClid, &verd, &l.Score, &reasons, &l.RulesVersion, &l.DecidedBy)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("store: report lead %s: %w", id, err)
	}
	l.ID, l.ReceivedAt, l.Verdict = id, time.UnixMilli(received).UTC(), model.Verdict(verd)
	if err := json.Unmarshal([]byte(detail), &l.Detail); err != nil {
		return nil, "", fmt.Errorf("store: lead %s source detail: %w", id, err)
	}
	if err := json.Unmarshal([]byte(reasons), &l.Reasons); err != nil {
		return nil, "", fmt.Errorf("store: lead %s reasons: %w", id, err)
	}
	err = q.eachRow(ctx, func(r *sql.Rows) error {
		var (
			st    model.LeadStage
			at    int64
			value sql.NullFloat64
		)
		if err := r.Scan(&st.Stage, &at, &value, &st.Currency); err != nil {
			return err
		}
		st.LeadID, st.SiteID, st.At = id, model.SiteID(site), time.UnixMilli(at).UTC()
		if value.Valid {
			v := value.Float64
			st.Value = &v
		}
		l.Stages = append(l.Stages, st)
		return nil
	}, `/* Store.reportLead */ SELECT stage, at, value, currency FROM lead_stages WHERE lead_id = ? ORDER BY stage`, string(id))
	if err != nil {
		return nil, "", fmt.Errorf("store: report lead %s stages: %w", id, err)
	}
	if l.Source != model.SourceLeadAds && l.Source != model.SourceWhatsApp && visitor != "" {
		if l.Landing, err = q.reportLanding(ctx, model.SiteID(site), visitor, received); err != nil {
			return nil, "", err
		}
	}
	return &l, model.SiteID(site), nil
}

// reportMove runs change, a change of one lead (its verdict, a stage, its
// erasure), and moves the lead in the campaign report's counters from what
// it counted before to what it counts after, in the caller's transaction.
func (q Q) reportMove(ctx context.Context, id model.LeadID, change func() error) error {
	before, site, err := q.reportLead(ctx, id)
	if err != nil {
		return err
	}
	return q.reportMoveFrom(ctx, id, before, site, change)
}

// reportMoveFrom is reportMove for a caller that has read the lead
// (reportLead) already: before and site are what it read.
func (q Q) reportMoveFrom(ctx context.Context, id model.LeadID, before *ReportLead, site model.SiteID, change func() error) error {
	if err := change(); err != nil {
		return err
	}
	if before == nil {
		return nil
	}
	after, _, err := q.reportLead(ctx, id)
	if err != nil {
		return err
	}
	cs := ReportCounts(before, -1)
	if after != nil {
		cs = append(cs, ReportCounts(after, 1)...)
	}
	return q.CountersAdd(ctx, site, model.Day(before.ReceivedAt), string(id), mergeCounts(cs)...)
}

// reportRebuild recounts a site's campaign report counters of the days
// from first to last (inclusive) from its leads, their stages and landing
// visits (ReportLeads), a week at a time; the caller has deleted them.
func (q Q) reportRebuild(ctx context.Context, site model.SiteID, first, last int64) error {
	for d := first; d <= last; d += 7 {
		end := min(d+7, last+1)
		leads, err := q.ReportLeads(ctx, site, model.DayStart(d), model.DayStart(end))
		if err != nil {
			return err
		}
		byDay := map[int64][]model.Count{}
		for _, l := range leads {
			day := model.Day(l.ReceivedAt)
			byDay[day] = append(byDay[day], ReportCounts(l, 1)...)
		}
		for day, cs := range byDay {
			cs = mergeCounts(cs)
			for len(cs) > 0 {
				n := min(len(cs), 1000)
				if err := q.CountersAdd(ctx, site, day, "", cs[:n]...); err != nil {
					return err
				}
				cs = cs[n:]
			}
		}
	}
	return nil
}

// backfillReportCounters counts the campaign report counters of every lead
// already stored (migration 0330): the attribution is Go's, not SQL's.
func backfillReportCounters(ctx context.Context, tx *Tx) error {
	return tx.eachSiteSpan(ctx, `/* Store.backfillReportCounters */ SELECT site_id, MIN(received_at), MAX(received_at) FROM leads
		GROUP BY site_id ORDER BY site_id`, tx.reportRebuild)
}

// eachSiteSpan runs recount, a migration's backfill, for each site and
// the days its rows span: query selects the site, then the first and the
// last of their times (milliseconds), a row a site.
func (q Q) eachSiteSpan(ctx context.Context, query string, recount func(ctx context.Context, site model.SiteID, first, last int64) error) error {
	type span struct {
		site        string
		first, last int64
	}
	var spans []span
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		var s span
		if err := r.Scan(&s.site, &s.first, &s.last); err != nil {
			return err
		}
		spans = append(spans, s)
		return nil
	}, query)
	if err != nil {
		return fmt.Errorf("store: the sites' spans: %w", err)
	}
	for _, s := range spans {
		if err := recount(ctx, model.SiteID(s.site), model.Day(time.UnixMilli(s.first)), model.Day(time.UnixMilli(s.last))); err != nil {
			return err
		}
	}
	return nil
}
