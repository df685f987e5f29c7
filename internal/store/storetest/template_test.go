package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/store"
)

// A copy of the template is migrated, its own (a row written in one is not
// in another), and dropped when its test ends.
func TestPostgresMigratedDSN(t *testing.T) {
	base := postgresBase(t)
	ctx := context.Background()
	var names []string
	for i := range 2 {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			dsn := PostgresMigratedDSN(t)
			u, err := url.Parse(dsn)
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, strings.TrimPrefix(u.Path, "/"))
			db := Open(t, dsn)
			if v, err := db.SchemaVersion(ctx); err != nil || v != store.LatestVersion() {
				t.Fatalf("schema version %d (%v), want %d", v, err, store.LatestVersion())
			}
			raw := rawDB(t, dsn)
			var schema string
			var sites int
			if err := raw.QueryRowContext(ctx, `SELECT current_schema(), (SELECT count(*) FROM sites)`).Scan(&schema, &sites); err != nil {
				t.Fatal(err)
			}
			if schema != templateSchema || sites != 0 {
				t.Errorf("schema %q with %d sites, want %q with none", schema, sites, templateSchema)
			}
			if _, err := raw.ExecContext(ctx, `CREATE TABLE mark (x int)`); err != nil {
				t.Fatal(err)
			}
		})
	}
	if len(names) != 2 || names[0] == names[1] {
		t.Fatalf("copies %v, want two databases", names)
	}
	s, err := serverFor(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	s.pending.Wait()
	raw := rawDB(t, base)
	var left int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM pg_database WHERE datname = ANY($1)`, names).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d of the copies %v outlived their tests", left, names)
	}
}

func rawDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// What cleanStale drops by name: unfinished builds and templates unused
// for staleAfter; nothing else on the server.
func TestStale(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	old, recent := now.Add(-staleAfter-time.Minute).Unix(), now.Add(-time.Minute).Unix()
	at := func(sec int64) string { return strconv.FormatInt(sec, 10) }
	for _, c := range []struct {
		name, comment string
		want          bool
	}{
		{"cleanads_tmpl_0123456789abcdef_build", "", true},
		{"cleanads_tmpl_0123456789abcdef", "storetest template, used " + at(old), true},
		{"cleanads_tmpl_0123456789abcdef", "storetest template, used " + at(recent), false},
		{"cleanads_tmpl_0123456789abcdef", "", false},
		{"cleanads", "", false},
		{"cleanads_prod", "", false},
		{"test", "", false},
	} {
		if got := stale(c.name, c.comment, now); got != c.want {
			t.Errorf("stale(%q, %q) = %v, want %v", c.name, c.comment, got, c.want)
		}
	}
}

// cleanStale drops a copy whose process is gone (its owner lock is free)
// and keeps one whose process lives (this one's).
func TestCleanStaleCopies(t *testing.T) {
	base := postgresBase(t)
	ctx := context.Background()
	s, err := serverFor(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	const gone = 0x0123456789abcdef // no process holds this lock
	dead := copyPrefix + fmt.Sprintf("%016x", gone) + "_00000000"
	live := copyPrefix + fmt.Sprintf("%016x", s.owner) + "_00000000"
	raw := rawDB(t, base)
	for _, name := range []string{dead, live} {
		if _, err := raw.ExecContext(ctx, `CREATE DATABASE `+name); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { raw.ExecContext(ctx, `DROP DATABASE IF EXISTS `+live) })
	conn, err := raw.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := cleanStale(ctx, conn, time.Now()); err != nil {
		t.Fatal(err)
	}
	var left []string
	rows, err := raw.QueryContext(ctx, `SELECT datname FROM pg_database WHERE datname IN ($1, $2) ORDER BY datname`, dead, live)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		rows.Scan(&n)
		left = append(left, n)
	}
	if len(left) != 1 || left[0] != live {
		t.Errorf("left %v, want only %s", left, live)
	}
}

func TestCopyOwner(t *testing.T) {
	if o, ok := copyOwner("cleanads_t_0123456789abcdef_a1b2c3d4"); !ok || o != 0x0123456789abcdef {
		t.Errorf("owner %x %v", o, ok)
	}
	for _, name := range []string{"cleanads_tmpl_0123456789abcdef", "cleanads_t_zz_1", "cleanads_t_1796625998_f80160d9b3f5", "cleanads", "test"} {
		if _, ok := copyOwner(name); ok {
			t.Errorf("%s taken for a copy", name)
		}
	}
}
