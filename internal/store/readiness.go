package store

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// readinessCountersQuery is ReadinessFigures' one statement (a test reads
// its plan): the period's counters of leads by verdict, of Instant Forms
// leads and of the Meta events that reached Meta (a few rows a day and
// stage, whatever the leads); 'ready_uploads' by day, to count the days.
const readinessCountersQuery = `/* Store.ReadinessFigures */ SELECT name, dim,
		CASE WHEN name = 'ready_uploads' THEN day ELSE 0 END, CAST(SUM(n) AS BIGINT) FROM site_counters
		WHERE site_id = ? AND day >= ? AND day <= ?
			AND name IN ('verdicts', 'lead_ads', 'ready_waits', 'ready_uploaded', 'ready_uploads',
				'coverage_events', 'coverage_keys', 'coverage_matchable')
		GROUP BY name, dim, CASE WHEN name = 'ready_uploads' THEN day ELSE 0 END`

// ReadinessFigures reads a site's Conversion Leads figures over [from, to),
// whole UTC days (the page asks for whole days; a period that starts or
// ends within a day counts the leads of that whole day), from the site's
// per-day counters: its leads received then (model.CounterVerdicts,
// model.CounterLeadAds), those of them with an event Meta accepted (or, on
// a dry-run site, that was built for it: model.CounterReadyUploaded), their
// events by stage with the median wait to a tenth of a day
// (model.CounterReadyWaits), and the days events reached Meta
// (model.CounterReadyUploads), and the match-key coverage of the events
// sent or built then (model.CounterCoverage*: Sampled, Matchable,
// Coverage).
func (q Q) ReadinessFigures(ctx context.Context, site model.SiteID, from, to time.Time) (*model.ReadinessFigures, error) {
	f := &model.ReadinessFigures{From: from, To: to, Coverage: map[string]int{}}
	type stageKey struct{ kind, name string }
	var (
		order []stageKey
		waits = map[stageKey]map[int]int{}
	)
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		var (
			name, dim string
			day, n    int64
		)
		if err := r.Scan(&name, &dim, &day, &n); err != nil {
			return err
		}
		switch {
		case name == model.CounterLeadAds:
			f.LeadAds += int(n)
		case name == model.CounterReadyUploaded:
			f.Uploaded += int(n)
		case name == model.CounterReadyUploads:
			if n > 0 {
				f.UploadDays++
			}
		case name == model.CounterCoverageEvents:
			f.Sampled += int(n)
		case name == model.CounterCoverageMatchable:
			f.Matchable += int(n)
		case name == model.CounterCoverageKeys:
			f.Coverage[dim] += int(n)
		case name == model.CounterReadyWaits:
			kind, event, b, ok := model.ParseReadyWaitDim(dim)
			if !ok || n == 0 {
				return nil
			}
			k := stageKey{kind, event}
			if waits[k] == nil {
				order = append(order, k)
				waits[k] = map[int]int{}
			}
			waits[k][b] += int(n)
		case dim == string(model.VerdictJunk):
			f.Leads += int(n)
		default:
			f.Leads += int(n)
			f.NotJunk += int(n)
		}
		return nil
	}, readinessCountersQuery, string(site), model.Day(from), model.Day(to.Add(-time.Millisecond)))
	if err != nil {
		return nil, fmt.Errorf("store: readiness: %w", err)
	}
	for _, k := range order {
		leads := 0
		for _, c := range waits[k] {
			leads += c
		}
		if leads == 0 {
			continue
		}
		f.Stages = append(f.Stages, model.StageFigure{EventName: k.name, Kind: k.kind, Leads: leads,
			MedianDays: model.MedianBucketDays(waits[k])})
	}
	sortStages(f.Stages)
	return f, nil
}

// sortStages puts the lead event first (the funnel's top), then the
// stages by leads reached.
func sortStages(st []model.StageFigure) {
	sort.SliceStable(st, func(i, j int) bool {
		a, b := st[i], st[j]
		if (a.Kind == model.KindLead) != (b.Kind == model.KindLead) {
			return a.Kind == model.KindLead
		}
		if a.Leads != b.Leads {
			return a.Leads > b.Leads
		}
		return a.EventName < b.EventName
	})
}

