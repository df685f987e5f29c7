package store

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/cleanads/cleanads/internal/model"
)

// counterShards is how many rows one counter of one day is spread over on
// PostgreSQL: an upsert holds its row's lock until its transaction commits,
// so with one row every visit to a site would wait for the one before it
// to commit. With 10 connections, 32 rows make two transactions of one
// site meet on a row about once in four; a read sums 32 rows a counter and
// day. SQLite has one writer and uses one row.
const counterShards = 32

// shard picks the row of a counter an increment goes to, from a key of the
// row being counted (its id): deterministic, so a statement run again (a
// SQLite batch rebuilt after a failed call) does the same.
func (q Q) shard(key string) int {
	if q.dialect != Postgres || key == "" {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % counterShards)
}

// CountersAdd adds counts to a site's counters of a day (model.Day), in one
// statement; key, an id of the row being counted, picks the shard. Call it
// in the transaction that stores what it counts (VisitInsert and
// LeadInsert do).
func (q Q) CountersAdd(ctx context.Context, site model.SiteID, day int64, key string, counts ...model.Count) error {
	if len(counts) == 0 {
		return nil
	}
	shard := q.shard(key)
	var b strings.Builder
	b.WriteString(`/* Store.CountersAdd */ INSERT INTO site_counters (site_id, day, name, dim, shard, n) VALUES `)
	args := make([]any, 0, 6*len(counts))
	for i, c := range counts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?)")
		args = append(args, string(site), day, c.Name, c.Dim, shard, c.N)
	}
	b.WriteString(` ON CONFLICT (site_id, day, name, dim, shard) DO UPDATE SET n = site_counters.n + excluded.n`)
	if _, err := q.exec(ctx, b.String(), args...); err != nil {
		return fmt.Errorf("store: add counters: %w", err)
	}
	return nil
}

// Counters returns a site's counters of the days from first to last
// (inclusive), each day's total of each name and dim, by day, name and dim;
// all but the campaign report's (ReportCounters), which a site with many
// ads has many of.
func (q Q) Counters(ctx context.Context, site model.SiteID, first, last int64) (model.Counters, error) {
	return q.counters(ctx, site, first, last, "NOT LIKE")
}

// ReportCounters returns a site's campaign report counters
// (model.CounterReport*) of the days from first to last (inclusive), as
// Counters does the others.
func (q Q) ReportCounters(ctx context.Context, site model.SiteID, first, last int64) (model.Counters, error) {
	return q.counters(ctx, site, first, last, "LIKE")
}

func (q Q) counters(ctx context.Context, site model.SiteID, first, last int64, like string) (model.Counters, error) {
	rows, err := q.query(ctx, `/* Store.Counters */ SELECT day, name, dim, CAST(SUM(n) AS BIGINT) FROM site_counters
		WHERE site_id = ? AND day >= ? AND day <= ? AND name `+like+` 'report\_%' ESCAPE '\'
		GROUP BY day, name, dim ORDER BY day, name, dim`,
		string(site), first, last)
	return scanAll(rows, err, "counters", func(r scanner) (model.Counter, error) {
		var c model.Counter
		err := r.Scan(&c.Day, &c.Name, &c.Dim, &c.N)
		return c, err
	})
}

