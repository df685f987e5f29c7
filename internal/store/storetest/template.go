package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
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
	// copyPrefix starts a copy's name, followed by its creation time in
	// Unix seconds and a random part: leftovers are found by age.
	copyPrefix = "cleanads_t_"
	// buildSuffix marks a template still being migrated; it is renamed to
	// its final name when done, so a template that exists is complete.
	buildSuffix = "_build"
	// staleAfter is the age past which a copy is a killed run's leftover
	// and a template unused that long belongs to a migration set nobody
	// tests any more: either is dropped. No test process lives that long.
	staleAfter = time.Hour
	// templateLock is the advisory lock, in the database of
	// CLEANADS_TEST_POSTGRES, under which test processes starting together
	// build, find and clean templates one at a time.
	templateLock int64 = 0x636c65616e616473 // "cleanads"
)

// templates remembers, per CLEANADS_TEST_POSTGRES, the template this test
// process found or built: the lock and the catalog are asked once a process.
var templates = struct {
	sync.Mutex
	byBase map[string]string
}{byBase: map[string]string{}}

// PostgresMigratedDSN returns the URL of a fresh migrated PostgreSQL
// database, a copy of the template for this migration set, dropped when the
// test ends. Without CLEANADS_TEST_POSTGRES the test is skipped.
func PostgresMigratedDSN(t testing.TB) string {
	t.Helper()
	base := postgresBase(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", EnvPostgres, err)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("%s: %v", EnvPostgres, err)
	}
	ctx := context.Background()
	name := copyPrefix + strconv.FormatInt(time.Now().Unix(), 10) + "_" + randomHex(6)
	for retried := false; ; retried = true {
		tmpl, err := template(ctx, admin, base)
		if err != nil {
			admin.Close()
			t.Fatalf("template database on %s: %v", u.Redacted(), err)
		}
		_, err = admin.ExecContext(ctx, `CREATE DATABASE `+name+` TEMPLATE `+tmpl)
		if err == nil {
			break
		}
		if !retried {
			// The template may have been dropped under this process (a
			// developer's cleanup): find or build it again, once.
			forgetTemplate(base)
			continue
		}
		admin.Close()
		t.Fatalf("create database %s from %s on %s: %v", name, tmpl, u.Redacted(), err)
	}
	// Registered before the test opens the database, so it runs after the
	// database is closed; FORCE ends what a test left connected.
	t.Cleanup(func() {
		defer admin.Close()
		if _, err := admin.ExecContext(ctx, `DROP DATABASE `+name+` WITH (FORCE)`); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	return withDatabase(u, name)
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

// template returns the name of the migrated template database for this
// migration set on the server of base, building it when no process has.
func template(ctx context.Context, admin *sql.DB, base string) (string, error) {
	templates.Lock()
	defer templates.Unlock()
	if name := templates.byBase[base]; name != "" {
		return name, nil
	}
	digest, err := store.MigrationsDigest(store.Postgres)
	if err != nil {
		return "", err
	}
	name := templatePrefix + digest[:16]
	conn, err := admin.Conn(ctx)
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
		if err := buildTemplate(ctx, conn, base, name); err != nil {
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
	templates.byBase[base] = name
	return name, nil
}

// forgetTemplate makes the next template call look for base's template
// again.
func forgetTemplate(base string) {
	templates.Lock()
	defer templates.Unlock()
	delete(templates.byBase, base)
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
// server: a template build they did not finish, copies older than
// staleAfter (a test process killed before its cleanups ran) and templates
// unused for staleAfter. A database still in use is left alone.
func cleanStale(ctx context.Context, conn *sql.Conn, now time.Time) error {
	rows, err := conn.QueryContext(ctx, `SELECT datname, COALESCE(shobj_description(oid, 'pg_database'), '')
		FROM pg_database WHERE datname LIKE 'cleanads%'`)
	if err != nil {
		return err
	}
	var drop []string
	for rows.Next() {
		var name, comment string
		if err := rows.Scan(&name, &comment); err != nil {
			rows.Close()
			return err
		}
		if stale(name, comment, now) {
			drop = append(drop, name)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, name := range drop {
		// Without FORCE: a database someone is connected to stays, and the
		// error says nothing worth failing a test for.
		conn.ExecContext(ctx, `DROP DATABASE IF EXISTS `+name)
	}
	return nil
}

// stale tells whether cleanStale drops database name with its comment.
func stale(name, comment string, now time.Time) bool {
	switch {
	case strings.HasPrefix(name, templatePrefix) && strings.HasSuffix(name, buildSuffix):
		return true // the build lock is held: nobody is building it
	case strings.HasPrefix(name, templatePrefix):
		used, ok := strings.CutPrefix(comment, "storetest template, used ")
		sec, err := strconv.ParseInt(used, 10, 64)
		return ok && err == nil && now.Sub(time.Unix(sec, 0)) > staleAfter
	case strings.HasPrefix(name, copyPrefix):
		created, _, _ := strings.Cut(strings.TrimPrefix(name, copyPrefix), "_")
		sec, err := strconv.ParseInt(created, 10, 64)
		return err == nil && now.Sub(time.Unix(sec, 0)) > staleAfter
	}
	return false
}
