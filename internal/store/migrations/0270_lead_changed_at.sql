-- A CRM syncs with GET /v1/leads?changed_since=...: the leads of a site
-- changed since a time, paged by (time of the change, id). A lead changes
-- when anything is written to its history (a new verdict, the owner's
-- word, evidence, a stage, a later attempt of an open lead), so
-- store.HistoryInsert moves changed_at forward with the entry's time.
-- NULL means unchanged since it was received: intake writes no second
-- time, and the index reads the received time in its place.
ALTER TABLE leads ADD COLUMN changed_at BIGINT;
UPDATE leads SET changed_at = (SELECT MAX(h.at) FROM lead_history h WHERE h.lead_id = leads.id)
WHERE EXISTS (SELECT 1 FROM lead_history h WHERE h.lead_id = leads.id AND h.at > leads.received_at);
CREATE INDEX leads_site_changed ON leads (site_id, (COALESCE(changed_at, received_at)), id);
