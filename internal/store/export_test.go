package store

import (
	"context"
	"os"
	"strings"
	"sync"
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
	args := []any{"site", model.DestinationMeta, int64(0)}
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
	if _, err := db.SchemaVersion(ctx); err != nil {
		return err
	}
	list, err := migrations(db.dialect)
	if err != nil {
		return err
	}
	for _, m := range list {
		if m.version >= version {
			break
		}
		err := db.InTx(ctx, func(tx *Tx) error {
			if _, err := tx.w.ExecContext(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`, m.version, m.name, 0)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
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

// TestReadinessPlans returns SQLite's plans for ReadinessFigures' two
// statements.
func (db *DB) TestReadinessPlans(ctx context.Context) ([]string, error) {
	var plans []string
	for _, q := range []string{readinessCountersQuery, readinessEventsQuery} {
		p, err := db.plan(ctx, q, "dent", int64(0), int64(1))
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
	query, args := db.deliveryListQuery(DeliveryFilter{Site: "a", State: model.DeliverySent})
	return db.plan(ctx, query, args...)
}

// TestDeliveriesToShrinkPlan returns SQLite's plan for DeliveriesToShrink.
func (db *DB) TestDeliveriesToShrinkPlan(ctx context.Context) (string, error) {
	return db.plan(ctx, db.deliveriesToShrinkQuery(), int64(0), int64(0), int64(0), "", int64(0), 200)
}
