package store

import "context"

// TestExec runs a raw statement; tests use it to set up odd states.
func (q Q) TestExec(ctx context.Context, query string, args ...any) error {
	_, err := q.exec(ctx, query, args...)
	return err
}

// TestMaxConns returns the size of the writer pool.
func (db *DB) TestMaxConns() int { return db.writer.Stats().MaxOpenConnections }

// MigrationVersionsForTest lists the versions of the embedded migrations.
func MigrationVersionsForTest() []int {
	list, _ := migrations(SQLite)
	var vs []int
	for _, m := range list {
		vs = append(vs, m.version)
	}
	return vs
}

// GroupStats reports how many batches the group committer ran and how
// many calls were queued to it.
func (db *DB) GroupStats() (batches, queued int64) {
	return db.group.batches.Load(), db.group.queued.Load()
}

// TestQueryString reads one text value with a raw statement; tests use it to
// see what is really stored.
func (q Q) TestQueryString(ctx context.Context, query string, args ...any) (string, error) {
	var s string
	err := q.w.QueryRowContext(ctx, q.rebind(query), args...).Scan(&s)
	return s, err
}
