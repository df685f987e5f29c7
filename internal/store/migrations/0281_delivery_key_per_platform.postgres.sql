-- An outbox row is one event of one platform: the same event (a lead's
-- "Lead" with the event_id the browser's pixels share) goes to Meta and
-- to TikTok as two rows. The key was (site_id, event_name, event_id),
-- which took the second for a repeat of the first; it is now per
-- destination.
CREATE UNIQUE INDEX deliveries_event ON deliveries (site_id, destination, event_name, event_id);
ALTER TABLE deliveries DROP CONSTRAINT deliveries_site_id_event_name_event_id_key;
