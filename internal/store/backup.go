package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
)

// ErrBackupPostgres says the database is PostgreSQL, which has its own
// tools for consistent copies.
var ErrBackupPostgres = errors.New("store: the database is PostgreSQL: back it up with pg_dump (e.g. pg_dump -Fc -f cleanads.dump \"$DATABASE_URL\")")

// Backup writes a consistent copy of the SQLite database to path with
// VACUUM INTO, while the server keeps running: the copy is one read
// transaction's snapshot (WAL lets writers go on meanwhile), compacted, and
// opens as an ordinary database. It refuses an existing file.
func (db *DB) Backup(ctx context.Context, path string) error {
	if db.dialect != SQLite {
		return ErrBackupPostgres
	}
	if path == "" {
		return errors.New("store: backup: name the file to write")
	}
	if strings.ContainsRune(path, 0) {
		return errors.New("store: backup: bad file name")
	}
	// Made empty first, owner-only: the copy holds contact details and
	// sealed tokens, and VACUUM INTO fills an empty file as it is.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("store: backup: %s exists; choose a new file", path)
	}
	if err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	f.Close()
	// A connection of its own: the reader pool is query_only and the
	// writer must stay free for intake while the copy is made.
	var file string
	if err := db.reader.QueryRowContext(ctx, `/* DB.Backup */ SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&file); err != nil {
		os.Remove(path)
		return fmt.Errorf("store: backup: %w", err)
	}
	c, err := sql.Open("sqlite", "file:"+file+"?_pragma=busy_timeout(10000)")
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("store: backup: %w", err)
	}
	defer c.Close()
	c.SetMaxOpenConns(1)
	if _, err := c.ExecContext(ctx, `/* DB.Backup */ VACUUM INTO ?`, path); err != nil {
		os.Remove(path)
		return fmt.Errorf("store: backup to %s: %w", path, err)
	}
	return nil
}
