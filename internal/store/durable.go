package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// walSyncer makes SQLite's commits durable without the writer waiting for
// the disk. The writer connection runs with synchronous=NORMAL: a commit
// writes its pages to the write-ahead log but does not fsync it. The syncer
// fsyncs the log and only then answers the callers whose commits that fsync
// covers, while the committer already runs the next batch. A caller is told
// of its commit only once it is on disk, as with synchronous=FULL, and one
// fsync serves every commit made while the one before it ran: on a disk
// whose fsync takes milliseconds that is the difference between the writer
// waiting on every batch and never.
//
// Checkpoints keep their own fsyncs (SQLite syncs the log before it copies
// it and the database file after), so the log is reused only once what it
// held is durable in the database. Readers may see a commit a moment before
// it is durable; the only thing done with it that cannot be taken back is
// sending its events to Meta, and a power cut that lost the commit leaves
// its caller unanswered, so the retry carries the same event_id, which
// Meta deduplicates.
type walSyncer struct {
	path string // the database's -wal file

	mu      sync.Mutex
	waiting []func(error)
	closed  bool
	wake    chan struct{}
	done    chan struct{}
	// idle is closed while no answer waits and no fsync runs; a new one
	// is made when an answer is queued.
	idle chan struct{}

	f     *os.File // opened at the first sync, when the log surely exists
	syncs atomic.Int64
	took  syncTimes
	// syncFile is fdatasync; tests hold it or make it fail (under mu).
	syncFile func(*os.File) error
}

func newWALSyncer(dbPath string) *walSyncer {
	s := &walSyncer{path: dbPath + "-wal", wake: make(chan struct{}, 1), idle: make(chan struct{}), done: make(chan struct{}),
		syncFile: fdatasync}
	close(s.idle)
	go s.loop()
	return s
}

// after calls answer, on the syncer's goroutine, once everything committed
// before the call is on disk (nil) or could not be put there.
func (s *walSyncer) after(answer func(error)) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		answer(ErrClosed)
		return
	}
	if len(s.waiting) == 0 && isClosed(s.idle) {
		s.idle = make(chan struct{})
	}
	s.waiting = append(s.waiting, answer)
	// Under mu: close may not close wake meanwhile.
	select {
	case s.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
	s.mu.Unlock()
}

// setSyncFile replaces fdatasync, for tests.
func (s *walSyncer) setSyncFile(fn func(*os.File) error) {
	s.mu.Lock()
	s.syncFile = fn
	s.mu.Unlock()
}

// idleCh returns a channel that is closed once no fsync runs or is due.
func (s *walSyncer) idleCh() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.idle
}

// busy tells whether an fsync is running or due.
func (s *walSyncer) busy() bool { return !isClosed(s.idleCh()) }

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// wait returns once everything committed so far is on disk.
func (s *walSyncer) wait() error {
	ch := make(chan error, 1)
	s.after(func(err error) { ch <- err })
	return <-ch
}

// close answers what is waiting, after a last fsync, and stops.
func (s *walSyncer) close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.wake)
	}
	s.mu.Unlock()
	<-s.done
	if s.f != nil {
		s.f.Close()
	}
}

func (s *walSyncer) loop() {
	defer close(s.done)
	for range s.wake {
		s.flush()
	}
	s.flush()
}

// flush takes every answer waiting, fsyncs once, and gives them the outcome.
func (s *walSyncer) flush() {
	s.mu.Lock()
	batch := s.waiting
	s.waiting = nil
	syncFile := s.syncFile
	s.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	err := s.sync(syncFile)
	// Idle before the answers go out: a caller that was answered and
	// calls again finds the syncer free and is committed at once.
	s.mu.Lock()
	if len(s.waiting) == 0 && !isClosed(s.idle) {
		close(s.idle)
	}
	s.mu.Unlock()
	for _, answer := range batch {
		answer(err)
	}
}

func (s *walSyncer) sync(syncFile func(*os.File) error) error {
	if s.f == nil {
		f, err := os.OpenFile(s.path, os.O_RDWR, 0)
		if errors.Is(err, os.ErrNotExist) {
			// No log yet: nothing was written through it.
			return nil
		}
		if err != nil {
			return &UnavailableError{Err: fmt.Errorf("store: open the log to sync it: %w", err)}
		}
		// The log's name must survive a power cut too: sync its
		// directory once, as SQLite does for a new journal in FULL mode.
		if err := syncDir(filepath.Dir(s.path)); err != nil {
			f.Close()
			return &UnavailableError{Err: fmt.Errorf("store: sync the database directory: %w", err)}
		}
		s.f = f
	}
	s.syncs.Add(1)
	start := time.Now()
	err := syncFile(s.f)
	s.took.observe(time.Since(start))
	if err != nil {
		// The kernel may have dropped the pages it could not write: the
		// callers are told their work may not be durable.
		return &UnavailableError{Err: fmt.Errorf("store: sync the log: %w", err)}
	}
	return nil
}

