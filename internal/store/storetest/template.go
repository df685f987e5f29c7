package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/store"
)

// A fresh PostgreSQL test database used to be an empty schema that the test
// migrated, every step of every migration, 2-6 s a test on a loaded 2-core
// machine. A schema cannot be copied but a database can: the migrations
// run once per migration set into a template database, and each test gets
// a database copied from it (CREATE DATABASE ... TEMPLATE), in a fraction
// of that. Tests of the migrations themselves keep PostgresDSN's empty
// schema.

const (
	// templateSchema is the schema the template is migrated into: every
	// copy has it, and a copy's URL names it in search_path, as the
	// empty schemas of PostgresDSN are named.
	templateSchema = "cleanads_test"
	// templatePrefix starts a template's name, followed by the first 16
	// hex digits of store.MigrationsDigest: a changed migration set gets
	// a template of its own.
	templatePrefix = "cleanads_tmpl_"
	// copyPrefix starts a copy's name, followed by the owner lock of the
	// process that made it (server.owner) and a random part.
	copyPrefix = "cleanads_t_"
	// buildSuffix marks a template still being migrated; it is renamed to
	// its final name when done, so a template that exists is complete.
	buildSuffix = "_build"
	// staleAfter: a template unused that long belongs to a migration set
	// nobody tests any more, and is dropped. No test process lives that
	// long (a process marks its template used when it starts).
	staleAfter = time.Hour
	// templateLock is the advisory lock, in the database of
	// CLEANADS_TEST_POSTGRES, under which test processes starting together
	// build, find and clean templates one at a time.
	templateLock int64 = 0x636c65616e616473 // "cleanads"
)

// servers holds, per CLEANADS_TEST_POSTGRES, what this test process keeps
// on that server: found or built once a process, used by all its tests.
var servers = struct {
	sync.Mutex
	byBase map[string]*server
}{byBase: map[string]*server{}}

// server is a test process's hold on a PostgreSQL server: a pool to create
// and drop databases with, the template, and its owner lock.
type server struct {
	base  string
	admin *sql.DB
	// owner is the key of the advisory lock this process holds, on a
	// connection of its own, for as long as it lives; in hexadecimal it
	// is in the name of every copy the process makes, so cleanStale knows
	// a copy whose process is gone (the lock is free) from one in use.
	owner int64
	// template is the migrated template's name; "" until found or built.
	template string
	// drops hands finished copies to the dropper; pending counts those
	// not dropped yet.
	drops   chan string
	pending sync.WaitGroup
}

// PostgresMigratedDSN returns the URL of a fresh migrated PostgreSQL
// database, a copy of the template for this migration set, dropped after
// the test ends. Without CLEANADS_TEST_POSTGRES the test is skipped.
func PostgresMigratedDSN(t testing.TB) string {
	t.Helper()
	base := postgresBase(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", EnvPostgres, err)
	}
	ctx := context.Background()
	s, err := serverFor(ctx, base)
	if err != nil {
		t.Fatalf("PostgreSQL at %s: %v", u.Redacted(), err)
	}
	name, err := s.copy(ctx)
	if err != nil {
		t.Fatalf("PostgreSQL at %s: %v", u.Redacted(), err)
	}
	// Registered before the test opens the database, so it runs after the
	// database is closed. The drop runs in the background: DROP DATABASE
	// makes the server checkpoint (1-3 s on a loaded machine), which the
	// test has no need to wait for.
	t.Cleanup(func() {
		s.pending.Add(1)
		s.drops <- name
	})
	return withDatabase(u, name)
}

