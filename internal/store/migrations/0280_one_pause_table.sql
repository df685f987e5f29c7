-- Meta's pause moves to destination_pauses, where every other platform's
-- already is: one table says which platform of which site waits for its
-- owner. sites.paused_reason and paused_at stay, unused, for a rollback.
INSERT INTO destination_pauses (site_id, destination, reason, paused_at)
SELECT id, 'meta', paused_reason, COALESCE(paused_at, updated_at) FROM sites WHERE paused_reason <> ''
ON CONFLICT (site_id, destination) DO NOTHING;
UPDATE sites SET paused_reason = '', paused_at = NULL WHERE paused_reason <> '';