// syncTimes counts the log's fsyncs by how long they took, in the bounds
// of model.LogSyncBounds (one more bucket for the slower ones).
type syncTimes struct {
	counts [len(model.LogSyncBounds) + 1]atomic.Int64
	nanos  atomic.Int64
}

// logSyncBounds is model.LogSyncBounds as durations.
var logSyncBounds = func() (b [len(model.LogSyncBounds)]time.Duration) {
	for i, s := range model.LogSyncBounds {
		b[i] = time.Duration(s * float64(time.Second))
	}
	return b
}()

func (t *syncTimes) observe(d time.Duration) {
	i := 0
	for i < len(logSyncBounds) && d > logSyncBounds[i] {
		i++
	}
	t.counts[i].Add(1)
	t.nanos.Add(int64(d))
}

// cumulative returns the counts as model.WriterStats.LogSyncBuckets.
func (t *syncTimes) cumulative() []int64 {
	out := make([]int64, len(t.counts))
	var n int64
	for i := range t.counts {
		n += t.counts[i].Load()
		out[i] = n
	}
	return out
}

// syncedWriter is the writer pool for statements outside InTx (admin
// edits, retention deletes): each is committed on its own, so each waits
// for the syncer before it returns. Once the schema queues the leads to
// index (searchQueue), each runs in a transaction of its own that indexes
// them before it commits, as InTx's do.
type syncedWriter struct {
	db     *sql.DB
	s      *walSyncer
	search *searchQueue
}

func (w syncedWriter) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if !w.search.ready.Load() {
		res, err := w.db.ExecContext(ctx, query, args...)
		if err != nil {
			return res, err
		}
		return res, w.s.wait()
	}
	t, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer t.Rollback()
	res, err := t.ExecContext(ctx, query, args...)
	if err != nil {
		return res, err
	}
	if err := w.search.flush(ctx, t); err != nil {
		return nil, err
	}
	if err := t.Commit(); err != nil {
		return nil, err
	}
	return res, w.s.wait()
}

func (w syncedWriter) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return w.db.QueryContext(ctx, query, args...)
}

func (w syncedWriter) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return w.db.QueryRowContext(ctx, query, args...)
}

// Checkpoint defaults (Options.CheckpointEvery, Options.CheckpointFrames):
// how often the background checkpointer copies the log into the database
// file, and how long the log may grow before the committer finishes a
// checkpoint between two batches (4 KB pages: 64 MB).
const (
	DefaultCheckpointEvery  = 100 * time.Millisecond
	DefaultCheckpointFrames = 16384
)

// checkpointer copies the write-ahead log into the database file from a
// connection of its own, so the writer never stops for it (SQLite would
// otherwise checkpoint inside the commit that crosses 1000 pages, two
// fsyncs included). A background checkpoint cannot finish while the writer
// keeps appending, and SQLite reuses the log from its start only after one
// has: once the log passes Options.CheckpointFrames the committer is asked
// to run the last, short part itself, between two batches.
type checkpointer struct {
	db     *sql.DB
	every  time.Duration
	frames int
	finish chan struct{} // to the committer: finish a checkpoint
	quit   chan struct{}
	done   chan struct{}
	once   sync.Once
}

func newCheckpointer(db *sql.DB, every time.Duration, frames int) *checkpointer {
	if every <= 0 {
		every = DefaultCheckpointEvery
	}
	if frames <= 0 {
		frames = DefaultCheckpointFrames
	}
	c := &checkpointer{db: db, every: every, frames: frames, finish: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go c.loop()
	return c
}

func (c *checkpointer) loop() {
	defer close(c.done)
	t := time.NewTicker(c.every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-c.quit:
			return
		}
		frames, err := checkpoint(c.db)
		if err != nil || frames < c.frames {
			continue
		}
		// Catch up with what the writer appended meanwhile, so the part
		// left to the committer, which holds up every request while it
		// runs, is a few pages.
		if _, err := checkpoint(c.db); err != nil {
			continue
		}
		select {
		case c.finish <- struct{}{}:
		default:
		}
	}
}

func (c *checkpointer) close() {
	c.once.Do(func() { close(c.quit) })
	<-c.done
	c.db.Close()
}

// checkpoint runs a passive checkpoint on db (it never waits for a lock)
// and returns how many frames the log holds.
func checkpoint(db *sql.DB) (frames int, err error) {
	var busy, done int
	err = db.QueryRow(`/* DB.checkpoint */ PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &done)
	return frames, err
}
