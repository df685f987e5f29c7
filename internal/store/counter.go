package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	"github.com/cleanads/cleanads/internal/model"
)

// counterShards is how many rows one counter of one day is spread over on
// PostgreSQL: an upsert holds its row's lock until its transaction commits,
// so with one row every visit to a site would wait for the one before it
// to commit. With 10 connections, 32 rows make two transactions of one
// site meet on a row about once in four; a read sums 32 rows a counter and
// day. Past days see few writes: the hourly retention job folds their rows
// into one (CountersFold), so only today's and yesterday's stay spread.
// SQLite has one writer and uses one row.
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

// CountersAdd adds counts to a site's counters of a day (model.Day); key,
// an id of the row being counted, picks the shard. Call it in the
// transaction that stores what it counts (VisitInsert and LeadInsert do):
// there the counts are kept until the transaction's work is done and then
// written all at once (counterTally.flush), so that the counter rows are
// the last rows it locks and are locked in one order in every transaction.
// Outside a transaction they are written at once, in that order too.
func (q Q) CountersAdd(ctx context.Context, site model.SiteID, day int64, key string, counts ...model.Count) error {
	if len(counts) == 0 {
		return nil
	}
	t := q.tally
	if t == nil {
		t = &counterTally{}
	}
	shard := q.shard(key)
	for _, c := range counts {
		t.add(counterKey{site: string(site), day: day, name: c.Name, dim: c.Dim, shard: shard}, c.N)
	}
	if q.tally == nil {
		return t.flush(ctx, q)
	}
	return nil
}

// counterKey is one row of site_counters.
type counterKey struct {
	site      string
	day       int64
	name, dim string
	shard     int
}

// compare is the one order every transaction locks counter rows in: two
// transactions that upsert rows they share each take the first shared row
// before any other, so neither can hold one the other waits for while it
// waits for one the other holds. (PostgreSQL aborted one of two nodes
// recording outcomes in their own orders with a deadlock; its event was
// then sent again when its lease ran out.)
func (k counterKey) compare(o counterKey) int {
	return cmp.Or(strings.Compare(k.site, o.site), cmp.Compare(k.day, o.day), strings.Compare(k.name, o.name),
		strings.Compare(k.dim, o.dim), cmp.Compare(k.shard, o.shard))
}

// pageViewKey is one row of pageview_counts.
type pageViewKey struct {
	site string
	day  int64
}

// counterTally keeps a transaction's counts (site_counters and
// pageview_counts) until its work is done: DB.InTx has it flushed after
// the caller's function, so the counter rows are the last the transaction
// locks, each once, in one order (site_counters by counterKey.compare, then
// pageview_counts by site and day). A transaction that holds a counter
// row then only ever waits for a counter row later in that order, and a
// cycle of waits would need a row before itself: no deadlock can involve
// a counter row.
type counterTally struct {
	counters  map[counterKey]int64
	pageViews map[pageViewKey]int64
}

func (t *counterTally) add(k counterKey, n int64) {
	if t.counters == nil {
		t.counters = map[counterKey]int64{}
	}
	t.counters[k] += n
}

func (t *counterTally) addPageViews(site model.SiteID, day, n int64) {
	if t.pageViews == nil {
		t.pageViews = map[pageViewKey]int64{}
	}
	t.pageViews[pageViewKey{string(site), day}] += n
}

// merge adds o's counts to t's.
func (t *counterTally) merge(o *counterTally) {
	for k, n := range o.counters {
		t.add(k, n)
	}
	for k, n := range o.pageViews {
		if t.pageViews == nil {
			t.pageViews = map[pageViewKey]int64{}
		}
		t.pageViews[k] += n
	}
}

// empty reports whether t keeps no counts.
func (t *counterTally) empty() bool { return len(t.counters) == 0 && len(t.pageViews) == 0 }

// counterRows is how many counter rows one statement upserts at most
// (six arguments each: under SQLite's 32,766 and PostgreSQL's 65,535).
const counterRows = 500