// readyEventsSQL reads the Meta events of leads that are sent or dry_run,
// with their lead, for readyCount (which adds a condition on the rows'
// ids) and the recount (on a site and period): the event's site, kind and
// name, its lead's id and day, its wait bucket (model.WaitBucket of the
// stage's time, the qualified event's queueing or the lead's own, after
// the lead) and its upload day; readyCount also reads how many such
// events its lead has in all (readyAllSQL).
const (
	readyEventsSQL = `SELECT d.site_id AS site_id, d.kind AS kind, e.event_name AS event_name, l.id AS lead_id,
		l.received_at / 86400000 AS day, ` + readyBucketSQL + ` AS bucket, COALESCE(d.sent_at, d.created_at) / 86400000 AS upload`
	// The lead's events are found through delivery_events_lead and each
	// one's state by its key: a scalar subquery the planner cannot turn
	// into a join. As a join, PostgreSQL without statistics yet (a young
	// or busy table autovacuum has not analysed) read delivery_state whole
	// for every lead: 29 ms a lead, seconds an outcome's slice.
	readyAllSQL = `, (SELECT COUNT(*) FROM delivery_events e2 WHERE e2.lead_id = l.id AND e2.lead_id <> '' AND e2.destination = 'meta'
			AND (SELECT d2.state FROM delivery_state d2 WHERE d2.id = e2.id) IN ('sent', 'dry_run'))
		+ (SELECT COUNT(*) FROM delivery_events e3 WHERE e3.lead_id = l.id AND e3.lead_id <> '' AND e3.archived_at IS NOT NULL
			AND e3.destination = 'meta' AND e3.archived_state IN ('sent', 'dry_run'))`
	readyFromSQL = ` FROM delivery_state d JOIN delivery_events e ON e.id = d.id` + readyJoinSQL
	// readyArchivedFromSQL is readyFromSQL of the archived events
	// (migration 0470): d is the archived event's own row, its columns
	// under delivery_state's names.
	readyArchivedFromSQL = ` FROM (SELECT id, site_id, destination, archived_kind AS kind, archived_state AS state,
			archived_created_at AS created_at, archived_sent_at AS sent_at FROM delivery_events WHERE archived_at IS NOT NULL) d
		JOIN delivery_events e ON e.id = d.id` + readyJoinSQL
	readyJoinSQL = `
		JOIN leads l ON l.id = e.lead_id
		LEFT JOIN lead_stages s ON s.lead_id = l.id AND d.kind = 'stage:' || s.stage
		WHERE e.lead_id <> '' AND d.destination = 'meta' AND d.state IN ('sent', 'dry_run')`
)

// readyWaitSQL is an event's wait after its lead, in milliseconds, and
// readyBucketSQL its model.WaitBucket (3650 tenths of a day of 8,640,000
// ms at most), over the joins of readyEventsSQL (d, l, s).
const (
	readyWaitSQL   = `(COALESCE(s.at, CASE WHEN d.kind = 'qualified' THEN d.created_at ELSE l.received_at END) - l.received_at)`
	readyBucketSQL = `CASE WHEN ` + readyWaitSQL + ` <= 0 THEN 0 WHEN ` + readyWaitSQL + ` >= 31536000000 THEN 3650
		ELSE ` + readyWaitSQL + ` / 8640000 END`
)

// readyCount adds the readiness counters (model.CounterReadyWaits,
// CounterReadyUploaded, CounterReadyUploads) of the outbox rows ids, just
// made sent or dry_run in this transaction (the ones that are not Meta
// events of a lead count for nothing). A lead whose every uploaded event
// is among them has its first: it joins CounterReadyUploaded.
func (q Q) readyCount(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	var list []readyRow
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		var x readyRow
		if err := r.Scan(&x.site, &x.kind, &x.name, &x.lead, &x.day, &x.bucket, &x.upload, &x.all); err != nil {
			return err
		}
		list = append(list, x)
		return nil
	}, `/* Store.readyCount */ `+readyEventsSQL+readyAllSQL+readyFromSQL+` AND d.id IN (?`+strings.Repeat(", ?", len(ids)-1)+`)`, args...)
	if err != nil {
		return fmt.Errorf("store: readiness counters: %w", err)
	}
	return q.readyAdd(ctx, list, false)
}

// readyRow is one event readyAdd counts: its site, kind, name, lead, the
// lead's day, its wait bucket, its upload day, and how many uploaded Meta
// events its lead has (with it, or before it: readyAdd's before).
type readyRow struct {
	site, kind, name, lead string
	day, bucket, upload    int64
	all                    int
}

// readyAdd adds the readiness counters of events just recorded sent or
// built. A lead's first such event joins CounterReadyUploaded: the lead
// has no other than those in list (all counts them, or, with before, it
// counts the ones before them and is 0).
func (q Q) readyAdd(ctx context.Context, list []readyRow, before bool) error {
	perLead := map[string]int{}
	for _, x := range list {
		perLead[x.lead]++
	}
	var byDay dayCounts
	for _, x := range list {
		site := model.SiteID(x.site)
		byDay.add(site, x.day, x.lead, model.Count{Name: model.CounterReadyWaits, Dim: model.ReadyWaitDim(x.kind, x.name, int(x.bucket)), N: 1})
		byDay.add(site, x.upload, x.lead, model.Count{Name: model.CounterReadyUploads, N: 1})
		n, ok := perLead[x.lead]
		if ok && ((before && x.all == 0) || (!before && n == x.all)) {
			byDay.add(site, x.day, x.lead, model.Count{Name: model.CounterReadyUploaded, N: 1})
			delete(perLead, x.lead)
		}
	}
	return byDay.flush(ctx, q)
}

