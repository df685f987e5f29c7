package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// ReportLookback is how long before a web lead its visitor's visits are
// read for the ad click or campaign that brought them.
const ReportLookback = 30 * 24 * time.Hour

// The report's three queries, each bounded by the period (site, from, to
// in Unix milliseconds) on an index: the leads on (site_id,
// received_at); their stages by the stages' key (lead_id, stage); the
// visits of their visitors that carried an ad click or a campaign on
// (site_id, visitor_id, at), from ReportLookback before the period (site,
// from, to, then the leads' site, from, to).
const (
	reportLeadsQuery = `/* Store.ReportLeads */ SELECT id, received_at, visitor_id, source, source_detail, page_url, fbclid, gclid,
		verdict, score, reasons, rules_version, decided_by
		FROM leads WHERE site_id = ? AND received_at >= ? AND received_at < ? ORDER BY received_at, id`
	reportStagesQuery = `/* Store.ReportLeads */ SELECT s.lead_id, s.stage, s.at, s.value, s.currency
		FROM leads l JOIN lead_stages s ON s.lead_id = l.id
		WHERE l.site_id = ? AND l.received_at >= ? AND l.received_at < ? ORDER BY s.lead_id, s.stage`
	reportVisitsQuery = `/* Store.ReportLeads */ SELECT v.visitor_id, v.at, COALESCE(v.fbclid, ''), COALESCE(v.gclid, ''),
		COALESCE(v.ttclid, ''), COALESCE(v.utm_source, ''), COALESCE(v.utm_medium, ''), COALESCE(v.utm_campaign, ''),
		COALESCE(v.utm_term, ''), COALESCE(v.utm_content, '')
		FROM visits v WHERE v.site_id = ? AND v.at >= ? AND v.at < ?
		AND v.visitor_id IN (SELECT l.visitor_id FROM leads l WHERE l.site_id = ? AND l.received_at >= ? AND l.received_at < ? AND l.visitor_id <> '')
		AND (COALESCE(v.fbclid, '') <> '' OR COALESCE(v.gclid, '') <> '' OR COALESCE(v.ttclid, '') <> ''
			OR COALESCE(v.utm_campaign, '') <> '' OR COALESCE(v.utm_source, '') <> '')
		ORDER BY v.visitor_id, v.at, v.event_id`
)

// ReportLead is what the campaign report reads of one lead received in its
// period: where it came from, its verdict and its stages.
type ReportLead struct {
	ID         model.LeadID
	ReceivedAt time.Time
	// Source (model.SourceWeb, ...) and Detail: Lead Ads' campaign, ad set
	// and ad, a Click-to-WhatsApp ad's id.
	Source string
	Detail map[string]string
	// PageURL, FBClid and GClid are the form's page and the click ids the
	// lead itself carries.
	PageURL, FBClid, GClid string
	model.Decision
	// Landing is the last visit of the lead's visitor, up to the lead and
	// within ReportLookback, that carried a campaign (utm_*) or an ad click
	// id; nil when none did.
	Landing *model.Visit
	// Stages are the CRM stages the lead reached (so far), by name.
	Stages []model.LeadStage
}

// ReportLeads reads the leads of a site received from from (inclusive) to
// to (exclusive), oldest first, with their landing visits and stages: three
// queries bounded by the period on the leads' (site_id, received_at) index,
// the visits' (site_id, visitor_id, at) and the stages' key; none reads a
// lead of another period.
func (q Q) ReportLeads(ctx context.Context, site model.SiteID, from, to time.Time) ([]*ReportLead, error) {
	lo, hi := from.UnixMilli(), to.UnixMilli()
	rows, err := q.query(ctx, reportLeadsQuery,
		string(site), lo, hi)
	if err != nil {
		return nil, fmt.Errorf("store: report leads: %w", err)
	}
	type ref struct {
		l       *ReportLead
		visitor string
	}
	var (
		list []*ReportLead
		refs []ref
		byID = map[model.LeadID]*ReportLead{}
	)
	err = func() error {
		defer rows.Close()
		for rows.Next() {
			var (
				l                 ReportLead
				id, visitor, verd string
				detail, reasons   string
				received          int64
			)
			if err := rows.Scan(&id, &received, &visitor, &l.Source, &detail, &l.PageURL, &l.FBClid, &l.GClid,
				&verd, &l.Score, &reasons, &l.RulesVersion, &l.DecidedBy); err != nil {
				return err
			}
			l.ID, l.ReceivedAt, l.Verdict = model.LeadID(id), time.UnixMilli(received).UTC(), model.Verdict(verd)
			if err := json.Unmarshal([]byte(detail), &l.Detail); err != nil {
				return fmt.Errorf("lead %s source detail: %w", id, err)
			}
			if err := json.Unmarshal([]byte(reasons), &l.Reasons); err != nil {
				return fmt.Errorf("lead %s reasons: %w", id, err)
			}
			list = append(list, &l)
			byID[l.ID] = &l
			if visitor != "" {
				refs = append(refs, ref{&l, visitor})
			}
		}
		return rows.Err()
	}()
	if err != nil {
		return nil, fmt.Errorf("store: report leads: %w", err)
	}
	if len(list) == 0 {
		return nil, nil
	}

	stages, err := q.query(ctx, reportStagesQuery,
		string(site), lo, hi)
	if err != nil {
		return nil, fmt.Errorf("store: report stages: %w", err)
	}
	err = func() error {
		defer stages.Close()
		for stages.Next() {
			var (
				st    model.LeadStage
				lead  string
				at    int64
				value sql.NullFloat64
			)
			if err := stages.Scan(&lead, &st.Stage, &at, &value, &st.Currency); err != nil {
				return err
			}
			st.LeadID, st.SiteID, st.At = model.LeadID(lead), site, time.UnixMilli(at).UTC()
			if value.Valid {
				v := value.Float64
				st.Value = &v
			}
			if l := byID[st.LeadID]; l != nil {
				l.Stages = append(l.Stages, st)
			}
		}
		return stages.Err()
	}()
	if err != nil {
		return nil, fmt.Errorf("store: report stages: %w", err)
	}

	if len(refs) == 0 {
		return list, nil
	}
	// The visits of the period's leads' visitors that carried an ad click
	// or a campaign, oldest first for each visitor.
	visits, err := q.query(ctx, reportVisitsQuery,
		string(site), lo-ReportLookback.Milliseconds(), hi, string(site), lo, hi)
	if err != nil {
		return nil, fmt.Errorf("store: report visits: %w", err)
	}
	byVisitor := map[string][]*model.Visit{}
	err = func() error {
		defer visits.Close()
		for visits.Next() {
			v := &model.Visit{SiteID: site}
			var at int64
			if err := visits.Scan(&v.VisitorID, &at, &v.FBClid, &v.GClid, &v.TTClid, &v.Source, &v.Medium, &v.Campaign,
				&v.Term, &v.Content); err != nil {
				return err
			}
			v.At = time.UnixMilli(at).UTC()
			byVisitor[v.VisitorID] = append(byVisitor[v.VisitorID], v)
		}
		return visits.Err()
	}()
	if err != nil {
		return nil, fmt.Errorf("store: report visits: %w", err)
	}
	for _, r := range refs {
		for _, v := range byVisitor[r.visitor] {
			if v.At.After(r.l.ReceivedAt) {
				break
			}
			if !v.At.Before(r.l.ReceivedAt.Add(-ReportLookback)) {
				r.l.Landing = v
			}
		}
	}
	return list, nil
}