// counterRowsPrepared is how many counter rows one statement upserts at
// most on SQLite, whose committer prepares a statement of up to
// stmtArgsMax arguments once and parses a longer one at every use: a group
// commit's batch of leads writes a hundred counter rows or more at once
// (IntakeTx), in statements of this many rows and one of the rest.
const counterRowsPrepared = stmtArgsMax / 6

// flush writes the counts kept and forgets them: counts that came to 0 are
// left out, the rest upserted in order, counterRows rows a statement (a
// multi-row VALUES list upserts its rows one after the other, in the
// list's order).
func (t *counterTally) flush(ctx context.Context, q Q) error {
	keys := make([]counterKey, 0, len(t.counters))
	for k, n := range t.counters {
		if n != 0 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, counterKey.compare)
	most := counterRows
	if q.dialect == SQLite {
		most = counterRowsPrepared
	}
	for len(keys) > 0 {
		n := min(len(keys), most)
		if err := t.upsert(ctx, q, keys[:n]); err != nil {
			return err
		}
		keys = keys[n:]
	}
	t.counters = nil
	pvs := make([]pageViewKey, 0, len(t.pageViews))
	for k, n := range t.pageViews {
		if n != 0 {
			pvs = append(pvs, k)
		}
	}
	slices.SortFunc(pvs, func(a, b pageViewKey) int {
		return cmp.Or(strings.Compare(a.site, b.site), cmp.Compare(a.day, b.day))
	})
	for _, k := range pvs {
		_, err := q.exec(ctx, `/* Store.DeliveryRecord */ INSERT INTO pageview_counts (site_id, day, sent) VALUES (?, ?, ?)
			ON CONFLICT (site_id, day) DO UPDATE SET sent = pageview_counts.sent + excluded.sent`,
			k.site, k.day, t.pageViews[k])
		if err != nil {
			return fmt.Errorf("store: count sent PageViews: %w", err)
		}
	}
	t.pageViews = nil
	return nil
}

// upsert adds the counts of keys, in their order, in one statement; a
// visit's (the intake's commonest) goes through visitCount's statements,
// which bind the site's id alone.
func (t *counterTally) upsert(ctx context.Context, q Q, keys []counterKey) error {
	if v := keys[0]; v.dim == "" && t.counters[v] == 1 && (len(keys) == 1 && v.name == model.CounterVisits ||
		len(keys) == 2 && v.name == model.CounterFormVisits && keys[1] == counterKey{v.site, v.day, model.CounterVisits, "", v.shard} && t.counters[keys[1]] == 1) {
		var err error
		if len(keys) == 2 {
			_, err = q.exec(ctx, formVisitCountSQL, v.site, v.day, v.shard, v.site, v.day, v.shard)
		} else {
			_, err = q.exec(ctx, visitCountSQL, v.site, v.day, v.shard)
		}
		if err != nil {
			return fmt.Errorf("store: count visit: %w", err)
		}
		return nil
	}
	var b strings.Builder
	b.WriteString(`/* Store.CountersAdd */ INSERT INTO site_counters (site_id, day, name, dim, shard, n) VALUES `)
	args := make([]any, 0, 6*len(keys))
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?)")
		args = append(args, k.site, k.day, k.name, k.dim, k.shard, t.counters[k])
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
// agreement, readiness, match-key coverage and campaign report counters of the days from first to last
// (inclusive) from the visits, leads, their history, stages and Meta
// events stored (this transaction's own included): for
// when they are in doubt. Days whose rows retention already deleted would be
// counted as empty: keep the range within the kept ones. On PostgreSQL the
// counters are locked for the transaction, so that an intake committing
// meanwhile is counted once, either in the recount or after it.
// DB.CountersRebuild does the same from snapshots, beside the intake.
func (q Q) CountersRebuild(ctx context.Context, site model.SiteID, first, last int64) error {
	if err := q.countersRecount(ctx, site, first, last, recountByDay); err != nil {
		return err
	}
	return q.countersRecount(ctx, site, first, last, recountWhole)
}