// serverFor returns this process's hold on the server of base, taking the
// owner lock the first time (copy finds or builds the template).
func serverFor(ctx context.Context, base string) (*server, error) {
	servers.Lock()
	defer servers.Unlock()
	if s := servers.byBase[base]; s != nil {
		return s, nil
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return nil, err
	}
	conn, err := admin.Conn(ctx)
	if err != nil {
		admin.Close()
		return nil, err
	}
	s := &server{base: base, admin: admin, drops: make(chan string, 1024)}
	var b [8]byte
	rand.Read(b[:])
	s.owner = int64(binary.BigEndian.Uint64(b[:]) >> 1)
	// The connection is never given back: the lock lives with the process.
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, s.owner); err != nil {
		conn.Close()
		admin.Close()
		return nil, fmt.Errorf("owner lock: %w", err)
	}
	go s.dropper()
	servers.byBase[base] = s
	return s, nil
}

// dropper drops the copies whose tests ended, one at a time. A copy still
// queued when the process exits is dropped by a later run's cleanStale.
func (s *server) dropper() {
	for name := range s.drops {
		s.admin.ExecContext(context.Background(), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
		s.pending.Done()
	}
}

// copy creates a copy of the template and returns its name.
func (s *server) copy(ctx context.Context) (string, error) {
	name := copyPrefix + fmt.Sprintf("%016x", s.owner) + "_" + randomHex(4)
	for retried := false; ; retried = true {
		tmpl, err := s.templateName(ctx)
		if err != nil {
			return "", fmt.Errorf("template database: %w", err)
		}
		_, err = s.admin.ExecContext(ctx, `CREATE DATABASE `+name+` TEMPLATE `+tmpl)
		if err == nil {
			return name, nil
		}
		if retried {
			return "", fmt.Errorf("create database %s from %s: %w", name, tmpl, err)
		}
		// The template may have been dropped under this process (a
		// developer's cleanup): find or build it again, once.
		servers.Lock()
		s.template = ""
		servers.Unlock()
	}
}

// postgresBase returns CLEANADS_TEST_POSTGRES, or skips the test without it.
func postgresBase(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvPostgres)
	if base == "" {
		t.Skipf("PostgreSQL half skipped: set %s to a server URL (postgres://postgres@127.0.0.1:5432/test?sslmode=disable) to run it", EnvPostgres)
	}
	return base
}

// withDatabase returns base's URL pointed at database name, searching the
// template's schema.
func withDatabase(base *url.URL, name string) string {
	u := *base
	u.Path = "/" + name
	q := u.Query()
	q.Set("search_path", templateSchema)
	u.RawQuery = q.Encode()
	return u.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// templateName returns the name of the migrated template database for this
// migration set, building it when no process has.
func (s *server) templateName(ctx context.Context) (string, error) {
	servers.Lock()
	defer servers.Unlock()
	if s.template != "" {
		return s.template, nil
	}
	digest, err := store.MigrationsDigest(store.Postgres)
	if err != nil {
		return "", err
	}
	name := templatePrefix + digest[:16]
	conn, err := s.admin.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, templateLock); err != nil {
		return "", fmt.Errorf("lock: %w", err)
	}
	defer func() {
		var ok bool
		err := conn.QueryRowContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, templateLock).Scan(&ok)
		if err != nil || !ok {
			// Closing the session releases the lock: a pooled connection
			// must not keep it.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	var exists bool
	if err := conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return "", err
	}
	if !exists {
		if err := buildTemplate(ctx, conn, s.base, name); err != nil {
			return "", err
		}
	}
	// The comment says when the template was last used, for cleanStale in
	// other runs.
	if _, err := conn.ExecContext(ctx, fmt.Sprintf(`COMMENT ON DATABASE %s IS 'storetest template, used %d'`, name, time.Now().Unix())); err != nil {
		return "", err
	}
	if err := cleanStale(ctx, conn, time.Now()); err != nil {
		return "", fmt.Errorf("clean stale test databases: %w", err)
	}
	s.template = name
	return name, nil
}

