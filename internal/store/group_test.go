package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// groupFixture holds the committer on a first call until the calls the
// test queues are all waiting, so they run together in the next batch.
type groupFixture struct {
	t       *testing.T
	ctx     context.Context
	db      *store.DB
	release chan struct{}
	first   chan error
}

func newGroupFixture(t *testing.T) *groupFixture {
	f := &groupFixture{t: t, ctx: context.Background(), db: storetest.SQLite(t), release: make(chan struct{}), first: make(chan error, 1)}
	started := make(chan struct{})
	go func() {
		f.first <- f.db.InTx(f.ctx, func(tx *store.Tx) error {
			close(started)
			<-f.release
			return siteInsert("base")(tx)
		})
	}()
	<-started
	return f
}

// queue starts n calls of fn and returns their results once the
// committer runs them (after releaseAndWait).
func (f *groupFixture) queue(ctx context.Context, fns ...func(tx *store.Tx) error) []chan any {
	return queueCalls(f.t, ctx, f.db, fns)
}

// queueCalls starts a call of each fn, in order, and returns once all wait
// for the committer; each channel then gets the call's error, or its panic
// as a string. Each call is queued before the next starts, so the batch
// holds them in the order given (goroutines started together may queue in
// any order).
func queueCalls(t *testing.T, ctx context.Context, db *store.DB, fns []func(tx *store.Tx) error) []chan any {
	t.Helper()
	_, queued := db.GroupStats()
	out := make([]chan any, len(fns))
	for i, fn := range fns {
		out[i] = make(chan any, 1)
		go func() {
			defer func() {
				if v := recover(); v != nil {
					out[i] <- fmt.Sprintf("panic: %v", v)
				}
			}()
			out[i] <- db.InTx(ctx, fn)
		}()
		queued++
		testkit.WaitFor(t, fmt.Sprintf("call %d to be queued", i), func() bool { _, q := db.GroupStats(); return q == queued })
	}
	return out
}

func (f *groupFixture) releaseFirst() {
	close(f.release)
	if err := <-f.first; err != nil {
		f.t.Fatal(err)
	}
}

func siteInsert(id string) func(tx *store.Tx) error { return siteInsertCtx(context.Background(), id) }

func siteInsertCtx(ctx context.Context, id string) func(tx *store.Tx) error {
	return func(tx *store.Tx) error {
		return tx.SiteUpsert(ctx, &model.Site{ID: model.SiteID(id), Name: id}, time.Now())
	}
}

func (f *groupFixture) exists(id string) bool {
	_, err := f.db.SiteByID(f.ctx, model.SiteID(id))
	if err != nil && !errors.Is(err, model.ErrNotFound) {
		f.t.Fatal(err)
	}
	return err == nil
}

func TestGroupCommitIsolatesEachCaller(t *testing.T) {
	t.Parallel()
	f := newGroupFixture(t)
	errBoom := errors.New("boom")
	results := f.queue(f.ctx,
		siteInsert("a"),
		func(tx *store.Tx) error { // writes, then fails: its write must go
			if err := siteInsert("failed")(tx); err != nil {
				return err
			}
			return fmt.Errorf("wrapped: %w", errBoom)
		},
		siteInsert("b"),
		func(tx *store.Tx) error { // writes, then panics
			if err := siteInsert("panicked")(tx); err != nil {
				return err
			}
			panic("kaboom")
		},
		func(tx *store.Tx) error { // a statement error: unique violation
			return tx.TestExec(context.Background(), `INSERT INTO sites (id, name, created_at, updated_at) VALUES ('base', 'dup', 0, 0)`)
		},
		siteInsert("c"),
	)
	batches, _ := f.db.GroupStats()
	f.releaseFirst()
	got := make([]any, len(results))
	for i, ch := range results {
		got[i] = <-ch
	}
	if got[0] != nil || got[2] != nil || got[5] != nil {
		t.Errorf("good calls failed: %v", got)
	}
	if err, _ := got[1].(error); !errors.Is(err, errBoom) {
		t.Errorf("failing call got %v, want its own error", got[1])
	}
	if got[3] != "panic: kaboom" {
		t.Errorf("panicking call got %v, want its panic re-raised", got[3])
	}
	if err, _ := got[4].(error); err == nil {
		t.Errorf("duplicate insert succeeded")
	}
	for id, want := range map[string]bool{"a": true, "b": true, "c": true, "failed": false, "panicked": false} {
		if f.exists(id) != want {
			t.Errorf("site %s stored = %v, want %v", id, !want, want)
		}
	}
	if s, _ := f.db.SiteByID(f.ctx, "base"); s == nil || s.Name != "base" {
		t.Errorf("site base = %+v, the failed duplicate changed it", s)
	}
	if after, _ := f.db.GroupStats(); after-batches != 1 {
		t.Errorf("the six queued calls ran in %d batches, want 1", after-batches)
	}
}