// CountersRebuild recounts a site's visit, lead, verdict, stage, reason,
// agreement, readiness and campaign report counters of the days from first to last
// (inclusive) from the visits, leads, their history, stages and Meta
// events stored: for
// when they are in doubt. Days whose rows retention already deleted would be
// counted as empty: keep the range within the kept ones. On PostgreSQL the
// counters are locked for the transaction, so that an intake committing
// meanwhile is counted once, either in the recount or after it.
func (q Q) CountersRebuild(ctx context.Context, site model.SiteID, first, last int64) error {
	if q.dialect == Postgres {
		if _, err := q.exec(ctx, `/* Store.CountersRebuild */ LOCK TABLE site_counters IN EXCLUSIVE MODE`); err != nil {
			return fmt.Errorf("store: rebuild counters: %w", err)
		}
	}
	from, to := first*86400000, (last+1)*86400000
	stmts := []struct {
		sql  string
		args []any
	}{
		{`/* Store.CountersRebuild */ DELETE FROM site_counters WHERE site_id = ? AND day >= ? AND day <= ?
			AND name IN ('visits', 'form_visits', 'leads', 'leads_untracked', 'lead_ads', 'verdicts', 'stages', 'stage_cents',
			'reasons', 'reasons_judged', 'reasons_junk', 'reasons_customers', 'reasons_overturned', 'reasons_crm', 'agreement',
			'report_verdicts', 'report_junk', 'report_stages', 'report_cents', 'report_valued',
			'ready_waits', 'ready_uploaded', 'ready_uploads')`,
			[]any{string(site), first, last}},
		{`/* Store.CountersRebuild */ INSERT INTO site_counters (site_id, day, name, dim, shard, n)
			SELECT site_id, at / 86400000, 'visits', '', 0, COUNT(*) FROM visits WHERE site_id = ? AND at >= ? AND at < ?
			GROUP BY site_id, at / 86400000`, []any{string(site), from, to}},
		{`/* Store.CountersRebuild */ INSERT INTO site_counters (site_id, day, name, dim, shard, n)
			SELECT site_id, at / 86400000, 'form_visits', '', 0, COUNT(*) FROM visits WHERE site_id = ? AND at >= ? AND at < ?
			AND lead_forms > 0 GROUP BY site_id, at / 86400000`, []any{string(site), from, to}},
		{`/* Store.CountersRebuild */ INSERT INTO site_counters (site_id, day, name, dim, shard, n)
			SELECT site_id, received_at / 86400000, 'leads', source, 0, COUNT(*) FROM leads WHERE site_id = ? AND received_at >= ? AND received_at < ?
			GROUP BY site_id, received_at / 86400000, source`, []any{string(site), from, to}},
		{`/* Store.CountersRebuild */ INSERT INTO site_counters (site_id, day, name, dim, shard, n)
			SELECT site_id, received_at / 86400000, 'leads_untracked', source, 0, COUNT(*) FROM leads WHERE site_id = ? AND received_at >= ? AND received_at < ?
			AND fill_by <> 'tracker' GROUP BY site_id, received_at / 86400000, source`, []any{string(site), from, to}},
		{`/* Store.CountersRebuild */ INSERT INTO site_counters (site_id, day, name, dim, shard, n)
			SELECT site_id, received_at / 86400000, 'lead_ads', '', 0, COUNT(*) FROM leads WHERE site_id = ? AND received_at >= ? AND received_at < ?
			AND lead_ads_id <> '' GROUP BY site_id, received_at / 86400000`, []any{string(site), from, to}},
		{`/* Store.CountersRebuild */ INSERT INTO site_counters (site_id, day, name, dim, shard, n)
			SELECT site_id, received_at / 86400000, 'verdicts', verdict, 0, COUNT(*) FROM leads WHERE site_id = ? AND received_at >= ? AND received_at < ?
			GROUP BY site_id, received_at / 86400000, verdict`, []any{string(site), from, to}},
		{`/* Store.CountersRebuild */ INSERT INTO site_counters (site_id, day, name, dim, shard, n)
			SELECT l.site_id, s.at / 86400000, 'stages', s.stage, 0, COUNT(*) FROM lead_stages s JOIN leads l ON l.id = s.lead_id
			WHERE l.site_id = ? AND s.at >= ? AND s.at < ? GROUP BY l.site_id, s.at / 86400000, s.stage`, []any{string(site), from, to}},
		{`/* Store.CountersRebuild */ INSERT INTO site_counters (site_id, day, name, dim, shard, n)
			SELECT l.site_id, s.at / 86400000, 'stage_cents', s.stage || ' ' || s.currency, 0, SUM(` + q.centsSQL("s.value") + `)
			FROM lead_stages s JOIN leads l ON l.id = s.lead_id
			WHERE l.site_id = ? AND s.at >= ? AND s.at < ? AND s.value IS NOT NULL AND s.currency <> ''
			GROUP BY l.site_id, s.at / 86400000, s.stage, s.currency`, []any{string(site), from, to}},
	}
	for _, a := range append(q.agreementRecount(), readyRecount()...) {
		stmts = append(stmts, struct {
			sql  string
			args []any
		}{a, []any{string(site), from, to}})
	}
	for _, st := range stmts {
		if _, err := q.exec(ctx, st.sql, st.args...); err != nil {
			return fmt.Errorf("store: rebuild counters: %w", err)
		}
	}
	return q.reportRebuild(ctx, site, first, last)
}

