-- PostgreSQL's search index keyed by the lead's day too (see the
-- PostgreSQL twin); SQLite's search walks its FTS5 index newest rowid
-- first with lead_search_order's bound (0510): nothing to do here.
SELECT 1;
