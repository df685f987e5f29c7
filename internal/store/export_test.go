package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// TestExec runs a raw statement; tests use it to set up odd states.
func (q Q) TestExec(ctx context.Context, query string, args ...any) error {
	_, err := q.exec(ctx, query, args...)
	return err
}

// TestMaxConns returns the size of the writer pool.
func (db *DB) TestMaxConns() int { return db.writer.Stats().MaxOpenConnections }

// MigrationVersionsForTest lists the versions of the embedded migrations.
func MigrationVersionsForTest() []int {
	list, _ := migrations(SQLite)
	var vs []int
	for _, m := range list {
		vs = append(vs, m.version)
	}
	return vs
}

// GroupStats reports how many batches the group committer ran and how
// many calls were queued to it.
func (db *DB) GroupStats() (batches, queued int64) {
	return db.group.batches.Load(), db.group.queued.Load()
}

// TestQueryStrings runs a query whose rows are one text column each.
func (q Q) TestQueryStrings(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := q.w.QueryContext(ctx, q.rebind(query), args...)
	return scanAll(rows, err, "test", scanText)
}

// TestQueryString reads one text value with a raw statement; tests use it to
// see what is really stored.
func (q Q) TestQueryString(ctx context.Context, query string, args ...any) (string, error) {
	var s string
	err := q.w.QueryRowContext(ctx, q.rebind(query), args...).Scan(&s)
	return s, err
}

// TestHoldLogSync makes the log's fsyncs wait until release is called.
func (db *DB) TestHoldLogSync() (release func()) {
	ch := make(chan struct{})
	db.group.sync.setSyncFile(func(f *os.File) error { <-ch; return fdatasync(f) })
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// TestFailLogSync makes every fsync of the log fail with err.
func (db *DB) TestFailLogSync(err error) {
	db.group.sync.setSyncFile(func(*os.File) error { return err })
}

// TestLogFrames runs a passive checkpoint and returns how many pages the
// log holds.
func (db *DB) TestLogFrames() (int, error) { return checkpoint(db.group.ckpt.db) }

// TestClaimPlan returns SQLite's plan for DeliveryClaim's look-up of a
// site's events (with cursor, of a slice after the first), one line per
// step.
func (db *DB) TestClaimPlan(ctx context.Context, cursor bool) (string, error) {
	args := db.unleasedArgs([]any{"site", model.DestinationMeta, int64(0)}, time.UnixMilli(0))
	if cursor {
		args = append(args, int64(0), "")
	}
	return db.plan(ctx, db.claimQuery(cursor), append(args, 1000)...)
}

// TestClaimSitesPlan returns SQLite's plan for DeliveryClaim's look-up of
// the sites with due events, skipping two.
func (db *DB) TestClaimSitesPlan(ctx context.Context) (string, error) {
	query, args := db.claimableSitesQuery(time.Now(), model.Destinations(),
		[]model.Share{{Site: "x"}, {Site: "y", Destination: model.DestinationMeta}})
	return db.plan(ctx, query, args...)
}

func (db *DB) plan(ctx context.Context, query string, args ...any) (string, error) {
	rows, err := db.reader.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			return "", err
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "\n"), rows.Err()
}

