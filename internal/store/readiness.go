package store

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// The statements of ReadinessFigures (a test reads their plans): the
// period's counters of leads by verdict and of Instant Forms leads (a few
// rows a day, whatever the leads), and each of the period's leads' Meta
// events with its stage.
const (
	readinessCountersQuery = `/* Store.ReadinessFigures */ SELECT name, dim, CAST(SUM(n) AS BIGINT) FROM site_counters
		WHERE site_id = ? AND day >= ? AND day <= ? AND name IN ('verdicts', 'lead_ads') GROUP BY name, dim`
	readinessEventsQuery = `/* Store.ReadinessFigures */ SELECT l.id, l.received_at, d.kind, e.event_name, d.created_at,
		COALESCE(d.sent_at, d.created_at), s.at
		FROM leads l
		JOIN delivery_events e ON e.lead_id = l.id AND e.lead_id <> ''
		JOIN delivery_state d ON d.id = e.id
		LEFT JOIN lead_stages s ON s.lead_id = l.id AND d.kind = 'stage:' || s.stage
		WHERE l.site_id = ? AND l.received_at >= ? AND l.received_at < ?
			AND d.destination = 'meta' AND d.state IN ('sent', 'dry_run')
		ORDER BY l.id, d.kind, e.event_name`
)

// ReadinessFigures reads a site's Conversion Leads figures over [from, to),
// whole UTC days (the page asks for whole days; a period that starts or
// ends within a day counts the leads of that whole day): its leads
// received then, from the site's per-day counters (model.CounterVerdicts,
// model.CounterLeadAds), and the Meta events of those leads that Meta
// accepted (or, on a dry-run site, that were built for it). The events
// need the deliveries' state, which no counter keeps yet: that statement
// still reads each lead of the period (a range of leads_site_received),
// its events through delivery_events_lead and their stages through
// lead_stages' key. Matchable and Sampled are left to the caller (they come
// from the payloads).
func (q Q) ReadinessFigures(ctx context.Context, site model.SiteID, from, to time.Time) (*model.ReadinessFigures, error) {
	f := &model.ReadinessFigures{From: from, To: to}
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		var (
			name, dim string
			n         int64
		)
		if err := r.Scan(&name, &dim, &n); err != nil {
			return err
		}
		switch {
		case name == model.CounterLeadAds:
			f.LeadAds += int(n)
		case dim == string(model.VerdictJunk):
			f.Leads += int(n)
		default:
			f.Leads += int(n)
			f.NotJunk += int(n)
		}
		return nil
	}, readinessCountersQuery, string(site), model.Day(from), model.Day(to.Add(-time.Millisecond)))
	if err != nil {
		return nil, fmt.Errorf("store: readiness leads: %w", err)
	}
	type stageKey struct{ kind, name string }
	var (
		order    []stageKey
		leads    = map[stageKey]int{}
		waits    = map[stageKey][]time.Duration{}
		uploaded = map[string]bool{}
		days     = map[int64]bool{}
	)
	// The stage's time is when it happened (lead_stages.at); a qualified
	// event's is when it was queued, the moment the lead became clean; the
	// lead event's is the lead's own.
	err = q.eachRow(ctx, func(r *sql.Rows) error {
		var (
			lead, kind, name          string
			received, created, upload int64
			stageAt                   sql.NullInt64
		)
		if err := r.Scan(&lead, &received, &kind, &name, &created, &upload, &stageAt); err != nil {
			return err
		}
		k := stageKey{kind, name}
		if _, ok := leads[k]; !ok {
			order = append(order, k)
		}
		leads[k]++
		at := received
		switch {
		case stageAt.Valid:
			at = stageAt.Int64
		case kind == model.KindQualified:
			at = created
		}
		waits[k] = append(waits[k], time.Duration(max(at-received, 0))*time.Millisecond)
		uploaded[lead] = true
		if upload >= from.UnixMilli() && upload < to.UnixMilli() {
			days[upload/(24*3600*1000)] = true
		}
		return nil
	}, readinessEventsQuery,
		string(site), from.UnixMilli(), to.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("store: readiness events: %w", err)
	}
	f.Uploaded, f.UploadDays = len(uploaded), len(days)
	for _, k := range order {
		f.Stages = append(f.Stages, model.StageFigure{EventName: k.name, Kind: k.kind, Leads: leads[k],
			MedianDays: model.MedianDays(waits[k])})
	}
	// The lead event first (the funnel's top), then by leads reached.
	sort.SliceStable(f.Stages, func(i, j int) bool {
		a, b := f.Stages[i], f.Stages[j]
		if (a.Kind == model.KindLead) != (b.Kind == model.KindLead) {
			return a.Kind == model.KindLead
		}
		if a.Leads != b.Leads {
			return a.Leads > b.Leads
		}
		return a.EventName < b.EventName
	})
	return f, nil
}
