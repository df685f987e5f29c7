package store

import "context"

// TestLeadsClickToClearPlan returns SQLite's plan for LeadsClickToClear.
func (db *DB) TestLeadsClickToClearPlan(ctx context.Context) (string, error) {
	return db.plan(ctx, leadsClickToClearQuery, int64(0), 10)
}