// buildTemplate migrates a new database into the schema templateSchema and
// names it name once complete. conn holds templateLock.
func buildTemplate(ctx context.Context, conn *sql.Conn, base, name string) error {
	building := name + buildSuffix
	// A build that was killed half-way left its database behind.
	if _, err := conn.ExecContext(ctx, `DROP DATABASE IF EXISTS `+building+` WITH (FORCE)`); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, `CREATE DATABASE `+building); err != nil {
		return err
	}
	err := migrateTemplate(ctx, base, building)
	if err == nil {
		_, err = conn.ExecContext(ctx, `ALTER DATABASE `+building+` RENAME TO `+name)
	}
	if err != nil {
		conn.ExecContext(ctx, `DROP DATABASE IF EXISTS `+building+` WITH (FORCE)`)
		return fmt.Errorf("build %s: %w", name, err)
	}
	return nil
}

// migrateTemplate creates templateSchema in database name and migrates it,
// as Open does a test's database; every connection is closed on return,
// since a database with connections cannot be renamed or copied.
func migrateTemplate(ctx context.Context, base, name string) error {
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	dsn := withDatabase(u, name)
	raw, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	_, err = raw.ExecContext(ctx, `CREATE SCHEMA `+templateSchema)
	raw.Close()
	if err != nil {
		return err
	}
	box, err := testBox()
	if err != nil {
		return err
	}
	db, err := store.Open(ctx, dsn, store.Options{Secrets: box})
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Migrate(ctx, time.Now)
	return err
}

// cleanStale drops, under templateLock, what earlier runs left on the
// server: a template build they did not finish, copies whose process is
// gone (its owner lock is free: it was killed, or exited with drops still
// queued) and templates unused for staleAfter. A database still in use is
// left alone.
func cleanStale(ctx context.Context, conn *sql.Conn, now time.Time) error {
	rows, err := conn.QueryContext(ctx, `SELECT datname, COALESCE(shobj_description(oid, 'pg_database'), '')
		FROM pg_database WHERE datname LIKE 'cleanads%'`)
	if err != nil {
		return err
	}
	var drop, copies []string
	owners := map[int64]bool{} // owner lock -> its process is gone
	for rows.Next() {
		var name, comment string
		if err := rows.Scan(&name, &comment); err != nil {
			rows.Close()
			return err
		}
		if owner, ok := copyOwner(name); ok {
			owners[owner] = false
			copies = append(copies, name)
		} else if stale(name, comment, now) {
			drop = append(drop, name)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for owner := range owners {
		var free bool
		if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, owner).Scan(&free); err != nil {
			return err
		}
		if free {
			if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, owner); err != nil {
				return err
			}
			owners[owner] = true
		}
	}
	for _, name := range copies {
		if owner, _ := copyOwner(name); owners[owner] {
			drop = append(drop, name)
		}
	}
	for _, name := range drop {
		// FORCE only ends the sessions of a process that is gone; a
		// template in use is left (its drop fails, which is no test's
		// concern).
		force := ""
		if _, ok := copyOwner(name); ok {
			force = " WITH (FORCE)"
		}
		conn.ExecContext(ctx, `DROP DATABASE IF EXISTS `+name+force)
	}
	return nil
}

// copyOwner returns the owner lock in the name of a copy, and whether name
// is one.
func copyOwner(name string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, copyPrefix)
	if !ok {
		return 0, false
	}
	hexOwner, _, _ := strings.Cut(rest, "_")
	if len(hexOwner) != 16 {
		return 0, false
	}
	owner, err := strconv.ParseUint(hexOwner, 16, 63)
	return int64(owner), err == nil
}

// stale tells whether cleanStale drops template database name with its
// comment (copies are judged by their owner lock).
func stale(name, comment string, now time.Time) bool {
	switch {
	case strings.HasPrefix(name, templatePrefix) && strings.HasSuffix(name, buildSuffix):
		return true // the build lock is held: nobody is building it
	case strings.HasPrefix(name, templatePrefix):
		used, ok := strings.CutPrefix(comment, "storetest template, used ")
		sec, err := strconv.ParseInt(used, 10, 64)
		return ok && err == nil && now.Sub(time.Unix(sec, 0)) > staleAfter
	}
	return false
}
