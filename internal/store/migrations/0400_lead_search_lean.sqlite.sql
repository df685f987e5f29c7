-- The search index without the trigrams' positions: 142 bytes a lead
-- where it was 550 (10,000 leads of cmd/cleanads-scale). lead_search keeps
-- for each trigram only the leads that have it (detail = none), which is
-- enough to find the leads having every trigram of a term, a superset of
-- those containing it; the store checks each such lead's own text for the
-- term (search_has, see leadSearch), so the search finds what it found
-- before.
-- The rest is as in migration 0260: contentless, deleting for good,
-- rowids the leads' rowids, kept by the same triggers (recreated with the
-- table they write).
DROP TRIGGER leads_search_insert;
DROP TRIGGER leads_search_update;
DROP TRIGGER leads_search_delete;
DROP TABLE lead_search;
CREATE VIRTUAL TABLE lead_search USING fts5(who, message, content = '', contentless_delete = 1, detail = none, tokenize = 'trigram');
INSERT INTO lead_search (lead_search, rank) VALUES ('secure-delete', 1);
CREATE TRIGGER leads_search_insert AFTER INSERT ON leads BEGIN
    INSERT INTO lead_search (rowid, who, message) VALUES (new.rowid,
        new.name || ' ' || new.first_name || ' ' || new.last_name || ' ' || new.email || ' ' || new.phone || ' ' || new.phone_key,
        new.message);
END;
CREATE TRIGGER leads_search_update AFTER UPDATE OF name, first_name, last_name, email, phone, phone_key, message ON leads BEGIN
    DELETE FROM lead_search WHERE rowid = old.rowid;
    INSERT INTO lead_search (rowid, who, message) VALUES (new.rowid,
        new.name || ' ' || new.first_name || ' ' || new.last_name || ' ' || new.email || ' ' || new.phone || ' ' || new.phone_key,
        new.message);
END;
CREATE TRIGGER leads_search_delete AFTER DELETE ON leads BEGIN
    DELETE FROM lead_search WHERE rowid = old.rowid;
END;
INSERT INTO lead_search (rowid, who, message)
SELECT rowid, name || ' ' || first_name || ' ' || last_name || ' ' || email || ' ' || phone || ' ' || phone_key, message FROM leads;
-- One segment, as a fresh fill's automerge would leave in time.
INSERT INTO lead_search (lead_search) VALUES ('optimize');