// TestSweepPlans returns SQLite's plans for DeliverySweep's expiring
// statements.
func (db *DB) TestSweepPlans(ctx context.Context) ([]string, error) {
	var plans []string
	for _, st := range db.sweepQueries(time.Now()) {
		p, err := db.plan(ctx, st.query, st.args...)
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// TestLeadFindPlan returns SQLite's plan for LeadFind by col.
func (db *DB) TestLeadFindPlan(ctx context.Context, col string) (string, error) {
	return db.plan(ctx, leadFindQuery(col), "a", "x", int64(0))
}

// TestContactKeyPlans returns SQLite's plans for the look-ups by a contact
// key (col: email_key or phone_key): LeadPrevious, LeadPreviousOf, the
// inbox's search by a whole address or number, and LeadIntake's (by
// either key).
func (db *DB) TestContactKeyPlans(ctx context.Context, col string) ([]string, error) {
	k := ContactKey{Key: "k", Email: col == "email_key", Sites: []model.SiteID{"a"}}
	cond, cargs := contactKeys([]ContactKey{k}, "a")
	statements := []struct {
		query string
		args  []any
	}{
		{leadPreviousQuery(col, false), []any{"a", "k", int64(0), "x"}},
		{leadPreviousQuery(col, true), []any{"a", "k", int64(0), "x", int64(5), int64(5), "y"}},
		{`SELECT id FROM leads WHERE site_id = ? AND ` + cond + ` ORDER BY received_at DESC, id DESC LIMIT 50`,
			append([]any{"a"}, cargs...)},
		{leadIntakeQuery, []any{"a", "e", "p", "a", "p", int64(0), "x", "m", "a", "m", int64(0), "x",
			"a", "v", "a", "w", "a", "e", "a"}},
	}
	var plans []string
	for _, st := range statements {
		p, err := db.plan(ctx, st.query, st.args...)
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// TestLeadIntakeLandingPlan returns SQLite's plan for LeadIntake with the
// lead's landing visit.
func (db *DB) TestLeadIntakeLandingPlan(ctx context.Context) (string, error) {
	return db.plan(ctx, sqliteLeadIntakeLandingQuery, "a", "e", "p", "a", "p", int64(0), "x", "m", "a", "m", int64(0), "x",
		"a", "v", "a", "w", "a", "e", "a", "v", "a", "v", int64(0), int64(5), "a")
}

// TestSearchWalkPlan returns SQLite's plan for leadSearchWalk's read of 64
// candidates' leads with a site, a verdict and a page's key.
func (db *DB) TestSearchWalkPlan(ctx context.Context) (string, error) {
	args := make([]any, 64)
	for i := range args {
		args[i] = int64(i + 1)
	}
	where := "site_id = ? AND verdict = ? AND (received_at < ? OR received_at = ? AND id < ?) AND search_has(?, message)"
	return db.plan(ctx, searchWalkLeadsQuery(len(args), where), append(args, "a", "clean", int64(5), int64(5), "x", "X")...)
}

// TestExpireReviewsPlan returns SQLite's plan for LeadExpireReviews.
func (db *DB) TestExpireReviewsPlan(ctx context.Context) (string, error) {
	return db.plan(ctx, expireReviewsQuery, string(model.VerdictReview), int64(0), 10)
}

// TestQueryAll runs a raw query (one that writes, with RETURNING, say) and
// returns its rows' first column as text.
func (q Q) TestQueryAll(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := q.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// TestMigrateBelow applies the embedded migrations before version, as an
// older binary left the database: for tests of what a migration does to
// rows already there.
func (db *DB) TestMigrateBelow(ctx context.Context, version int) error {
	_, err := db.MigrateWith(ctx, MigrateOptions{Below: version})
	return err
}

// TestReportPlans returns SQLite's plans for ReportLeads' three queries.
func (db *DB) TestReportPlans(ctx context.Context) ([]string, error) {
	var plans []string
	for _, st := range []struct {
		query string
		args  []any
	}{
		{reportLeadsQuery, []any{"a", int64(0), int64(1)}},
		{reportStagesQuery, []any{"a", int64(0), int64(1)}},
		{reportVisitsQuery, []any{"a", int64(0), int64(1), "a", int64(0), int64(1)}},
	} {
		p, err := db.plan(ctx, st.query, st.args...)
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// TestReadinessPlans returns SQLite's plans for ReadinessFigures'
// statement and readyCount's (of one outbox row).
func (db *DB) TestReadinessPlans(ctx context.Context) ([]string, error) {
	p, err := db.plan(ctx, readinessCountersQuery, "dent", int64(0), int64(1))
	if err != nil {
		return nil, err
	}
	c, err := db.plan(ctx, readyEventsSQL+readyAllSQL+readyFromSQL+` AND d.id IN (?)`, "dl_1")
	if err != nil {
		return nil, err
	}
	return []string{p, c}, nil
}

// TestRebuildPlans returns SQLite's plans for the statements that
// recount a slice of days (CountersRebuild's recountByDay).
func (db *DB) TestRebuildPlans(ctx context.Context) ([]string, error) {
	var plans []string
	period := []any{"a", int64(0), int64(1)}
	for _, st := range db.recountSQL(recountByDay) {
		var args []any
		for range strings.Count(st, "?") / len(period) {
			args = append(args, period...)
		}
		for range strings.Count(st, "?") % len(period) {
			args = append(args, "a")
		}
		p, err := db.plan(ctx, st, args...)
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// TestWebhookDeliveriesPlan returns SQLite's plan for WebhookDeliveries.
func (db *DB) TestWebhookDeliveriesPlan(ctx context.Context) (string, error) {
	return db.plan(ctx, webhookDeliveriesQuery, "a", 20)
}

// TestDeliveryListPlan returns SQLite's plan for DeliveryList of a site's
// rows of a state.
func (db *DB) TestDeliveryListPlan(ctx context.Context) (string, error) {
	query, args := db.deliveryListSiteQuery("a", []model.DeliveryState{model.DeliverySent}, math.MinInt64, time.Time{}, "", 50)
	return db.plan(ctx, query, args...)
}

// TestReadinessScan reads a site's readiness event figures (Uploaded,
// Stages, UploadDays) over [from, to) by a scan of its leads of the period
// with their Meta events and stages, as the page did before its counters
// (the waits taken in model.WaitBucket's tenths of a day, and the upload
// days those of any lead's events): what the counters must equal.
func (db *DB) TestReadinessScan(ctx context.Context, site model.SiteID, from, to time.Time) (*model.ReadinessFigures, error) {
	f := &model.ReadinessFigures{From: from, To: to}
	type key struct{ kind, name string }
	waits := map[key]map[int]int{}
	leads := map[key]int{}
	uploaded := map[string]bool{}
	err := db.eachRow(ctx, func(r *sql.Rows) error {
		var (
			lead, kind, name        string
			received, created, stAt sql.NullInt64
		)
		if err := r.Scan(&lead, &received, &kind, &name, &created, &stAt); err != nil {
			return err
		}
		at := received.Int64
		switch {
		case stAt.Valid:
			at = stAt.Int64
		case kind == model.KindQualified:
			at = created.Int64
		}
		k := key{kind, name}
		if waits[k] == nil {
			waits[k] = map[int]int{}
		}
		waits[k][model.WaitBucket(time.Duration(at-received.Int64)*time.Millisecond)]++
		leads[k]++
		uploaded[lead] = true
		return nil
	}, `SELECT l.id, l.received_at, d.kind, e.event_name, d.created_at, s.at
		FROM leads l
		JOIN delivery_events e ON e.lead_id = l.id AND e.lead_id <> ''
		JOIN delivery_state d ON d.id = e.id
		LEFT JOIN lead_stages s ON s.lead_id = l.id AND d.kind = 'stage:' || s.stage
		WHERE l.site_id = ? AND l.received_at >= ? AND l.received_at < ?
			AND d.destination = 'meta' AND d.state IN ('sent', 'dry_run')`,
		string(site), from.UnixMilli(), to.UnixMilli())
	if err != nil {
		return nil, err
	}
	f.Uploaded = len(uploaded)
	for k, n := range leads {
		f.Stages = append(f.Stages, model.StageFigure{EventName: k.name, Kind: k.kind, Leads: n, MedianDays: model.MedianBucketDays(waits[k])})
	}
	sortStages(f.Stages)
	err = db.queryRow(ctx, `SELECT COUNT(DISTINCT COALESCE(d.sent_at, d.created_at) / 86400000)
		FROM delivery_state d JOIN delivery_events e ON e.id = d.id JOIN leads l ON l.id = e.lead_id
		WHERE d.site_id = ? AND e.lead_id <> '' AND d.destination = 'meta' AND d.state IN ('sent', 'dry_run')
			AND COALESCE(d.sent_at, d.created_at) >= ? AND COALESCE(d.sent_at, d.created_at) < ?`,
		string(site), from.UnixMilli(), to.UnixMilli()).Scan(&f.UploadDays)
	return f, err
}

// TestInTxRetry runs fn as the drain's outcome records run (inTxRetry).
func (db *DB) TestInTxRetry(ctx context.Context, fn func(*Tx) error) error {
	return db.inTxRetry(ctx, fn)
}

// TestDeliveriesToShrinkPlan returns SQLite's plan for DeliveriesToShrink.
func (db *DB) TestDeliveriesToShrinkPlan(ctx context.Context) (string, error) {
	return db.plan(ctx, db.deliveriesToShrinkQuery(), int64(0), int64(0), int64(0), "", int64(0), 200)
}

// TestDeliveriesToRedactPlan returns SQLite's plan for DeliveriesToRedact.
func (db *DB) TestDeliveriesToRedactPlan(ctx context.Context) (string, error) {
	return db.plan(ctx, db.deliveriesToRedactQuery(), int64(0), int64(0), int64(0), 200)
}

// TestNextDuePlanPostgres returns PostgreSQL's plan for DeliveryNextDue,
// after ANALYZE, one line per step.
func (db *DB) TestNextDuePlanPostgres(ctx context.Context) (string, error) {
	if _, err := db.exec(ctx, `ANALYZE delivery_state`); err != nil {
		return "", err
	}
	rows, err := db.query(ctx, "EXPLAIN "+db.nextDueQuery(), db.unleasedArgs(nil, time.Now())...)
	lines, err := scanAll(rows, err, "plan", scanText)
	return strings.Join(lines, "\n"), err
}

// TestRetentionPlansPostgres returns PostgreSQL's plans for
// DeliveriesToShrink and DeliveriesToRedact, after ANALYZE, by name.
func (db *DB) TestRetentionPlansPostgres(t testing.TB, ctx context.Context) map[string]string {
	t.Helper()
	if _, err := db.exec(ctx, `ANALYZE delivery_state`); err != nil {
		t.Fatal(err)
	}
	plans := map[string]string{}
	for name, st := range map[string]struct {
		query string
		args  []any
	}{
		"shrink": {db.deliveriesToShrinkQuery(), []any{int64(1 << 50), int64(-1), int64(-1), "", int64(1 << 50), 200}},
		"redact": {db.deliveriesToRedactQuery(), []any{int64(1 << 50), int64(1 << 50), int64(1 << 50), 200}},
	} {
		rows, err := db.query(ctx, "EXPLAIN "+st.query, st.args...)
		lines, err := scanAll(rows, err, "plan", scanText)
		if err != nil {
			t.Fatal(err)
		}
		plans[name] = strings.Join(lines, "\n")
	}
	return plans
}

// PackIDHexForTest is s's stored form as packID makes it, in hex, and
// whether it is packed.
func PackIDHexForTest(s string) (string, bool) {
	b, ok := packID(s)
	return fmt.Sprintf("%x", b), ok
}
