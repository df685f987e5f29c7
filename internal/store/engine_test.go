package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// Several nodes starting together on one fresh schema: the migration lock
// lets exactly one apply each step; the others wait and find nothing to do.
func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	dsn := storetest.PostgresDSN(t)
	ctx := context.Background()
	const nodes = 6
	dbs := make([]*store.DB, nodes)
	for i := range dbs {
		db, err := store.Open(ctx, dsn, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		applied []int
		errs    []error
	)
	start := make(chan struct{})
	for _, db := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got, err := db.Migrate(ctx, time.Now)
			mu.Lock()
			defer mu.Unlock()
			applied = append(applied, got...)
			if err != nil {
				errs = append(errs, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("concurrent migrate: %v", errors.Join(errs...))
	}
	slices.Sort(applied)
	want := store.MigrationVersionsForTest()
	if !slices.Equal(applied, want) {
		t.Errorf("versions applied across nodes: %v, want each of %v once", applied, want)
	}
	for _, db := range dbs {
		if err := db.CheckSchema(ctx); err != nil {
			t.Error(err)
		}
	}
}

// The migration tests run on both engines: an empty database, then the
// same one again with data in it.
func TestMigrateEmptyAndExisting(t *testing.T) {
	t.Parallel()
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			dsn := storetest.SQLiteDSN(t)
			if d == store.Postgres {
				dsn = storetest.PostgresDSN(t)
			}
			migrateTwice(t, ctx, dsn)
		})
	}
}

// Two nodes contend for the same job: only one runs it at a time; another
// job name is independent; once the first is done the job is free again.
// On SQLite one process owns the file, so the job always runs.
func TestWithJobLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("sqlite", func(t *testing.T) {
		db := storetest.SQLite(t)
		boom := errors.New("boom")
		ran, err := db.WithJobLock(ctx, "expire", func(context.Context) error {
			inner, err := db.WithJobLock(ctx, "expire", func(context.Context) error { return nil })
			if !inner || err != nil {
				t.Errorf("nested on sqlite: %v %v", inner, err)
			}
			return boom
		})
		if !ran || !errors.Is(err, boom) {
			t.Errorf("sqlite: ran %v, err %v", ran, err)
		}
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := storetest.PostgresMigratedDSN(t)
		a, b := storetest.Open(t, dsn), storetest.Open(t, dsn)
		var order []string
		ran, err := a.WithJobLock(ctx, "expire", func(context.Context) error {
			order = append(order, "a")
			// b is another node (another pool, other sessions).
			got, err := b.WithJobLock(ctx, "expire", func(context.Context) error {
				order = append(order, "b while a holds it")
				return nil
			})
			if got || err != nil {
				t.Errorf("second node ran the held job: %v %v", got, err)
			}
			// a's own pool is other sessions too: the lock is not re-entrant
			// across connections.
			if got, _ := a.WithJobLock(ctx, "expire", func(context.Context) error { return nil }); got {
				t.Error("a second connection of the holder ran the held job")
			}
			got, err = b.WithJobLock(ctx, "retention", func(context.Context) error {
				order = append(order, "b retention")
				return nil
			})
			if !got || err != nil {
				t.Errorf("another job was blocked: %v %v", got, err)
			}
			return nil
		})
		if !ran || err != nil {
			t.Fatalf("first caller: %v %v", ran, err)
		}
		ran, err = b.WithJobLock(ctx, "expire", func(context.Context) error {
			order = append(order, "b after a")
			return nil
		})
		if !ran || err != nil {
			t.Errorf("lock not released: %v %v", ran, err)
		}
		if want := []string{"a", "b retention", "b after a"}; !slices.Equal(order, want) {
			t.Errorf("ran %q, want %q", order, want)
		}
	})
}

