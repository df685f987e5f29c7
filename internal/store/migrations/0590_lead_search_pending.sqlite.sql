-- The search index written once a transaction, not once a lead. FTS5 keeps
-- the rows a transaction adds in memory and writes them as one segment at
-- its commit, but it writes what it holds at every savepoint, and SQLite
-- opens one (a statement journal) for each later statement of the
-- transaction that may fail half-way: the lead's history entry, its
-- events, its counters. So each lead of a group commit (about 120 to a
-- transaction under load) became a segment of its own, which automerge
-- then merged: a fifth of the CPU of a lead's intake.
-- The triggers now note the leads to index in lead_search_pending, a plain
-- table, and the store indexes them all in one statement just before each
-- of its write transactions commits (leadSearchFlush), so lead_search is
-- written once, last, in the transaction that stores the leads: a search
-- finds a lead as soon as its intake is committed, as before, and a
-- rolled-back transaction leaves neither a pending row nor an index entry.
-- Each such statement is followed by a request for some of FTS5's merge
-- work, which its automerge did before for the many small segments.
-- A lead's old text still leaves the index at its update or delete, in the
-- statement that makes it (an update is rare: an attempt replaced, an
-- erasure); deleting a rowid the index does not hold (a lead stored in
-- the same transaction) changes nothing. The index as it is keeps every
-- lead already stored; nothing is pending.
CREATE TABLE lead_search_pending (
    rowid INTEGER PRIMARY KEY
);
DROP TRIGGER leads_search_insert;
DROP TRIGGER leads_search_update;
DROP TRIGGER leads_search_delete;
CREATE TRIGGER leads_search_insert AFTER INSERT ON leads BEGIN
    INSERT OR IGNORE INTO lead_search_pending (rowid) VALUES (new.rowid);
END;
CREATE TRIGGER leads_search_update AFTER UPDATE OF name, first_name, last_name, email, phone, phone_key, message ON leads BEGIN
    DELETE FROM lead_search WHERE rowid = old.rowid;
    DELETE FROM lead_search_pending WHERE rowid = old.rowid;
    INSERT OR IGNORE INTO lead_search_pending (rowid) VALUES (new.rowid);
END;
CREATE TRIGGER leads_search_delete AFTER DELETE ON leads BEGIN
    DELETE FROM lead_search WHERE rowid = old.rowid;
    DELETE FROM lead_search_pending WHERE rowid = old.rowid;
END;
