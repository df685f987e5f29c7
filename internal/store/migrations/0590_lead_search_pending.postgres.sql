-- SQLite's search index written once a transaction (see the SQLite twin);
-- PostgreSQL's GIN index keeps its own pending list: nothing to do here.
SELECT 1;
