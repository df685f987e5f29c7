-- PostgreSQL's visits_at becomes a BRIN index (see its twin); SQLite has
-- no such index kind and keeps its B-tree, which costs it less (its rows
-- are not padded as PostgreSQL's index tuples are).
SELECT 1;
