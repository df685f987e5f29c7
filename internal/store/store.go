// Package store owns every SQL statement of CleanAds: one file per entity,
// the embedded migrations, and the few differences between SQLite and
// PostgreSQL, each in a named helper. Statements are written in the subset
// both engines speak, with ? placeholders rebound for PostgreSQL.
//
// Two rules every statement and every InTx function keep, because on SQLite
// the group commit (group.go) runs a batch without savepoints and, when one
// of its calls fails, rolls back and runs the statements of the calls
// before it again, with the arguments they were given:
//
//   - A statement gives the same result on the same state: no random(),
//     now(), CURRENT_TIMESTAMP, datetime('now'), gen_random_uuid() or the
//     like, in a statement or in a migration's DEFAULT or trigger; times and
//     ids are passed as arguments. TestStatementsDeterministic
//     (deterministic_test.go) reads every statement and migration and fails
//     on one that does not.
//   - A function does not change an argument it gave a statement (a slice
//     or a []byte) after the statement ran: the statement runs again with
//     what the argument holds then.
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/secret"
)

// Dialect names a database engine.
type Dialect string

// The engines.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// execer is what both *sql.DB and *sql.Tx offer.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Q runs the entity methods. Outside a transaction reads go to the reader
// pool and writes to the single writer; inside one both are the transaction.
type Q struct {
	r, w    execer
	dialect Dialect
	// pgIDs is set when PostgreSQL's id columns are bytea (migration
	// 0630), so that a statement's casts name their type; nil on SQLite.
	pgIDs *atomic.Bool
	// box seals secrets (Meta access tokens) on the way in and opens them
	// on the way out; nil refuses to store a token.
	box *secret.Box
	// tally keeps a transaction's counter counts until its work is done
	// (CountersAdd); nil outside a transaction.
	tally *counterTally
}

// DB is an open database.
type DB struct {
	Q
	reader, writer *sql.DB
	// lockSpace scopes PostgreSQL advisory lock keys to this installation
	// (its schema).
	lockSpace string
	// group coalesces concurrent transactions on SQLite; nil elsewhere.
	group *group
	// search indexes the leads each SQLite transaction stored, before it
	// commits; nil elsewhere.
	search *searchQueue
	// version is the binary's, recorded with each migration it applies.
	version string
	// packIDs is set when SQLite's stored ids are packed (idpack.go); nil
	// on PostgreSQL.
	packIDs *atomic.Bool
	// idleConns is how many idle connections PostgreSQL's pool keeps.
	idleConns int
}

// Tx is a transaction; it has every entity method of DB.
type Tx struct {
	Q
	waiting func() bool // nil: nobody queues behind this transaction
	start   time.Time   // when the call began to hold the writer
}

// yieldAfter is how long a call holds SQLite's writer before ShouldYield
// tells it to let the calls queued behind it in.
const yieldAfter = time.Millisecond

// ShouldYield reports whether a long job (claiming or recording thousands
// of events) should end its transaction here and go on in the next one:
// SQLite has one writer, and once the job has held it for a millisecond
// while other calls queue behind it, each of them would wait for all of it.
// On PostgreSQL transactions run side by side and it is always false.
func (tx *Tx) ShouldYield() bool {
	return tx.waiting != nil && time.Since(tx.start) >= yieldAfter && tx.waiting()
}

// Options tune Open.
type Options struct {
	// ReadConns is the size of the SQLite reader pool (default 4).
	ReadConns int
	// MaxConns is the size of the PostgreSQL pool (default 10, or the URL's
	// pool_max_conns).
	MaxConns int
	// BusyTimeout is how long a SQLite statement waits for a lock before it
	// fails as unavailable (default 10s).
	BusyTimeout time.Duration
	// GroupMax is how many concurrent InTx calls SQLite commits together
	// at most (default DefaultGroupMax); 1 commits each on its own.
	GroupMax int
	// Secrets encrypts Meta access tokens at rest; without it a site with a
	// token cannot be stored.
	Secrets *secret.Box
	// CheckpointEvery is how often SQLite's write-ahead log is copied into
	// the database file in the background (default
	// DefaultCheckpointEvery).
	CheckpointEvery time.Duration
	// CheckpointFrames is how many pages the log may hold before the writer
	// finishes a checkpoint between two batches, so that SQLite starts the
	// log over (default DefaultCheckpointFrames).
	CheckpointFrames int
	// Tracer, when set, sees every statement sent to PostgreSQL (tests
	// count a use case's round trips with it); SQLite ignores it.
	Tracer pgx.QueryTracer
	// Version is the running binary's version (buildinfo), recorded with
	// each migration it applies, so an older binary that meets the schema
	// can say which version to run.
	Version string
}

