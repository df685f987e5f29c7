-- A lead's history is read only by its lead (the lead page, the API,
-- replay, the rules' first verdict, erasure), oldest first: (lead_id, at,
-- id). It was a rowid table with two more B-trees, the id's unique index
-- and (lead_id, at), three B-trees written for every entry (the intake
-- writes one with every lead: 222 bytes per lead at 10,000 leads, 132 of
-- them the two indexes). Now the table is its own index, keyed the way it
-- is read, WITHOUT ROWID: one B-tree. Entry ids stay unique as they are
-- made (time-ordered ids from one generator); an entry is updated (its
-- data, at erasure) by its lead and id. SQLite changes a table's key only
-- by rebuilding it; the trigger that keeps leads.changed_at (migration
-- 0270) goes with the old table and is made again as it was.
CREATE TABLE lead_history_lean (
    lead_id  TEXT NOT NULL REFERENCES leads (id) ON DELETE CASCADE,
    at       BIGINT NOT NULL,
    id       TEXT NOT NULL,
    kind     TEXT NOT NULL,
    data     TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (lead_id, at, id)
) WITHOUT ROWID;
INSERT INTO lead_history_lean (lead_id, at, id, kind, data) SELECT lead_id, at, id, kind, data FROM lead_history;
DROP TABLE lead_history;
ALTER TABLE lead_history_lean RENAME TO lead_history;
CREATE TRIGGER lead_history_changed AFTER INSERT ON lead_history
WHEN NEW.at > (SELECT COALESCE(changed_at, received_at) FROM leads WHERE id = NEW.lead_id)
BEGIN
  UPDATE leads SET changed_at = NEW.at WHERE id = NEW.lead_id;
END;
