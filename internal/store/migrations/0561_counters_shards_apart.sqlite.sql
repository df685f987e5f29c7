-- PostgreSQL's counters key puts the shard before the name (see the twin).
-- SQLite writes shard 0 only: its key stays as it is.
SELECT 1;
