-- A finished event, once shrunk (migration 0390), kept two rows: its
-- delivery_events row (ids, payload) and its delivery_state row (state,
-- times, answer, with copies of the site, destination, kind and times its
-- indexes order by), in six B-trees on SQLite. Nothing changes it again
-- but an erasure (its payload) and retention. The shrink step now folds
-- the state's few columns into the event's row (the archived_* columns,
-- archived_at the time it was shrunk) and deletes the state row: one row
-- and four B-trees (its key, the event's unique key, the lead's index and
-- delivery_events_archived for the lists and counts). A sent event keeps
-- no answer (Meta's events_received and trace id: nothing reads them once
-- the event cannot be sent again). The event stays in delivery_events, so
-- its unique key still keeps it from being queued twice.
-- A page view's row (no lead) and a webhook post keep their two rows:
-- their readers (page-view retention, a site's newest posts) walk
-- delivery_state alone, and they are few.
-- The times first, then the count, then the texts: on PostgreSQL a BIGINT
-- after a text is padded to 8 bytes.
ALTER TABLE delivery_events ADD COLUMN archived_at BIGINT;
ALTER TABLE delivery_events ADD COLUMN archived_created_at BIGINT;
ALTER TABLE delivery_events ADD COLUMN archived_deadline_at BIGINT;
ALTER TABLE delivery_events ADD COLUMN archived_updated_at BIGINT;
ALTER TABLE delivery_events ADD COLUMN archived_sent_at BIGINT;
ALTER TABLE delivery_events ADD COLUMN archived_attempts INTEGER;
ALTER TABLE delivery_events ADD COLUMN archived_kind TEXT;
ALTER TABLE delivery_events ADD COLUMN archived_state TEXT;
ALTER TABLE delivery_events ADD COLUMN archived_mode TEXT;
ALTER TABLE delivery_events ADD COLUMN archived_error TEXT;
ALTER TABLE delivery_events ADD COLUMN archived_response TEXT;
UPDATE delivery_events SET archived_at = s.shrunk_at, archived_kind = s.kind, archived_state = s.state,
    archived_attempts = s.attempts, archived_created_at = s.created_at, archived_deadline_at = s.deadline_at,
    archived_updated_at = s.updated_at, archived_sent_at = s.sent_at, archived_mode = s.mode,
    archived_error = s.last_error, archived_response = CASE WHEN s.state = 'sent' THEN '' ELSE s.response END
    FROM delivery_state s
    WHERE s.id = delivery_events.id AND s.shrunk_at IS NOT NULL
        AND delivery_events.lead_id <> '' AND delivery_events.destination <> 'webhook';
DELETE FROM delivery_state WHERE id IN (SELECT id FROM delivery_events WHERE archived_at IS NOT NULL);
CREATE INDEX delivery_events_archived ON delivery_events (site_id, archived_state, archived_created_at, destination, archived_kind)
    WHERE archived_at IS NOT NULL;
DROP VIEW deliveries;
CREATE VIEW deliveries AS SELECT s.id, s.site_id, e.lead_id, s.kind, e.event_name, e.event_id, e.pixel_id, e.payload,
    s.state, s.attempts, s.next_at, s.deadline_at, s.lease_owner, s.lease_until, s.last_error, s.response, s.mode,
    s.created_at, s.updated_at, s.sent_at, e.redacted_at, s.destination, s.shrunk_at
    FROM delivery_state s JOIN delivery_events e ON e.id = s.id
UNION ALL SELECT id, site_id, lead_id, archived_kind, event_name, event_id, pixel_id, payload,
    archived_state, archived_attempts, archived_updated_at, archived_deadline_at, '', NULL, archived_error,
    archived_response, archived_mode, archived_created_at, archived_updated_at, archived_sent_at, redacted_at,
    destination, archived_at
    FROM delivery_events WHERE archived_at IS NOT NULL;