// dayCounts gathers counts by site and day, to be added (flush) a day at
// a time in the order the days came, each keyed (CountersAdd's shard) by
// the row that brought the day first.
type dayCounts struct {
	days   []siteDay
	counts map[siteDay][]model.Count
	keys   map[siteDay]string
}

type siteDay struct {
	site model.SiteID
	day  int64
}

func (c *dayCounts) add(site model.SiteID, day int64, key string, cs ...model.Count) {
	k := siteDay{site, day}
	if _, ok := c.counts[k]; !ok {
		if c.counts == nil {
			c.counts, c.keys = map[siteDay][]model.Count{}, map[siteDay]string{}
		}
		c.days = append(c.days, k)
		c.keys[k] = key
	}
	c.counts[k] = append(c.counts[k], cs...)
}

func (c *dayCounts) flush(ctx context.Context, q Q) error {
	for _, k := range c.days {
		if err := q.CountersAdd(ctx, k.site, k.day, c.keys[k], mergeCounts(c.counts[k])...); err != nil {
			return err
		}
	}
	return nil
}

// readyRecordSQL is DeliveryRecord's update of a slice (update, ending in
// its WHERE) on PostgreSQL when the slice holds Meta events of leads
// recorded sent or built, to follow WITH and the leases' CTE
// (recordSlice): a statement whose data-modifying CTE updates
// the rows and whose read returns each updated row's id with, for a Meta
// event of a lead, what readyAdd counts; the read sees the database before
// the update, so its count of the lead's uploaded events is of those
// before (readyAdd's before).
func readyRecordSQL(update string) string {
	return `d AS (` + update + ` RETURNING id, site_id, destination, kind, created_at, sent_at)
		SELECT d.id, l.id IS NOT NULL, d.site_id, d.kind, COALESCE(e.event_name, ''), COALESCE(l.id, ''),
			COALESCE(l.received_at / 86400000, 0), CASE WHEN l.id IS NULL THEN 0 ELSE ` + readyBucketSQL + ` END,
			COALESCE(d.sent_at, d.created_at) / 86400000,
			CASE WHEN l.id IS NULL THEN 0 ELSE ` + readyAllSQL[2:] + ` END
		FROM d LEFT JOIN delivery_events e ON e.id = d.id AND e.lead_id <> '' AND d.destination = 'meta'
		LEFT JOIN leads l ON l.id = e.lead_id
		LEFT JOIN lead_stages s ON s.lead_id = l.id AND d.kind = 'stage:' || s.stage`
}

// readyRecountEventsSQL is readyEventsSQL of the Meta events, the
// archived ones included, of a site's leads received in a period (the
// site and the period's bounds in milliseconds, then the same again): one
// SELECT over the events in delivery_state and one over the archived ones,
// each reading the period's leads on (site_id, received_at) and their
// events on delivery_events_lead. Joined to the deliveries view (both
// kinds of rows in one), SQLite 3.54 read the view whole for each lead
// instead: every event of every site, seven minutes at 10,000 leads.
const readyRecountEventsSQL = readyEventsSQL + readyFromSQL + readyPeriodSQL + `
		UNION ALL ` + readyEventsSQL + readyArchivedFromSQL + readyPeriodSQL

// readyPeriodSQL is readyRecountEventsSQL's condition on the leads.
const readyPeriodSQL = ` AND l.site_id = ? AND l.received_at >= ? AND l.received_at < ?`

// readyRecount are the statements of CountersRebuild that recount the
// readiness counters of the leads of a site received in a period
// (readyRecountEventsSQL's placeholders, in each).
func readyRecount() []string {
	// The period's events are read once for both counters.
	return []string{
		`/* Store.CountersRebuild */ WITH r AS (` + readyRecountEventsSQL + `)
			INSERT INTO site_counters (site_id, day, name, dim, shard, n)
			SELECT site_id, day, 'ready_waits', kind || '|' || event_name || '|' || CAST(bucket AS TEXT), 0, COUNT(*)
			FROM r GROUP BY site_id, day, kind, event_name, bucket
			UNION ALL SELECT site_id, day, 'ready_uploaded', '', 0, COUNT(DISTINCT lead_id) FROM r GROUP BY site_id, day`,
	}
}

// readyUploadsRecount is the statement of CountersRebuild that recounts
// model.CounterReadyUploads of a site (the first placeholder) over a
// period of upload days (the next two, in milliseconds).
const readyUploadsRecount = `/* Store.CountersRebuild */ INSERT INTO site_counters (site_id, day, name, dim, shard, n)
	SELECT d.site_id, COALESCE(d.sent_at, d.created_at) / 86400000, 'ready_uploads', '', 0, COUNT(*)
	FROM deliveries d JOIN leads l ON l.id = d.lead_id
	WHERE d.lead_id <> '' AND d.destination = 'meta' AND d.state IN ('sent', 'dry_run')
		AND d.site_id = ? AND COALESCE(d.sent_at, d.created_at) >= ? AND COALESCE(d.sent_at, d.created_at) < ?
	GROUP BY d.site_id, COALESCE(d.sent_at, d.created_at) / 86400000`
