-- SQLite's counters become a WITHOUT ROWID table (see the twin).
-- PostgreSQL keeps every table apart from its indexes: nothing changes.
SELECT 1;
