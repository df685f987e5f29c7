-- A CRM syncs with GET /v1/leads?changed_since=...: see the SQLite twin for
-- why leads.changed_at is kept by a trigger on lead_history.
ALTER TABLE leads ADD COLUMN changed_at BIGINT;
UPDATE leads SET changed_at = (SELECT MAX(h.at) FROM lead_history h WHERE h.lead_id = leads.id)
WHERE EXISTS (SELECT 1 FROM lead_history h WHERE h.lead_id = leads.id AND h.at > leads.received_at);
CREATE INDEX leads_site_changed ON leads (site_id, (COALESCE(changed_at, received_at)), id);
CREATE FUNCTION lead_history_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE leads SET changed_at = NEW.at WHERE id = NEW.lead_id AND COALESCE(changed_at, received_at) < NEW.at;
  RETURN NULL;
END
$$;
CREATE TRIGGER lead_history_changed AFTER INSERT ON lead_history
FOR EACH ROW EXECUTE PROCEDURE lead_history_changed();