// Open connects to dsn: "sqlite:PATH" or "postgres://...". It does not
// migrate; call Migrate.
func Open(ctx context.Context, dsn string, opt Options) (*DB, error) {
	var (
		db  *DB
		err error
	)
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		db, err = openSQLite(ctx, strings.TrimPrefix(dsn, "sqlite:"), opt)
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		db, err = openPostgres(ctx, dsn, opt)
	default:
		return nil, fmt.Errorf("store: unsupported database %q (want sqlite:PATH or postgres://...)", dsn)
	}
	if err != nil {
		return nil, err
	}
	db.version = opt.Version
	return db, nil
}

// RedactDSN returns dsn with its password, if any, masked: for logs and
// messages.
func RedactDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		return u.Redacted()
	}
	return dsn
}

func openSQLite(ctx context.Context, path string, opt Options) (*DB, error) {
	if path == "" {
		return nil, errors.New("store: sqlite needs a file path")
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
	}
	// One writer connection: SQLite has one writer anyway, and queueing in
	// Go is cheaper than spinning on SQLITE_BUSY. Transactions start with
	// BEGIN IMMEDIATE so a read-then-write never fails half-way.
	// Durability: the writer commits with synchronous=NORMAL and the
	// syncer fsyncs the log before any caller is answered (walSyncer), so
	// a 2xx is on disk as with FULL, without the writer waiting for it.
	// Checkpoints run off the writer (checkpointer), hence
	// wal_autocheckpoint(0); journal_size_limit trims the log after one.
	busy := opt.BusyTimeout
	if busy <= 0 {
		busy = 10 * time.Second
	}
	common := fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)", busy.Milliseconds())
	// temp_store(memory): statement journals (a batch rebuilt after a
	// failed call runs the rest in savepoints) stay in memory, not in a
	// temporary file.
	// cache_size: the writer's page cache, 16 MB, holds the growing ends
	// of the tables and indexes it writes. 32 MB added 18 MB to the peak
	// RSS under load and nothing measurable to throughput; 24 MB against
	// 16 MB, at 256 connections: 12-22 MB more RSS (147-149 MB), 4-7% more
	// leads a second.
	// Both pools go through the id packing wrapper (idpack.go), which packs
	// once the schema says the stored ids are packed (idsPackedSince).
	pack := new(atomic.Bool)
	w := openIDPacked("file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=wal_autocheckpoint(0)&_pragma=journal_size_limit(67108864)&_pragma=temp_store(memory)&_pragma=cache_size(-16384)&_txlock=immediate&"+common, pack)
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, unavailable(err))
	}
	r := openIDPacked("file:"+path+"?_pragma=query_only(1)&"+common, pack)
	n := opt.ReadConns
	if n <= 0 {
		n = 4
	}
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	// The checkpointer's own connection (synchronous=NORMAL still syncs
	// the log before a checkpoint and the database file after it).
	c, err := sql.Open("sqlite", "file:"+path+"?_pragma=synchronous(NORMAL)&"+common)
	if err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("store: %w", err)
	}
	c.SetMaxOpenConns(1)
	syncer := newWALSyncer(path)
	search := &searchQueue{}
	db := &DB{reader: r, writer: w, packIDs: pack, search: search,
		group: newGroup(w, opt.GroupMax, opt.Secrets, search, syncer, newCheckpointer(c, opt.CheckpointEvery, opt.CheckpointFrames))}
	db.Q = Q{r: r, w: syncedWriter{db: w, s: syncer, search: search}, dialect: SQLite, box: opt.Secrets}
	var v sql.NullInt64
	// A new database has no schema_migrations yet: it is at version 0
	// until MigrateWith notes each migration it applies.
	if w.QueryRowContext(ctx, `/* DB.Open */ SELECT MAX(version) FROM schema_migrations`).Scan(&v) == nil {
		db.noteSchema(int(v.Int64))
	}
	return db, nil
}

