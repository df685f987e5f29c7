package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"strconv"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
)

// openPostgres opens one pool that serves as both reader and writer:
// PostgreSQL has no single-writer limit, and several nodes share it.
func openPostgres(ctx context.Context, dsn string, opt Options) (*DB, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("store: database URL: %w", err)
	}
	n := opt.MaxConns
	// pool_max_conns in the URL (pgxpool's name for it) sizes the pool; it
	// is ours, not a server setting, so it is taken out before connecting.
	q := u.Query()
	if v := q.Get("pool_max_conns"); v != "" {
		if n, err = strconv.Atoi(v); err != nil || n < 2 {
			return nil, fmt.Errorf("store: database URL: pool_max_conns wants a number of 2 or more, got %q", v)
		}
		q.Del("pool_max_conns")
	}
	// JIT compilation off unless the URL asks for it: the store's
	// statements are short, and one whose estimate passes jit_above_cost
	// (an outcome's update with the readiness join, estimated at 270,000
	// for 128 rows) spent 200-500 ms compiling to run in 2 ms.
	if !q.Has("jit") {
		q.Set("jit", "off")
	}
	u.RawQuery = q.Encode()
	if n <= 0 {
		n = 10
	}
	cfg, err := pgx.ParseConfig(u.String())
	if err != nil {
		return nil, fmt.Errorf("store: database URL: %w", err)
	}
	if opt.Tracer != nil {
		cfg.Tracer = opt.Tracer
	}
	// Every connection binds and reads the ids packed (idpack_postgres.go).
	p := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(registerIDCodec))
	// At least two: a migration or a job lock holds one connection while
	// the work it guards runs on another.
	p.SetMaxOpenConns(max(n, 2))
	p.SetMaxIdleConns(max(n, 2))
	var schema string
	// The schema names this installation: advisory locks are per database,
	// and two installations in two schemas of one database must not block
	// each other (the tests run that way).
	if err := p.QueryRowContext(ctx, `/* DB.Open */ SELECT COALESCE(current_schema(), '')`).Scan(&schema); err != nil {
		p.Close()
		return nil, fmt.Errorf("store: open postgres: %w", unavailable(err))
	}
	db := &DB{reader: p, writer: p, lockSpace: schema, idleConns: max(n, 2)}
	db.Q = Q{r: pgExecer{p}, w: pgExecer{p}, dialect: Postgres, box: opt.Secrets, pgIDs: &atomic.Bool{}}
	var v sql.NullInt64
	// A new database has no schema_migrations yet (the error is left):
	// it is at version 0 until MigrateWith notes each migration it applies.
	if p.QueryRowContext(ctx, `/* DB.Open */ SELECT MAX(version) FROM schema_migrations`).Scan(&v) == nil {
		db.noteSchema(int(v.Int64))
	}
	return db, nil
}

// dropIdleConns closes PostgreSQL's idle connections: after a migration
// changed a column's type (0630: ids text -> bytea), a statement a
// connection prepared before it would run with the old parameter types
// (pgx caches prepared statements per connection), so the pool starts
// afresh. A connection in use is not closed; none is while migrating.
func (db *DB) dropIdleConns() {
	if db.dialect != Postgres {
		return
	}
	db.writer.SetMaxIdleConns(0)
	db.writer.SetMaxIdleConns(db.idleConns)
}

// lockKey turns a lock name into the 64-bit key of a PostgreSQL advisory
// lock, scoped to this installation's schema.
func (db *DB) lockKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte("cleanads\x00" + db.lockSpace + "\x00" + name))
	return int64(h.Sum64())
}

// migrationLock serialises migrations across nodes: a session advisory lock
// held on one dedicated connection until the returned function runs, so
// several nodes starting together migrate once and the others wait, then
// find nothing to do. SQLite has one writer and needs no lock.
func (db *DB) migrationLock(ctx context.Context) (func(), error) {
	if db.dialect != Postgres {
		return func() {}, nil
	}
	conn, err := db.writer.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: migration lock: %w", unavailable(err))
	}
	key := db.lockKey("migrate")
	if _, err := conn.ExecContext(ctx, `/* DB.migrationLock */ SELECT pg_advisory_lock($1)`, key); err != nil {
		conn.Close()
		return nil, fmt.Errorf("store: migration lock: %w", unavailable(err))
	}
	return func() { releaseAdvisoryLock(ctx, conn, key) }, nil
}

// releaseAdvisoryLock unlocks key and gives the connection back. When the
// unlock fails the connection is thrown away instead: closing the session
// is what releases the lock then, and a pooled connection must never keep
// holding one.
func releaseAdvisoryLock(ctx context.Context, conn *sql.Conn, key int64) {
	ctx = context.WithoutCancel(ctx)
	var ok bool
	err := conn.QueryRowContext(ctx, `/* DB.releaseAdvisoryLock */ SELECT pg_advisory_unlock($1)`, key).Scan(&ok)
	if err != nil || !ok {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	conn.Close()
}

// WithJobLock runs fn unless another node is running the job with the same
// name; ran tells whether fn ran. On PostgreSQL it takes a session advisory
// lock (pg_try_advisory_lock, a key hashed from the name) on one connection
// held for the duration of fn, so exactly one node runs each periodic job at
// a time and a node that dies releases it with its session. On SQLite one
// process owns the file, so fn simply runs. fn must not assume it is alone
// after its ctx is done.
func (db *DB) WithJobLock(ctx context.Context, name string, fn func(ctx context.Context) error) (ran bool, err error) {
	if db.dialect != Postgres {
		return true, fn(ctx)
	}
	conn, err := db.writer.Conn(ctx)
	if err != nil {
		return false, fmt.Errorf("store: job lock %s: %w", name, unavailable(err))
	}
	key := db.lockKey("job:" + name)
	var got bool
	if err := conn.QueryRowContext(ctx, `/* DB.WithJobLock */ SELECT pg_try_advisory_lock($1)`, key).Scan(&got); err != nil {
		conn.Close()
		return false, fmt.Errorf("store: job lock %s: %w", name, unavailable(err))
	}
	if !got {
		conn.Close()
		return false, nil
	}
	defer releaseAdvisoryLock(ctx, conn, key)
	return true, fn(ctx)
}

// pgUnavailable tells whether a PostgreSQL error means the server cannot
// serve us now (the caller should retry later), rather than that the
// statement was wrong.
func pgUnavailable(err error) bool {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true // connection refused, DNS, TLS, auth at start-up
	}
	if errors.Is(err, pgconn.ErrConnClosed) {
		return true // a pooled connection whose server went away
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "57P01", // admin_shutdown
			"57P02", // crash_shutdown
			"57P03", // cannot_connect_now (starting up, recovering)
			"53300", // too_many_connections
			"53100", // disk_full
			"53200", // out_of_memory
			"40P01", // deadlock_detected: the transaction can simply be retried
			"40001": // serialization_failure: likewise
			return true
		}
		// Class 08: connection exceptions.
		return len(pe.Code) == 5 && pe.Code[:2] == "08"
	}
	return false
}

// pgTransient tells whether err is PostgreSQL's deadlock_detected or
// serialization_failure: the transaction was aborted for what another
// did meanwhile and can simply be run again.
func pgTransient(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// pgUniqueViolation tells whether err is PostgreSQL's unique_violation.
func pgUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// pgLockNotAvailable tells whether err is PostgreSQL's lock_not_available
// (a lock_timeout ran out).
func pgLockNotAvailable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "55P03"
}