// rebuildSliceDays is how many days DB.CountersRebuild recounts from one
// snapshot on SQLite: at a million leads a year about 20,000 leads and
// 200,000 visits, read on indexes by their day. A reader's snapshot keeps
// the log from being checkpointed past it, so it is kept short.
// PostgreSQL reads the whole period from one snapshot, which keeps back
// nobody's writes: its planner reads a long period in one pass (hash
// joins), and per week it would read the visits through their BRIN index,
// which narrows a week only when the visits were stored in time order
// (the scale tool stores them over the whole year at once).
const rebuildSliceDays = 7

// CountersRebuild is Q.CountersRebuild without holding the writer (on
// PostgreSQL, the counters' lock) while it reads: it recounts from a
// snapshot of the database read beside the intake and then adds, in a
// short transaction, the difference between the recount and the counters
// as that snapshot had them; counters that were right are not written at
// all. The counters stay exact: those the snapshot read are what the
// rows it read made them, plus the error being put right; an intake
// committed after the snapshot has added its own counts since, which the
// difference leaves as they are. So each counter ends as the recount of
// the snapshot's rows plus what was counted after it, as a recount in one
// transaction would have left it at the snapshot's moment. (A counter
// whose recount is none keeps a row of 0, as a reader sums it.) The
// counters counted on the day of a visit or of a lead's receipt are read
// rebuildSliceDays days a snapshot; those counted on a stage's or a Meta
// event's upload day (recountWhole), whose days no index has, in one.
func (db *DB) CountersRebuild(ctx context.Context, site model.SiteID, first, last int64) error {
	slice := int64(rebuildSliceDays)
	if db.dialect == Postgres {
		slice = max(last-first+1, 1)
	}
	for a := first; a <= last; a += slice {
		if err := db.countersCorrect(ctx, site, a, min(a+slice-1, last), recountByDay); err != nil {
			return err
		}
	}
	return db.countersCorrect(ctx, site, first, last, recountWhole)
}

// recountInsert is how each of recountSQL's statements writes what it
// counts; without it the statement reads the counts, as site_counters'
// columns.
const recountInsert = `INSERT INTO site_counters (site_id, day, name, dim, shard, n)`

// countersCorrect recounts a family of a site's counters of the days from
// first to last from one snapshot and adds the difference from the
// counters of that snapshot (see DB.CountersRebuild).
func (db *DB) countersCorrect(ctx context.Context, site model.SiteID, first, last int64, f recountFamily) error {
	names := f.names()
	diff := map[counterKey]int64{}
	err := db.snapshot(ctx, func(q Q) error {
		// The counts recounted in Go are kept, not written: no
		// transaction flushes this tally.
		q.tally = &counterTally{}
		if err := q.recountStatements(ctx, site, first, last, f, func(st string, args []any) error {
			if !strings.Contains(st, recountInsert) {
				return fmt.Errorf("store: rebuild counters: a recount that does not write %s: %.60s", recountInsert, st)
			}
			return q.eachRow(ctx, func(r *sql.Rows) error {
				var k counterKey
				var n int64
				if err := r.Scan(&k.site, &k.day, &k.name, &k.dim, &k.shard, &n); err != nil {
					return err
				}
				k.shard = 0
				diff[k] += n
				return nil
			}, strings.Replace(st, recountInsert, "", 1), args...)
		}); err != nil {
			return err
		}
		for k, n := range q.tally.counters {
			k.shard = 0
			diff[k] += n
		}
		args := []any{string(site), first, last}
		for _, n := range names {
			args = append(args, n)
		}
		return q.eachRow(ctx, func(r *sql.Rows) error {
			k := counterKey{site: string(site)}
			var n int64
			if err := r.Scan(&k.day, &k.name, &k.dim, &n); err != nil {
				return err
			}
			diff[k] -= n
			return nil
		}, `/* Store.CountersRebuild */ SELECT day, name, dim, CAST(SUM(n) AS BIGINT) FROM site_counters
			WHERE site_id = ? AND day >= ? AND day <= ? AND name IN (?`+strings.Repeat(", ?", len(names)-1)+`)
			GROUP BY day, name, dim`, args...)
	})
	if err != nil {
		return fmt.Errorf("store: rebuild counters: %w", err)
	}
	maps.DeleteFunc(diff, func(_ counterKey, n int64) bool { return n == 0 })
	if len(diff) == 0 {
		return nil
	}
	return db.InTx(ctx, func(tx *Tx) error {
		for k, n := range diff {
			if err := tx.CountersAdd(ctx, site, k.day, "", model.Count{Name: k.name, Dim: k.dim, N: n}); err != nil {
				return err
			}
		}
		return nil
	})
}

