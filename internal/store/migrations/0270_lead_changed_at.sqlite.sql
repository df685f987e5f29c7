-- A CRM syncs with GET /v1/leads?changed_since=...: the leads of a site
-- changed since a time, paged by (time of the change, id). A lead changes
-- when anything is written to its history (a new verdict, the owner's
-- word, evidence, a stage, a later attempt of an open lead), so a trigger
-- moves leads.changed_at forward to each history entry's time, only
-- forward (an entry dated in the past never hides a later change). NULL
-- means unchanged since it was received, which the index reads as the
-- received time. A trigger, not a second statement in HistoryInsert: the
-- intake writes a history entry with every lead, and a second statement
-- through the writer showed in BenchmarkIntakeSubmit (wall time per lead up
-- by a third on a busy 2-core machine) where the trigger, whose look-up runs
-- inside the insert, stayed within the noise. Twins: PostgreSQL's trigger
-- is a function.
ALTER TABLE leads ADD COLUMN changed_at BIGINT;
UPDATE leads SET changed_at = (SELECT MAX(h.at) FROM lead_history h WHERE h.lead_id = leads.id)
WHERE EXISTS (SELECT 1 FROM lead_history h WHERE h.lead_id = leads.id AND h.at > leads.received_at);
CREATE INDEX leads_site_changed ON leads (site_id, (COALESCE(changed_at, received_at)), id);
CREATE TRIGGER lead_history_changed AFTER INSERT ON lead_history
WHEN NEW.at > (SELECT COALESCE(changed_at, received_at) FROM leads WHERE id = NEW.lead_id)
BEGIN
  UPDATE leads SET changed_at = NEW.at WHERE id = NEW.lead_id;
END;