// noteSchema sets what the store does by its schema's version: on SQLite
// from 0590 it indexes the leads a transaction queued before it commits
// (searchQueue), from 0600 it packs the ids it binds (idpack.go); on
// PostgreSQL from 0630 its statements cast ids to bytea
// (idpack_postgres.go). It is called when the database is opened, and by
// MigrateWith before it starts and after each migration.
func (db *DB) noteSchema(version int) {
	if db.packIDs != nil {
		db.packIDs.Store(version >= idsPackedSince)
	}
	if db.pgIDs != nil {
		db.pgIDs.Store(version >= pgIDsPackedSince)
	}
	if db.search != nil {
		db.search.ready.Store(version >= searchQueuedSince)
	}
}

// txQ is the Q of a transaction t: on PostgreSQL its arguments go through
// pgExecer, as the pool's do.
func (db *DB) txQ(t *sql.Tx) Q {
	if db.dialect == Postgres {
		return Q{r: pgExecer{t}, w: pgExecer{t}, dialect: db.dialect, box: db.box, pgIDs: db.pgIDs}
	}
	return Q{r: t, w: t, dialect: db.dialect, box: db.box}
}

// Dialect tells which engine the database runs on.
func (db *DB) Dialect() Dialect { return db.dialect }

// Close waits for the transaction being committed, fails the ones still
// queued with ErrClosed, and closes every connection.
func (db *DB) Close() error {
	if db.group != nil {
		db.group.close()
	}
	err := db.writer.Close()
	if db.reader != db.writer {
		err = errors.Join(err, db.reader.Close())
	}
	return err
}

// WriterStats reports the single SQLite writer's commits, the calls they
// carried and the log fsyncs; all zero on PostgreSQL.
func (db *DB) WriterStats() model.WriterStats {
	if db.group == nil {
		return model.WriterStats{}
	}
	g := db.group
	return model.WriterStats{Commits: g.commits.Load(), Calls: g.calls.Load(), Rebuilds: g.rebuilds.Load(), LogSyncs: g.sync.syncs.Load(),
		LogSyncBuckets: g.sync.took.cumulative(), LogSyncSeconds: time.Duration(g.sync.took.nanos.Load()).Seconds(),
		BusySeconds: time.Duration(g.busy.Load()).Seconds()}
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	if err := db.writer.QueryRowContext(ctx, "/* DB.Ping */ SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("store: ping: %w", unavailable(err))
	}
	return nil
}

// LimitPages caps the SQLite file at n pages, never below its current size
// (PRAGMA max_page_count on the single writer connection); 0 lifts the cap.
// A write that needs more room then fails as on a full disk, with an
// unavailable error. Tests use it to bring a full disk about and end it;
// PostgreSQL has no such cap.
func (db *DB) LimitPages(ctx context.Context, n int64) error {
	if db.dialect != SQLite {
		return fmt.Errorf("store: LimitPages: only SQLite has a page cap")
	}
	if n <= 0 {
		n = 1 << 32 // SQLite clamps it to its own maximum
	}
	if _, err := db.writer.ExecContext(ctx, fmt.Sprintf("/* DB.LimitPages */ PRAGMA max_page_count = %d", n)); err != nil {
		return fmt.Errorf("store: limit pages: %w", unavailable(err))
	}
	return nil
}

