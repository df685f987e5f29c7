package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// commitUnsynced holds the log's fsyncs and runs one InTx call until its
// commit is made: it returns the call's result to come, the writer's
// counters from before, and the function that lets the fsyncs go.
func commitUnsynced(t *testing.T, db *store.DB, site string) (done <-chan error, before model.WriterStats, release func()) {
	t.Helper()
	release = db.TestHoldLogSync()
	t.Cleanup(release)
	before = db.WriterStats()
	ch := make(chan error, 1)
	go func() { ch <- db.InTx(context.Background(), siteInsert(site)) }()
	testkit.WaitFor(t, "the commit", func() bool { return db.WriterStats().Commits > before.Commits })
	return ch, before, release
}

func TestInTxAnswersOnlyOnceTheLogIsSynced(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	// The commit has happened (readers see it) while the fsync is held:
	// the caller must still be waiting.
	done, before, release := commitUnsynced(t, db, "durable")
	select {
	case err := <-done:
		t.Fatalf("InTx returned (%v) before its commit was synced", err)
	default:
	}
	// Held this long, the fsync takes at least as long: it is counted
	// above the 25 ms bound.
	time.Sleep(30 * time.Millisecond)
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	after := db.WriterStats()
	if after.LogSyncs <= before.LogSyncs {
		t.Errorf("log syncs %d -> %d: the answer came without an fsync", before.LogSyncs, after.LogSyncs)
	}
	n := len(after.LogSyncBuckets)
	if n != len(model.LogSyncBounds)+1 || after.LogSyncBuckets[n-1] != after.LogSyncs {
		t.Fatalf("sync buckets %v for %d syncs", after.LogSyncBuckets, after.LogSyncs)
	}
	slow := func(st model.WriterStats) int64 { return st.LogSyncBuckets[n-1] - st.LogSyncBuckets[5] } // over 25 ms
	if model.LogSyncBounds[5] != 0.025 || slow(after)-slow(before) != 1 || after.LogSyncSeconds < 0.03 {
		t.Errorf("the held fsync: %d more over 25 ms, %.3f s in all; want 1, >= 0.03 s", slow(after)-slow(before), after.LogSyncSeconds)
	}
}

func TestInTxFailsUnavailableWhenTheLogSyncFails(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	ctx := context.Background()
	db.TestFailLogSync(errors.New("EIO"))
	err := db.InTx(ctx, siteInsert("lost"))
	var ue *store.UnavailableError
	if !errors.As(err, &ue) {
		t.Fatalf("InTx with a failing fsync: %v, want an unavailable error", err)
	}
	// A statement outside InTx (autocommit) waits for the same fsync.
	if err := db.TestExec(ctx, `UPDATE sites SET name = 'x' WHERE id = 'none'`); !errors.As(err, &ue) {
		t.Errorf("autocommit statement with a failing fsync: %v", err)
	}
}

func TestGroupCommitTakesCallsThatArriveWhileTheLogSyncs(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	ctx := context.Background()
	first, base, release := commitUnsynced(t, db, "first")
	// The first commit's fsync is held: the calls that come now join one
	// open transaction, committed once that fsync is done.
	const n = 8
	_, queued := db.GroupStats()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.InTx(ctx, siteInsert(fmt.Sprintf("s%d", i)))
		}()
	}
	testkit.WaitFor(t, "the calls to be queued", func() bool { _, q := db.GroupStats(); return q == queued+n })
	release()
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	st := db.WriterStats()
	if st.Commits-base.Commits != 2 || st.Calls-base.Calls != n+1 {
		t.Errorf("commits %d carrying %d calls, want 2 carrying %d: the waiting calls did not share a commit",
			st.Commits-base.Commits, st.Calls-base.Calls, n+1)
	}
}

func TestCheckpointsKeepTheLogShort(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const limit = 64
	db, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "c.db"),
		store.Options{CheckpointEvery: 5 * time.Millisecond, CheckpointFrames: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Migrate(ctx, time.Now); err != nil {
		t.Fatal(err)
	}
	// Writers that never pause: without the committer's part of the
	// checkpoint SQLite would never start the log over.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := db.InTx(ctx, siteInsert(fmt.Sprintf("w%d-%d", w, i))); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	// The log grows past the limit, then is started over: seen shorter
	// than half the limit after having been longer, within a bounded
	// number of commits (without the committer's part it takes the
	// writers pausing by chance: thousands of commits here).
	var longAt int64 = -1
	testkit.WaitFor(t, "the log to be started over under load", func() bool {
		frames, err := db.TestLogFrames()
		if err != nil {
			t.Fatal(err)
		}
		commits := db.WriterStats().Commits
		if longAt < 0 && frames > limit {
			longAt = commits
		}
		if longAt >= 0 && frames < limit/2 {
			if n := commits - longAt; n > 1000 {
				t.Errorf("the log was started over %d commits after it passed its limit", n)
			}
			return true
		}
		return false
	})
	close(stop)
	wg.Wait()
}
