-- An archived event (migration 0470: a finished event of a lead, shrunk)
-- kept its redaction time beside its archived time, the same instant
-- unless the event was erased before it was archived: 6 bytes a row on
-- SQLite, 8 on PostgreSQL, for most events. Now an archived row keeps
-- redacted_at only when it differs (an erasure's, before or after), and
-- the view reads an archived row's as COALESCE(redacted_at, archived_at),
-- which is what it read before. Nothing else reads an archived row's
-- redacted_at (retention's redaction walks the rows not shrunk).
UPDATE delivery_events SET redacted_at = NULL WHERE archived_at IS NOT NULL AND redacted_at = archived_at;
DROP VIEW deliveries;
CREATE VIEW deliveries AS SELECT s.id, s.site_id, e.lead_id, s.kind, e.event_name, e.event_id, e.pixel_id, e.payload,
    s.state, s.attempts, s.next_at, s.deadline_at, s.last_error,
    s.response, s.mode, s.created_at, s.updated_at, s.sent_at, e.redacted_at, s.destination, s.shrunk_at
    FROM delivery_state s JOIN delivery_events e ON e.id = s.id
UNION ALL SELECT id, site_id, lead_id, archived_kind, event_name, event_id, pixel_id, payload,
    archived_state, archived_attempts, archived_updated_at, archived_deadline_at, archived_error,
    archived_response, archived_mode, archived_created_at, archived_updated_at, archived_sent_at,
    COALESCE(redacted_at, archived_at), destination, archived_at
    FROM delivery_events WHERE archived_at IS NOT NULL;