// A batch runs its calls without savepoints; a failure rolls it back and
// runs the writes of the calls before it again. Each function runs once,
// writes that depend on what a call read land once, and the calls after
// the failure are still kept apart.
func TestGroupCommitRebuildsTheBatchAfterAFailure(t *testing.T) {
	t.Parallel()
	f := newGroupFixture(t)
	ctx := f.ctx
	errBoom := errors.New("boom")
	runs := make([]int, 7)
	counted := func(i int, fn func(tx *store.Tx) error) func(tx *store.Tx) error {
		return func(tx *store.Tx) error { runs[i]++; return fn(tx) }
	}
	failAfter := func(id string) func(tx *store.Tx) error {
		return func(tx *store.Tx) error {
			if err := siteInsert(id)(tx); err != nil {
				return err
			}
			return errBoom
		}
	}
	results := f.queue(ctx,
		counted(0, siteInsert("a")),
		counted(1, func(tx *store.Tx) error { // writes what it read, twice, the second through a query
			name, err := tx.TestQueryString(ctx, `SELECT name FROM sites WHERE id = 'a'`)
			if err != nil {
				return err
			}
			if err := tx.TestExec(ctx, `UPDATE sites SET name = ? WHERE id = 'a'`, name+"+1"); err != nil {
				return err
			}
			got, err := tx.TestQueryAll(ctx, `/* test */ UPDATE sites SET name = name || '+r' WHERE id = 'a' RETURNING name`)
			if err != nil || len(got) != 1 || got[0] != "a+1+r" {
				return fmt.Errorf("update returning: %v %v", got, err)
			}
			return nil
		}),
		counted(2, failAfter("gone")),
		counted(3, func(tx *store.Tx) error { // meets a statement error and goes on
			if err := tx.TestExec(ctx, `INSERT INTO sites (id, name, created_at, updated_at) VALUES ('base', 'dup', 0, 0)`); err == nil {
				return errors.New("the duplicate insert succeeded")
			}
			return siteInsert("c")(tx)
		}),
		counted(4, siteInsert("d")),
		counted(5, failAfter("gone2")),
		counted(6, siteInsert("e")),
	)
	batches, _ := f.db.GroupStats()
	rebuilds := f.db.WriterStats().Rebuilds
	f.releaseFirst()
	for i, ch := range results {
		err, _ := (<-ch).(error)
		if wantFail := i == 2 || i == 5; wantFail != errors.Is(err, errBoom) || (!wantFail && err != nil) {
			t.Errorf("call %d: %v", i, err)
		}
	}
	for i, n := range runs {
		if n != 1 {
			t.Errorf("call %d's function ran %d times, want once", i, n)
		}
	}
	for id, want := range map[string]bool{"a": true, "c": true, "d": true, "e": true, "gone": false, "gone2": false} {
		if f.exists(id) != want {
			t.Errorf("site %s stored = %v, want %v", id, !want, want)
		}
	}
	if s, _ := f.db.SiteByID(ctx, "a"); s == nil || s.Name != "a+1+r" {
		t.Errorf("site a = %+v, want its name written once by each update", s)
	}
	if s, _ := f.db.SiteByID(ctx, "base"); s == nil || s.Name != "base" {
		t.Errorf("site base = %+v, the failed duplicate changed it", s)
	}
	if after, _ := f.db.GroupStats(); after-batches != 1 {
		t.Errorf("the seven queued calls ran in %d batches, want 1", after-batches)
	}
	// Once rebuilt, the batch ran its calls in savepoints: the second
	// failure cost no rebuild.
	if n := f.db.WriterStats().Rebuilds - rebuilds; n != 1 {
		t.Errorf("%d rebuilds, want 1", n)
	}
}