// InTx runs fn in one transaction: committed when fn returns nil, rolled
// back otherwise; it returns once the outcome is durable. On SQLite
// concurrent calls share one transaction and its commit (see group), and
// one caller's failure never undoes another's work: fn runs once, but the
// statements it ran may be run again, in a new transaction on the same
// state, when a call after it fails; fn must not keep tx after it returns,
// nor change the arguments it gave a statement after the statement ran.
// A panic in fn is re-raised here.
func (db *DB) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	// The counts fn adds are written after its work, in one order: see
	// counterTally.
	work := fn
	fn = func(tx *Tx) error {
		tx.tally = &counterTally{}
		if err := work(tx); err != nil {
			return err
		}
		return tx.tally.flush(ctx, tx.Q)
	}
	if db.group != nil {
		return db.group.inTx(ctx, fn, false)
	}
	t, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", unavailable(err))
	}
	tx := &Tx{Q: db.txQ(t)}
	if err := fn(tx); err != nil {
		_ = t.Rollback()
		// fn's errors come from any entity method; classifying here once
		// means every write path answers "unavailable" the same way.
		return unavailable(err)
	}
	if err := t.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", unavailable(err))
	}
	return nil
}

// IntakeTx is InTx for a call that only adds to counters and reads none
// (a visit's or a lead's intake). On SQLite its counts wait for the end of
// its group commit's batch, or for the next call of the batch that is not
// an IntakeTx, and the counts of every call of the batch that succeeded are
// then written together: about 120 visits a commit add 1 each to the same
// few rows, which were as many upserts of one row, one statement each, on
// the one writer. The counters end the same; a call that fails adds
// nothing. Elsewhere it is InTx.
func (db *DB) IntakeTx(ctx context.Context, fn func(tx *Tx) error) error {
	if db.group == nil {
		return db.InTx(ctx, fn)
	}
	return db.group.inTx(ctx, fn, true)
}

// Autocommit returns a Tx outside any transaction, whose statements each
// commit on their own, on PostgreSQL; on SQLite, whose writes go through
// the group commit, ok is false. It is for a use case whose writes are one
// statement (LeadIntakeWrite) and whose reads need no snapshot shared with
// them (under READ COMMITTED each statement of a transaction reads its
// own snapshot anyway): BEGIN and COMMIT are two round trips of their own.
func (db *DB) Autocommit() (tx *Tx, ok bool) {
	if db.group != nil || db.dialect != Postgres {
		return nil, false
	}
	return &Tx{Q: db.Q}, true
}

// rebind turns ? placeholders into PostgreSQL's $1, $2, ...; SQLite keeps
// them. Statements never hold a literal ? in a string.
func (q Q) rebind(query string) string {
	if q.dialect != Postgres {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(fmt.Sprint(n))
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}

func (q Q) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := q.w.ExecContext(ctx, q.rebind(query), args...)
	return res, unavailable(err)
}

func (q Q) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	rows, err := q.r.QueryContext(ctx, q.rebind(query), args...)
	return rows, unavailable(err)
}

func (q Q) queryRow(ctx context.Context, query string, args ...any) *row {
	return &row{q.r.QueryRowContext(ctx, q.rebind(query), args...)}
}

// row is a *sql.Row whose Scan marks storage-unavailable errors;
// sql.ErrNoRows comes back unchanged.
type row struct{ r *sql.Row }

// Scan copies the row's columns into dest.
func (r *row) Scan(dest ...any) error { return unavailable(r.r.Scan(dest...)) }

// forUpdateSkipLocked is the row-locking suffix for claiming work: several
// PostgreSQL nodes never claim the same row; SQLite has one writer and needs
// none.
func (q Q) forUpdateSkipLocked() string {
	if q.dialect == Postgres {
		return " FOR UPDATE SKIP LOCKED"
	}
	return ""
}

// ms stores a time as Unix milliseconds; the zero time is NULL.
func ms(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

// fromMS reads a nullable Unix-millisecond column.
func fromMS(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64).UTC()
}

// notFound maps sql.ErrNoRows to model.ErrNotFound, with context.
func notFound(err error, what string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, model.ErrNotFound)
	}
	return fmt.Errorf("store: %s: %w", what, err)
}

// isUniqueViolation tells whether err is a unique-constraint failure, by
// the engines' error codes.
func isUniqueViolation(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return pgUniqueViolation(err)
}

