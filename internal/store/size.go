package store

import (
	"context"
	"database/sql"
)

// TableSizes returns the bytes each table takes on disk with its indexes
// (and on PostgreSQL its TOAST), by table name: what the scale benchmark
// divides by the visits and leads stored. On SQLite it reads the dbstat
// table (pages in use, free pages left out); on PostgreSQL
// pg_total_relation_size of each table of the current schema.
func (q Q) TableSizes(ctx context.Context) (map[string]int64, error) {
	query := `/* Store.TableSizes */ SELECT m.tbl_name, SUM(d.pgsize) FROM dbstat d
		JOIN sqlite_master m ON m.name = d.name GROUP BY m.tbl_name`
	if q.dialect == Postgres {
		query = `/* Store.TableSizes */ SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND n.nspname = current_schema()`
	}
	sizes := map[string]int64{}
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		var name string
		var n int64
		if err := r.Scan(&name, &n); err != nil {
			return err
		}
		sizes[name] += n
		return nil
	}, query)
	return sizes, err
}

// Analyze refreshes PostgreSQL's planner statistics, as autovacuum does for
// a database in service (the scale benchmark calls it after a fill, which
// outruns autovacuum). SQLite's server never runs ANALYZE, so neither does
// this: its plans stay the ones a real server's are.
func (q Q) Analyze(ctx context.Context) error {
	if q.dialect != Postgres {
		return nil
	}
	_, err := q.exec(ctx, `/* Store.Analyze */ ANALYZE`)
	return err
}
