-- The inbox's search by name, e-mail, phone and message words through an
-- index, not a LIKE scan of every lead (257 ms for a search that matched
-- nothing at 100,000 leads, growing with each lead). lead_search is an
-- FTS5 table of trigrams, so any part of three characters or more of a
-- name, an e-mail, a phone (as written, and its digits with the country
-- code) or the message matches, as the LIKE did, ignoring case. It is
-- contentless (it keeps no copy of the text) and deletes for good
-- (secure-delete): a lead erased or deleted leaves nothing of its text in
-- the index. Its rowid is the lead's rowid; triggers keep it in the same
-- transaction as the lead's own write (intake, an attempt replaced, an
-- erasure, retention). VACUUM INTO (the backup) keeps rowids.
CREATE VIRTUAL TABLE lead_search USING fts5(who, message, content = '', contentless_delete = 1, tokenize = 'trigram');
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
-- The leads already there, once.
INSERT INTO lead_search (rowid, who, message)
SELECT rowid, name || ' ' || first_name || ' ' || last_name || ' ' || email || ' ' || phone || ' ' || phone_key, message FROM leads;
