-- PostgreSQL's counters of past days are folded into one row (see the
-- twin). SQLite has one writer and always writes one row (shard 0):
-- nothing changes.
SELECT 1;
