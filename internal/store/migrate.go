package store

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one numbered schema step.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations lists the steps for dialect in order. A step is NNNN_name.sql,
// or twins NNNN_name.sqlite.sql / NNNN_name.postgres.sql where the engines
// differ.
func migrations(d Dialect) ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	byVersion := map[int]migration{}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".sql")
		if base, eng, ok := strings.Cut(name, "."); ok {
			if Dialect(eng) != d {
				continue
			}
			name = base
		}
		num, rest, _ := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("store: migration %s: bad number", e.Name())
		}
		b, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		if _, dup := byVersion[v]; dup {
			return nil, fmt.Errorf("store: two migrations numbered %d", v)
		}
		byVersion[v] = migration{version: v, name: rest, sql: string(b)}
	}
	list := make([]migration, 0, len(byVersion))
	for _, m := range byVersion {
		list = append(list, m)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].version < list[j].version })
	return list, nil
}

// goSteps are the parts of migrations that SQL cannot say, run after the
// step's SQL in its transaction.
var goSteps = map[int]func(context.Context, *Tx) error{
	330: backfillReportCounters,
	430: backfillCoverageCounters,
	490: packArchivedPayloads,
	600: packStoredIDs,
}

// MigrationsDigest returns a hash of dialect d's migrations, their numbers,
// names and SQL: it changes whenever one is added or edited. storetest keys
// its migrated template databases by it.
func MigrationsDigest(d Dialect) (string, error) {
	list, err := migrations(d)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, m := range list {
		fmt.Fprintf(h, "%d\x00%s\x00%d\x00%s\x00", m.version, m.name, len(m.sql), m.sql)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// LatestVersion is the schema version this binary knows.
func LatestVersion() int {
	list, err := migrations(SQLite)
	if err != nil || len(list) == 0 {
		return 0
	}
	return list[len(list)-1].version
}

// SchemaVersion returns the database's current schema version (0 when new).
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	if _, err := db.writer.ExecContext(ctx, `/* DB.SchemaVersion */ CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
		return 0, fmt.Errorf("store: schema_migrations: %w", unavailable(err))
	}
	var v int
	err := db.writer.QueryRowContext(ctx, `/* DB.SchemaVersion */ SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("store: schema version: %w", unavailable(err))
	}
	return v, nil
}

// Migrate applies every pending migration, each in its own transaction, and
// returns the versions applied. It refuses a database whose schema is newer
// than this binary: an older binary must not write to it. On PostgreSQL a
// session advisory lock lets several nodes start together safely.
func (db *DB) Migrate(ctx context.Context, now func() time.Time) ([]int, error) {
	return db.MigrateWith(ctx, MigrateOptions{Now: now})
}

// MigrateOptions tune MigrateWith.
type MigrateOptions struct {
	Now func() time.Time
	// Step, when set, hears each pending step before it starts: the n-th
	// of total (from 1) and its version. The server shows it while it
	// answers the intake during an upgrade.
	Step func(n, total, version int)
	// Hold, when set, runs inside each step's transaction after its work,
	// holding what the step holds: tests make a step as slow as a long
	// one with it. An error rolls the step back.
	Hold func(ctx context.Context, version int) error
	// Below, when set, stops before that version: the database is left
	// in the shape an older binary made (tests of upgrades start there).
	Below int
}

// MigrationsPending returns how many migrations this binary would apply to
// the database (0 when it is up to date, or newer).
func (db *DB) MigrationsPending(ctx context.Context) (int, error) {
	cur, err := db.SchemaVersion(ctx)
	if err != nil {
		return 0, err
	}
	list, err := migrations(db.dialect)
	if err != nil {
		return 0, err
	}
	return len(pendingMigrations(list, cur, 0)), nil
}

// pendingMigrations returns the migrations of list after version cur and,
// when below is set, before it.
func pendingMigrations(list []migration, cur, below int) []migration {
	var pending []migration
	for _, m := range list {
		if m.version > cur && (below == 0 || m.version < below) {
			pending = append(pending, m)
		}
	}
	return pending
}

// MigrateWith is Migrate with its options.
func (db *DB) MigrateWith(ctx context.Context, o MigrateOptions) ([]int, error) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	unlock, err := db.migrationLock(ctx)
	if err != nil {
		return nil, err
	}
	// After a migration the pool starts afresh (dropIdleConns), once the
	// lock's connection, which may have prepared statements before it, is
	// back in the pool.
	var migrated bool
	defer func() {
		unlock()
		if migrated {
			db.dropIdleConns()
		}
	}()
	cur, err := db.SchemaVersion(ctx)
	if err != nil {
		return nil, err
	}
	list, err := migrations(db.dialect)
	if err != nil {
		return nil, err
	}
	db.noteSchema(cur)
	if latest := list[len(list)-1].version; cur > latest {
		return nil, db.newerSchema(ctx, cur, latest)
	}
	pending := pendingMigrations(list, cur, o.Below)
	migrated = len(pending) > 0
	var applied []int
	for i, m := range pending {
		if o.Step != nil {
			o.Step(i+1, len(pending), m.version)
		}
		err := db.InTx(ctx, func(tx *Tx) error {
			if _, err := tx.w.ExecContext(ctx, m.sql); err != nil {
				return fmt.Errorf("store: migration %04d_%s: %w", m.version, m.name, err)
			}
			if step := goSteps[m.version]; step != nil {
				if err := step(ctx, tx); err != nil {
					return fmt.Errorf("store: migration %04d_%s: %w", m.version, m.name, err)
				}
			}
			if o.Hold != nil {
				if err := o.Hold(ctx, m.version); err != nil {
					return fmt.Errorf("store: migration %04d_%s: %w", m.version, m.name, err)
				}
			}
			if m.version < versionColumnSince {
				_, err := tx.exec(ctx, `/* DB.Migrate */ INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
					m.version, m.name, now().UnixMilli())
				return err
			}
			_, err := tx.exec(ctx, `/* DB.Migrate */ INSERT INTO schema_migrations (version, name, applied_at, binary_version) VALUES (?, ?, ?, ?)`,
				m.version, m.name, now().UnixMilli(), db.version)
			return err
		})
		if err != nil {
			return applied, err
		}
		applied = append(applied, m.version)
		db.noteSchema(m.version)
	}
	return applied, nil
}

// CheckSchema fails unless the database is at exactly this binary's version.
func (db *DB) CheckSchema(ctx context.Context) error {
	cur, err := db.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if latest := LatestVersion(); cur != latest {
		if cur > latest {
			return db.newerSchema(ctx, cur, latest)
		}
		return fmt.Errorf("store: the database schema is version %d, this binary needs %d: run cleanads migrate", cur, latest)
	}
	return nil
}

// versionColumnSince is the migration that gave schema_migrations its
// binary_version column: the rows of later migrations name the binary that
// applied them.
const versionColumnSince = 155

// NewerSchemaError is the refusal of a database whose schema is newer than
// the binary: Need is the version of cleanads that migrated it (empty when
// that binary did not record itself).
type NewerSchemaError struct {
	Schema, Known int
	Need          string
}

func (e *NewerSchemaError) Error() string {
	msg := fmt.Sprintf("store: the database schema is version %d, newer than this binary's %d, and an older binary must not write to it: ", e.Schema, e.Known)
	if e.Need == "" {
		return msg + "upgrade cleanads to the version that migrated it, or restore the backup taken before that upgrade"
	}
	return msg + fmt.Sprintf("it was migrated by cleanads %s; upgrade cleanads to %s or newer, or restore the backup taken before that upgrade", e.Need, e.Need)
}

// newerSchema builds the refusal, naming the binary that applied the
// newest migration when it recorded itself.
func (db *DB) newerSchema(ctx context.Context, cur, latest int) error {
	e := &NewerSchemaError{Schema: cur, Known: latest}
	// A database from before versionColumnSince has no such column; then
	// the error says what it can without it.
	_ = db.writer.QueryRowContext(ctx, db.rebind(`/* DB.newerSchema */ SELECT binary_version FROM schema_migrations WHERE version = ?`), cur).Scan(&e.Need)
	return e
}