// centsSQL is the SQL of model.Cents(col): hundredths rounded half up, as
// a BIGINT. Each engine's cast of a real rounds its own way (SQLite
// truncates, PostgreSQL rounds half to even), so each gets the expression
// that floors.
func (q Q) centsSQL(col string) string {
	if q.dialect == Postgres {
		return "CAST(FLOOR(" + col + " * 100 + 0.5) AS BIGINT)"
	}
	// Stage values are 0 or more: truncation is the floor.
	return "CAST(" + col + " * 100 + 0.5 AS INTEGER)"
}

// leadCounts are the counts one lead adds: its source's, its verdict's and
// its reasons' (model.CounterReasons*, model.CounterAgreement; a lead
// stored already decided by the owner or a CRM has no history yet, and its
// verdict is taken for the rules' one).
func leadCounts(l *model.Lead) []model.Count {
	src := leadSource(l.Source)
	cs := []model.Count{{Name: model.CounterLeads, Dim: src, N: 1}, {Name: model.CounterVerdicts, Dim: string(l.Verdict), N: 1}}
	if l.FillBy != model.FillByTracker {
		cs = append(cs, model.Count{Name: model.CounterLeadsUntracked, Dim: src, N: 1})
	}
	if l.LeadAdsID != "" {
		cs = append(cs, model.Count{Name: model.CounterLeadAds, N: 1})
	}
	a := agreement{Codes: pointCodes(l.Reasons), DecidedBy: l.DecidedBy, Verdict: string(l.Verdict)}
	if a.DecidedBy == model.DecidedByOwner || a.DecidedBy == model.DecidedByCRM {
		a.Rules = string(l.Verdict)
	}
	return mergeCounts(append(cs, a.counts(1)...))
}

// leadVerdictSet runs set, an UPDATE of one lead that writes its verdict
// (the new one, verdict), reasons and who decided, and ends in "WHERE id =
// ? AND verdict = ?", with args and then the lead's id and the verdict it
// had, and moves the lead in its site's counters: from the old verdict to
// the new, and in the reason and agreement counters from what it was to
// what it is. The verdict read first is the update's condition (and on
// PostgreSQL the row is locked from that read): an update that found it
// changed meanwhile reads it again, so the counters always move from the
// state the update replaced.
func (q Q) leadVerdictSet(ctx context.Context, id model.LeadID, verdict model.Verdict, set string, args ...any) error {
	for range 5 {
		site, received, before, err := q.leadState(ctx, id)
		if err != nil {
			return err
		}
		reportBefore, _, err := q.reportLead(ctx, id)
		if err != nil {
			return err
		}
		res, err := q.exec(ctx, set, append(args, string(id), before.Verdict)...)
		if err != nil {
			return fmt.Errorf("store: set verdict of lead %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			continue
		}
		_, _, after, err := q.leadState(ctx, id)
		if err != nil {
			return err
		}
		reportAfter, _, err := q.reportLead(ctx, id)
		if err != nil {
			return err
		}
		cs := append(before.counts(-1), after.counts(1)...)
		if reportBefore != nil && reportAfter != nil {
			cs = append(cs, ReportCounts(reportBefore, -1)...)
			cs = append(cs, ReportCounts(reportAfter, 1)...)
		}
		cs = append(cs, model.Count{Name: model.CounterVerdicts, Dim: before.Verdict, N: -1},
			model.Count{Name: model.CounterVerdicts, Dim: string(verdict), N: 1})
		return q.CountersAdd(ctx, model.SiteID(site), received/86400000, string(id), mergeCounts(cs)...)
	}
	return fmt.Errorf("store: set verdict of lead %s: it kept changing: %w", id, model.ErrConflict)
}