// Batches of calls that read what earlier calls wrote and write from it,
// some failing, panicking or meeting a statement error they handle, in
// random order: every call that succeeded counts exactly once, whatever
// rebuilds its batch went through, and nothing of a failed call is left.
func TestGroupCommitRebuildsKeepEveryCallsWorkOnce(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	ctx := context.Background()
	err := db.InTx(ctx, func(tx *store.Tx) error {
		for _, q := range []string{
			`CREATE TABLE tally (k TEXT PRIMARY KEY, n INTEGER NOT NULL)`,
			`CREATE TABLE calls (id TEXT PRIMARY KEY, k TEXT NOT NULL)`,
			`INSERT INTO tally (k, n) VALUES ('a', 0), ('b', 0), ('c', 0)`,
		} {
			if err := tx.TestExec(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	errBoom := errors.New("boom")
	rng := rand.New(rand.NewPCG(1, 2))
	want := map[string]int{}
	stored := map[string]bool{}
	rebuilds, failingRounds := db.WriterStats().Rebuilds, int64(0)
	const rounds, perRound = 8, 40
	for round := range rounds {
		// A call holds the committer until the round's calls all wait, so
		// they run in one batch.
		hold, held, first := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			first <- db.InTx(ctx, func(tx *store.Tx) error { close(held); <-hold; return nil })
		}()
		<-held
		type plan struct {
			id, k                   string
			fail, panics, stmtError bool
		}
		plans := make([]plan, perRound)
		fns := make([]func(tx *store.Tx) error, perRound)
		failing := false
		for i := range plans {
			p := plan{id: fmt.Sprintf("r%d-%d", round, i), k: string(rune('a' + rng.IntN(3)))}
			switch rng.IntN(10) {
			case 0:
				p.fail = true
			case 1:
				p.panics = true
			case 2:
				p.stmtError = true
			}
			if p.fail || p.panics || p.stmtError {
				failing = true
			}
			plans[i] = p
			fns[i] = func(tx *store.Tx) error {
				n, err := tx.TestQueryString(ctx, `SELECT CAST(n AS TEXT) FROM tally WHERE k = ?`, p.k)
				if err != nil {
					return err
				}
				if err := tx.TestExec(ctx, `UPDATE tally SET n = CAST(? AS INTEGER) + 1 WHERE k = ?`, n, p.k); err != nil {
					return err
				}
				if err := tx.TestExec(ctx, `INSERT INTO calls (id, k) VALUES (?, ?)`, p.id, p.k); err != nil {
					return err
				}
				switch {
				case p.fail:
					return errBoom
				case p.panics:
					panic("kaboom")
				case p.stmtError:
					if err := tx.TestExec(ctx, `INSERT INTO calls (id, k) VALUES (?, ?)`, p.id, p.k); err == nil {
						return errors.New("the duplicate insert succeeded")
					}
				}
				return nil
			}
		}
		if failing {
			failingRounds++
		}
		results := queueCalls(t, ctx, db, fns)
		close(hold)
		if err := <-first; err != nil {
			t.Fatal(err)
		}
		for i, ch := range results {
			got, p := <-ch, plans[i]
			switch {
			case p.fail:
				if err, _ := got.(error); !errors.Is(err, errBoom) {
					t.Errorf("%s: got %v, want its own error", p.id, got)
				}
			case p.panics:
				if got != "panic: kaboom" {
					t.Errorf("%s: got %v, want its panic", p.id, got)
				}
			default:
				if got != nil {
					t.Errorf("%s: %v", p.id, got)
				}
				want[p.k]++
				stored[p.id] = true
			}
		}
	}
	for _, k := range []string{"a", "b", "c"} {
		n, err := db.TestQueryString(ctx, `SELECT CAST(n AS TEXT) FROM tally WHERE k = ?`, k)
		if err != nil {
			t.Fatal(err)
		}
		if n != fmt.Sprint(want[k]) {
			t.Errorf("tally %s = %s, want %d: a call's write was lost or applied twice", k, n, want[k])
		}
	}
	ids, err := db.TestQueryAll(ctx, `SELECT id FROM calls`)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != len(stored) {
		t.Errorf("%d calls stored, want %d", len(ids), len(stored))
	}
	for _, id := range ids {
		if !stored[id] {
			t.Errorf("call %s is stored but failed", id)
		}
	}
	// A round's batch is rebuilt once, at its first failure; the calls
	// after it run in savepoints.
	if n := db.WriterStats().Rebuilds - rebuilds; n != failingRounds {
		t.Errorf("%d rebuilds, want %d (one per round with a failure)", n, failingRounds)
	}
}

func TestGroupCommitCancelledBeforeItsTurn(t *testing.T) {
	t.Parallel()
	f := newGroupFixture(t)
	ctx, cancel := context.WithCancel(f.ctx)
	ran := false
	results := f.queue(ctx, func(tx *store.Tx) error { ran = true; return siteInsert("x")(tx) })
	other := f.queue(f.ctx, siteInsert("y"))
	cancel()
	f.releaseFirst()
	if err, _ := (<-results[0]).(error); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call got %v", err)
	}
	if err := <-other[0]; err != nil {
		t.Errorf("other call: %v", err)
	}
	if ran || f.exists("x") {
		t.Error("a call cancelled before its turn ran")
	}
	if !f.exists("y") {
		t.Error("the other call of the batch was lost")
	}
}

func TestGroupCommitCancelledWhileRunning(t *testing.T) {
	t.Parallel()
	f := newGroupFixture(t)
	ctx, cancel := context.WithCancel(f.ctx)
	// Once a call runs inside a shared transaction its cancellation must
	// not interrupt the connection (SQLite would roll back everyone's
	// work): it finishes, and is committed with the others.
	results := f.queue(f.ctx, siteInsert("before"),
		func(tx *store.Tx) error {
			cancel() // the caller gives up while its function runs
			return siteInsertCtx(ctx, "cancelled")(tx)
		}, siteInsert("after"))
	f.releaseFirst()
	for i, ch := range results {
		if err := <-ch; err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	for _, id := range []string{"before", "cancelled", "after"} {
		if !f.exists(id) {
			t.Errorf("site %s lost", id)
		}
	}
}

func TestGroupCommitFailureFailsTheBatch(t *testing.T) {
	t.Parallel()
	f := newGroupFixture(t)
	// A deferred foreign key is checked at COMMIT: the way to make a
	// commit fail on demand.
	setup := func(tx *store.Tx) error {
		return tx.TestExec(f.ctx, `CREATE TABLE deferred_ref (site_id TEXT REFERENCES sites (id) DEFERRABLE INITIALLY DEFERRED)`)
	}
	results := f.queue(f.ctx, setup)
	f.releaseFirst()
	if err := <-results[0]; err != nil {
		t.Fatal(err)
	}

	f = &groupFixture{t: t, ctx: f.ctx, db: f.db, release: make(chan struct{}), first: make(chan error, 1)}
	started := make(chan struct{})
	go func() {
		f.first <- f.db.InTx(f.ctx, func(tx *store.Tx) error { close(started); <-f.release; return nil })
	}()
	<-started
	results = f.queue(f.ctx, siteInsert("good"), func(tx *store.Tx) error {
		return tx.TestExec(f.ctx, `INSERT INTO deferred_ref (site_id) VALUES ('nowhere')`)
	})
	f.releaseFirst()
	for i, ch := range results {
		if err, _ := (<-ch).(error); err == nil {
			t.Errorf("call %d succeeded although the commit failed", i)
		}
	}
	if f.exists("good") {
		t.Error("a write of a failed commit is visible")
	}
	// The committer carries on.
	if err := f.db.InTx(f.ctx, siteInsert("later")); err != nil || !f.exists("later") {
		t.Errorf("after a failed commit: %v", err)
	}
}

func TestGroupCommitNothingVisibleBeforeCommit(t *testing.T) {
	t.Parallel()
	f := newGroupFixture(t)
	var seen []bool
	early := f.queue(f.ctx, siteInsert("early")) // queued first, so it runs first
	results := f.queue(f.ctx, func(tx *store.Tx) error {
		if err := siteInsert("mine")(tx); err != nil {
			return err
		}
		// Inside the batch: the transaction sees its writes, the
		// database (the readers) sees none of the batch's.
		if _, err := tx.SiteByID(f.ctx, "mine"); err != nil {
			return fmt.Errorf("own transaction: %w", err)
		}
		seen = append(seen, f.exists("early"), f.exists("mine"))
		return nil
	})
	f.releaseFirst()
	for _, ch := range append(early, results...) {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != 2 || seen[0] || seen[1] {
		t.Errorf("uncommitted writes visible to readers: %v", seen)
	}
	if !f.exists("early") || !f.exists("mine") {
		t.Error("not visible after commit")
	}
}

func TestGroupCommitManyConcurrentCallers(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	ctx := context.Background()
	const n = 300
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("s%03d", i)
			err := db.InTx(ctx, func(tx *store.Tx) error {
				if err := siteInsert(id)(tx); err != nil {
					return err
				}
				if i%7 == 0 {
					return errors.New("refused")
				}
				return nil
			})
			if (err != nil) != (i%7 == 0) {
				errs <- fmt.Errorf("call %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	sites, err := db.SiteList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := n - (n+6)/7; len(sites) != want {
		t.Errorf("%d sites stored, want %d", len(sites), want)
	}
}

func TestGroupCommitAfterClose(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "c.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := db.InTx(ctx, func(*store.Tx) error { return nil }); !errors.Is(err, store.ErrClosed) {
		t.Errorf("InTx after Close: %v", err)
	}
}