// snapshot runs fn with reads from one snapshot of the database, beside
// the writer: a transaction of SQLite's reader (its first read takes the
// snapshot of the log), PostgreSQL's REPEATABLE READ. It writes nothing.
func (db *DB) snapshot(ctx context.Context, fn func(q Q) error) error {
	var opt *sql.TxOptions
	if db.dialect == Postgres {
		opt = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	t, err := db.reader.BeginTx(ctx, opt)
	if err != nil {
		return fmt.Errorf("store: begin: %w", unavailable(err))
	}
	defer t.Rollback()
	return fn(db.txQ(t))
}

// recountFamily is which counters countersRecount recounts.
type recountFamily int

const (
	// recountByDay are the counters counted on the day of a visit or of a
	// lead's receipt, whose rows are read on an index by that day (the
	// visits' at, the leads' site_id and received_at) and so a slice of
	// days at a time.
	recountByDay recountFamily = iota
	// recountWhole are those counted on a day no index has: a stage's
	// (model.CounterStages, CounterStageCents, read by their leads) and a
	// Meta event's upload (model.CounterReadyUploads and the coverage's,
	// read from the site's Meta events): the period at once.
	recountWhole
)

// names are the counters of a family.
func (f recountFamily) names() []string {
	if f == recountWhole {
		return []string{model.CounterStages, model.CounterStageCents, model.CounterReadyUploads,
			model.CounterCoverageEvents, model.CounterCoverageKeys, model.CounterCoverageMatchable}
	}
	return []string{model.CounterVisits, model.CounterFormVisits, model.CounterLeads, model.CounterLeadsUntracked,
		model.CounterLeadAds, model.CounterVerdicts, model.CounterReasons, model.CounterReasonsJudged,
		model.CounterReasonsJunk, model.CounterReasonsCustomers, model.CounterReasonsOverturned, model.CounterReasonsCRM,
		model.CounterAgreement, model.CounterReportVerdicts, model.CounterReportJunk, model.CounterReportStages,
		model.CounterReportCents, model.CounterReportValued, model.CounterReadyWaits, model.CounterReadyUploaded}
}

// countersRecount is CountersRebuild of one family of counters.
func (q Q) countersRecount(ctx context.Context, site model.SiteID, first, last int64, f recountFamily) error {
	names := f.names()
	// Counts this transaction added and kept for its end are of rows the
	// recount reads: they go, or they would count twice.
	if q.tally != nil {
		maps.DeleteFunc(q.tally.counters, func(k counterKey, _ int64) bool {
			return k.site == string(site) && k.day >= first && k.day <= last && slices.Contains(names, k.name)
		})
	}
	if q.dialect == Postgres {
		if _, err := q.exec(ctx, `/* Store.CountersRebuild */ LOCK TABLE site_counters IN EXCLUSIVE MODE`); err != nil {
			return fmt.Errorf("store: rebuild counters: %w", err)
		}
	}
	args := []any{string(site), first, last}
	for _, n := range names {
		args = append(args, n)
	}
	if _, err := q.exec(ctx, `/* Store.CountersRebuild */ DELETE FROM site_counters WHERE site_id = ? AND day >= ? AND day <= ?
		AND name IN (?`+strings.Repeat(", ?", len(names)-1)+`)`, args...); err != nil {
		return fmt.Errorf("store: rebuild counters: %w", err)
	}
	return q.recountStatements(ctx, site, first, last, f, func(st string, args []any) error {
		_, err := q.exec(ctx, st, args...)
		return err
	})
}

// recountStatements runs run with each of a family's recount statements
// (recountSQL) and its arguments, then recounts its counters counted in
// Go (the coverage's, the campaign report's) with CountersAdd.
func (q Q) recountStatements(ctx context.Context, site model.SiteID, first, last int64, f recountFamily, run func(st string, args []any) error) error {
	// Each statement's placeholders are the site and the period's bounds
	// in milliseconds, once or more, and then the site again.
	period := []any{string(site), first * 86400000, (last + 1) * 86400000}
	for _, st := range q.recountSQL(f) {
		var args []any
		for range strings.Count(st, "?") / len(period) {
			args = append(args, period...)
		}
		for range strings.Count(st, "?") % len(period) {
			args = append(args, string(site))
		}
		if err := run(st, args); err != nil {
			return fmt.Errorf("store: rebuild counters: %w", err)
		}
	}
	if f == recountWhole {
		return q.coverageRecount(ctx, site, first, last)
	}
	return q.reportRebuild(ctx, site, first, last)
}

// recountSQL are the statements that recount a family's counters in SQL
// (the coverage's and the campaign report's are recounted in Go), each
// INSERT ... SELECT one GROUP BY over the period's rows.
func (q Q) recountSQL(f recountFamily) []string {
	if f == recountWhole {
		return []string{
			`/* Store.CountersRebuild */ INSERT INTO site_counters (site_id, day, name, dim, shard, n)
			SELECT l.site_id, s.at / 86400000, 'stages', s.stage, 0, COUNT(*) FROM lead_stages s JOIN leads l ON l.id = s.lead_id
			WHERE l.site_id = ? AND s.at >= ? AND s.at < ? GROUP BY l.site_id, s.at / 86400000, s.stage`,
			`/* Store.CountersRebuild */ INSERT INTO site_counters (site_id, day, name, dim, shard, n)
			SELECT l.site_id, s.at / 86400000, 'stage_cents', s.stage || ' ' || s.currency, 0, SUM(` + q.centsSQL("s.value") + `)
			FROM lead_stages s JOIN leads l ON l.id = s.lead_id
			WHERE l.site_id = ? AND s.at >= ? AND s.at < ? AND s.value IS NOT NULL AND s.currency <> ''
			GROUP BY l.site_id, s.at / 86400000, s.stage, s.currency`,
			readyUploadsRecount,
		}
	}
	// The visits are read once, by their time (visits_at: on SQLite, which
	// has no statistics, the planner would otherwise read all of the
	// site's visits, on visits_visitor, for each slice of days).
	return append([]string{
		`/* Store.CountersRebuild */ WITH v AS (SELECT at / 86400000 AS day, COUNT(*) AS n,
				SUM(CASE WHEN lead_forms > 0 THEN 1 ELSE 0 END) AS forms
				FROM visits` + q.indexedBy("visits_at") + ` WHERE site_id = ? AND at >= ? AND at < ? GROUP BY at / 86400000)
			INSERT INTO site_counters (site_id, day, name, dim, shard, n)
			SELECT ?, day, 'visits', '', 0, n FROM v
			UNION ALL SELECT ?, day, 'form_visits', '', 0, forms FROM v WHERE forms > 0`,
		`/* Store.CountersRebuild */ INSERT INTO site_counters (site_id, day, name, dim, shard, n)
			SELECT site_id, received_at / 86400000, 'leads', source, 0, COUNT(*) FROM leads WHERE site_id = ? AND received_at >= ? AND received_at < ?
			GROUP BY site_id, received_at / 86400000, source`,
		`/* Store.CountersRebuild */ INSERT INTO site_counters (site_id, day, name, dim, shard, n)
			SELECT site_id, received_at / 86400000, 'leads_untracked', source, 0, COUNT(*) FROM leads WHERE site_id = ? AND received_at >= ? AND received_at < ?
			AND fill_by <> 'tracker' GROUP BY site_id, received_at / 86400000, source`,
		`/* Store.CountersRebuild */ INSERT INTO site_counters (site_id, day, name, dim, shard, n)
			SELECT site_id, received_at / 86400000, 'lead_ads', '', 0, COUNT(*) FROM leads WHERE site_id = ? AND received_at >= ? AND received_at < ?
			AND lead_ads_id <> '' GROUP BY site_id, received_at / 86400000`,
		`/* Store.CountersRebuild */ INSERT INTO site_counters (site_id, day, name, dim, shard, n)
			SELECT site_id, received_at / 86400000, 'verdicts', verdict, 0, COUNT(*) FROM leads WHERE site_id = ? AND received_at >= ? AND received_at < ?
			GROUP BY site_id, received_at / 86400000, verdict`,
	}, append(q.agreementRecount(), readyRecount()...)...)
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
	// The intake entry folded into the lead is read from the columns this
	// changes: stored first.
	if err := q.historyUnfold(ctx, id); err != nil {
		return err
	}
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

// CountersFold folds the shards of the counters of the days before before
// into one row each (shard 0), on PostgreSQL, and returns how many shard
// rows it folded. Shards are there so that concurrent intakes do not wait
// on one row; a past day sees few writes (a verdict or stage of an old
// lead, an event recorded late), yet its 32 rows a counter were kept for
// good: at 10,000 leads over a year, 1,600 bytes a lead. A write that comes
// to a folded day later makes a shard row again, which the next fold
// takes. Readers sum over the shards, so the figures are the same before
// and after (a counter whose shards sum to 0 keeps its row of 0, as a
// reader sees it now). SQLite writes shard 0 only: nothing to do.
//
// Each day is one transaction of one statement. It takes only the rows no
// one holds (SKIP LOCKED) and adds only what it deleted, so a count is
// never lost or doubled; a row it skipped waits for the next run. Adding
// to a day's shard 0 can wait for a transaction that holds that row, and
// that transaction may wait for a shard row the fold holds (counterKey's
// lock order puts shard 0 first): the fold gives up on its own after
// foldLockWait, well within PostgreSQL's deadlock_timeout (1 s), so the
// other transaction goes on and the day is folded at the next run (as it
// is if PostgreSQL still picks the fold to abort for a deadlock).
func (db *DB) CountersFold(ctx context.Context, before int64) (int, error) {
	if db.dialect != Postgres {
		return 0, nil
	}
	rows, err := db.query(ctx, `/* Store.CountersFold */ SELECT DISTINCT day FROM site_counters WHERE shard <> 0 AND day < ? ORDER BY day`, before)
	days, err := scanAll(rows, err, "unfolded counter days", func(r scanner) (int64, error) {
		var d int64
		err := r.Scan(&d)
		return d, err
	})
	if err != nil {
		return 0, err
	}
	folded := 0
	for _, day := range days {
		var n int
		err := db.InTx(ctx, func(tx *Tx) error {
			if _, err := tx.exec(ctx, `/* Store.CountersFold */ SET LOCAL lock_timeout = '`+foldLockWait+`'`); err != nil {
				return err
			}
			return tx.queryRow(ctx, `/* Store.CountersFold */ WITH gone AS (
				DELETE FROM site_counters WHERE ctid = ANY(ARRAY(
					SELECT ctid FROM site_counters WHERE day = ? AND shard <> 0 FOR UPDATE SKIP LOCKED))
				RETURNING site_id, day, name, dim, n),
			-- Run to its end though not read, as every data-modifying part.
			kept AS (INSERT INTO site_counters (site_id, day, name, dim, shard, n)
				SELECT site_id, day, name, dim, 0, SUM(n) FROM gone GROUP BY site_id, day, name, dim
				ON CONFLICT (site_id, day, name, dim, shard) DO UPDATE SET n = site_counters.n + excluded.n RETURNING 1)
			SELECT COUNT(*) FROM gone`, day).Scan(&n)
		})
		if err != nil {
			if pgLockNotAvailable(err) || pgTransient(err) {
				continue // the next run folds it
			}
			return folded, fmt.Errorf("store: fold counters of day %d: %w", day, err)
		}
		folded += n
	}
	return folded, nil
}

// foldLockWait is how long CountersFold waits for a row lock before it
// leaves the day for its next run (PostgreSQL's lock_timeout).
const foldLockWait = "50ms"