// A database that cannot serve (SQLite locked by another writer beyond the
// busy timeout; PostgreSQL gone) gives errors that say so, on reads, writes
// and transactions alike; a wrong statement does not.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			db, cut := storetest.Breakable(t, d)
			testkit.AddSite(t, db, &model.Site{ID: "dent"}, time.Now())
			if err := db.TestExec(ctx, "SELECT no_such_column FROM sites"); err == nil || isUnavailable(err) {
				t.Errorf("a wrong statement: %v", err)
			}
			cut()
			err := db.InTx(ctx, func(tx *store.Tx) error {
				return tx.SiteUpsert(ctx, &model.Site{ID: "dent", Name: "x"}, time.Now())
			})
			if !isUnavailable(err) {
				t.Errorf("write in a transaction: %v", err)
			}
			if err := db.SiteUpsert(ctx, &model.Site{ID: "other"}, time.Now()); !isUnavailable(err) {
				t.Errorf("write: %v", err)
			}
			if d == store.Postgres { // SQLite readers still read under WAL
				if _, err := db.SiteByID(ctx, "dent"); !isUnavailable(err) {
					t.Errorf("read: %v", err)
				}
				if _, err := db.SiteList(ctx); !isUnavailable(err) {
					t.Errorf("list: %v", err)
				}
				if err := db.Ping(ctx); !isUnavailable(err) {
					t.Errorf("ping: %v", err)
				}
			}
		})
	}
}

// A full disk (here: SQLite's page limit) is unavailable storage too.
func TestUnavailableDiskFull(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.SQLite(t)
	now := time.Now()
	testkit.AddSite(t, db, &model.Site{ID: "dent"}, now)
	// The writer is one connection, so the limit holds for every write.
	if err := db.TestExec(ctx, "PRAGMA max_page_count = 1"); err != nil {
		t.Fatal(err)
	}
	l := &model.Lead{ID: "ld_big", SiteID: "dent", EventID: "e", Message: strings.Repeat("x", 50000),
		SubmittedAt: now, ReceivedAt: now, Decision: model.Decision{Verdict: model.VerdictClean}}
	err := db.InTx(ctx, func(tx *store.Tx) error { return tx.LeadInsert(ctx, l) })
	if !isUnavailable(err) || !strings.Contains(err.Error(), "full") {
		t.Errorf("insert on a full disk: %v", err)
	}
}

func isUnavailable(err error) bool {
	var u interface{ Unavailable() bool }
	return errors.As(err, &u) && u.Unavailable()
}

// pool_max_conns in the URL sizes a node's pool and is not sent to the
// server (which would refuse an unknown setting).
func TestPostgresPoolSize(t *testing.T) {
	t.Parallel()
	dsn := storetest.PostgresMigratedDSN(t) + "&pool_max_conns=3"
	db := storetest.Open(t, dsn)
	if n := db.TestMaxConns(); n != 3 {
		t.Errorf("pool of %d, want 3", n)
	}
	if _, err := store.Open(context.Background(), dsn+"x", store.Options{}); err == nil || !strings.Contains(err.Error(), "pool_max_conns") {
		t.Errorf("bad pool_max_conns: %v", err)
	}
}

// Review expiry on one node and evidence on another: the lead the evidence
// is deciding (its row locked by an open transaction) is skipped, not
// marked expired under it, and the expiry does not wait for it.
func TestLeadExpireReviewsSkipsLeadBeingDecided(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	ctx := context.Background()
	now := time.Now()
	db.SiteUpsert(ctx, &model.Site{ID: "dent"}, now)
	past := now.Add(-time.Hour)
	for _, id := range []model.LeadID{"ld_busy", "ld_idle"} {
		l := &model.Lead{ID: id, SiteID: "dent", EventID: string(id), SubmittedAt: past, ReceivedAt: past, ReviewUntil: &past,
			Decision: model.Decision{Verdict: model.VerdictReview}}
		if err := db.LeadInsert(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	deciding, release, done := make(chan struct{}), make(chan struct{}), make(chan error)
	go func() {
		done <- db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.LeadSetDecision(ctx, "ld_busy", model.Decision{Verdict: model.VerdictClean, DecidedBy: "owner"}, nil); err != nil {
				return err
			}
			close(deciding)
			<-release
			return nil
		})
	}()
	<-deciding
	var ids []model.LeadID
	err := db.InTx(ctx, func(tx *store.Tx) (err error) {
		ids, err = tx.LeadExpireReviews(ctx, now, 100)
		return err
	})
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err != nil || !slices.Equal(ids, []model.LeadID{"ld_idle"}) {
		t.Errorf("expired %v, %v; want only ld_idle", ids, err)
	}
	if l, _ := db.LeadByID(ctx, "ld_busy"); l.Verdict != model.VerdictClean || l.ReviewExpiredAt != nil {
		t.Errorf("decided lead: %s, expired at %v", l.Verdict, l.ReviewExpiredAt)
	}
}
