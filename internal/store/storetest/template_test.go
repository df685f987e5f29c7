package storetest

import (
	"context"
	"database/sql"
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

// What cleanStale drops: unfinished builds, copies and templates past
// staleAfter; nothing else on the server.
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
		{"cleanads_t_" + at(old) + "_00112233aabb", "", true},
		{"cleanads_t_" + at(recent) + "_00112233aabb", "", false},
		{"cleanads", "", false},
		{"cleanads_prod", "", false},
		{"test", "", false},
	} {
		if got := stale(c.name, c.comment, now); got != c.want {
			t.Errorf("stale(%q, %q) = %v, want %v", c.name, c.comment, got, c.want)
		}
	}
}
