package store

import (
	"context"
	"errors"
)

// openPostgres is filled in by the PostgreSQL work.
func openPostgres(ctx context.Context, dsn string, opt Options) (*DB, error) {
	return nil, errors.New("store: PostgreSQL is not supported yet")
}

// migrationLock serialises migrations across nodes; SQLite has one writer
// and needs no lock.
func (db *DB) migrationLock(ctx context.Context) (func(), error) {
	return func() {}, nil
}
