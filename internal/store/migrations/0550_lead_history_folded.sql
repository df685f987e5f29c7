-- A lead's intake entry, the verdict the rules gave it, is most often its
-- own verdict, score and who decided at the time it was received: a row
-- and an index entry a lead (on PostgreSQL a heap tuple and a key of 70
-- bytes) that say what the lead's columns say. It is now folded into the
-- lead (store/history.go): not stored while the lead's decision is the one
-- it got at intake, read from the lead's columns, stored again before
-- anything changes them or adds a later entry. Here the folded ones go:
-- the entry that is its lead's only one, a verdict entry at the lead's
-- reception whose data is exactly its verdict, score and who decided, as
-- Go's encoder wrote them. It reads the same afterwards, but for its id,
-- which the lead's id now gives (h_ and the lead's id's time and random
-- part). Any other entry stays as it is.
DELETE FROM lead_history
WHERE kind = 'verdict'
  AND EXISTS (SELECT 1 FROM leads l WHERE l.id = lead_history.lead_id AND l.received_at = lead_history.at
      AND lead_history.data = '{"decided_by":"' || l.decided_by || '","score":' || CAST(l.score AS TEXT) || ',"verdict":"' || l.verdict || '"}')
  AND NOT EXISTS (SELECT 1 FROM lead_history o WHERE o.lead_id = lead_history.lead_id
      AND (o.at <> lead_history.at OR o.id <> lead_history.id));