// UnavailableError wraps an error that says the database cannot serve the
// request now (down, overloaded, locked, disk full) rather than that the
// request was wrong: callers answer "try again later" (HTTP 503).
type UnavailableError struct{ Err error }

// Error returns the wrapped error's text.
func (e *UnavailableError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *UnavailableError) Unwrap() error { return e.Err }

// Unavailable is always true; web finds it through errors.As.
func (e *UnavailableError) Unavailable() bool { return true }

// unavailable wraps err in UnavailableError when it says the database
// cannot serve us now; any other error, and nil, comes back as it is.
func unavailable(err error) error {
	if err == nil {
		return nil
	}
	var ue *UnavailableError
	if errors.As(err, &ue) {
		return err
	}
	if isUnavailable(err) {
		return &UnavailableError{Err: err}
	}
	return err
}

// isUnavailable classifies a driver error.
func isUnavailable(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		// The primary code is the low byte of an extended code.
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR:
			return true
		}
		return false
	}
	if pgUnavailable(err) {
		return true
	}
	// The connection broke under a statement: the network, or the server
	// went away. database/sql gives ErrBadConn when every retry failed.
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF)
}

// scanText reads a row of one text column (an id): scanAll's scan for a
// list of them.
func scanText(r scanner) (string, error) {
	var s string
	return s, r.Scan(&s)
}

// scanAll reads every row of a query with scan, closing the rows; err is
// the query's own error, so a call reads
// `rows, err := q.query(...); return scanAll(rows, err, "leads", scanLead)`.
func scanAll[T any](rows *sql.Rows, err error, what string, scan func(scanner) (T, error)) ([]T, error) {
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", what, err)
	}
	defer rows.Close()
	var list []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("store: %s: %w", what, err)
		}
		list = append(list, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: %s: %w", what, err)
	}
	return list, nil
}

// newestFirst ends a list query's WHERE clause with keyset paging on
// (timeCol, id), newest first: rows before (before, beforeID) when before is
// set, and a page of limit rows (50 when it is not within 1-500).
func newestFirst(where string, args []any, timeCol string, before time.Time, beforeID string, limit int) (string, []any) {
	where, args = olderThan(where, args, timeCol, before, beforeID)
	return where + " ORDER BY " + timeCol + " DESC, id DESC LIMIT ?", append(args, pageLimit(limit))
}

// olderThan adds to where the rows after a page that ended with (before,
// beforeID), newest first: older, or as old with a lower id. A zero
// before adds nothing.
func olderThan(where string, args []any, timeCol string, before time.Time, beforeID string) (string, []any) {
	if before.IsZero() {
		return where, args
	}
	// The bound on timeCol alone comes first: with the OR only, SQLite
	// read the index from its newest end and filtered, a scan of every
	// row newer than the page (the inbox's later pages grew with the
	// leads).
	return where + " AND " + timeCol + " <= ? AND (" + timeCol + " < ? OR id < ?)",
		append(args, before.UnixMilli(), before.UnixMilli(), beforeID)
}

// pageLimit is the number of rows a page of a list has: limit, or 50 when
// it is not from 1 to 500.
func pageLimit(limit int) int {
	if limit <= 0 || limit > 500 {
		return 50
	}
	return limit
}

// txRetries is how many times inTxRetry runs a transaction that
// PostgreSQL aborted for a deadlock or a serialization failure.
const txRetries = 5

// inTxRetry is InTx for work that must not be left undone, an outcome of
// the drain above all (one not recorded keeps its lease, and its event is
// sent again when the lease runs out): a transaction PostgreSQL aborted for
// a deadlock or a serialization failure (pgTransient) runs again, up to
// txRetries times, after a short random pause. fn must be safe to run
// again: everything it did in the transaction was rolled back.
func (db *DB) inTxRetry(ctx context.Context, fn func(tx *Tx) error) error {
	for i := 1; ; i++ {
		err := db.InTx(ctx, fn)
		if err == nil || i == txRetries || !pgTransient(err) {
			return err
		}
		pause := time.Duration(1+rand.IntN(5<<i)) * time.Millisecond
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return err
		}
	}
}
