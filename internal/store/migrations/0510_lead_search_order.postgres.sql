-- SQLite's bound on the received times below each rowid, which its search
-- reads its index's candidates by (see the SQLite twin); PostgreSQL's
-- search needs no such table: nothing to do here.
SELECT 1;
