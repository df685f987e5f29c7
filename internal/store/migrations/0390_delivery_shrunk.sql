-- A finished event keeps its whole payload only while it can still be sent,
-- replayed or corrected: past retention.event_days and its deadline, the
-- retention job shrinks it to what the owner's view needs (its platform's
-- Shrink: name, time, value, the names of its match keys) and marks the row
-- with the time (shrunk_at). The partial index holds the rows not shrunk
-- yet, oldest first, so that a run reads only those, never the rows it
-- shrank before; a row leaves it when shrunk.
ALTER TABLE delivery_state ADD COLUMN shrunk_at BIGINT;
CREATE INDEX delivery_state_unshrunk ON delivery_state (created_at, id) WHERE shrunk_at IS NULL;
DROP VIEW deliveries;
CREATE VIEW deliveries AS SELECT s.id, s.site_id, e.lead_id, s.kind, e.event_name, e.event_id, e.pixel_id, e.payload,
    s.state, s.attempts, s.next_at, s.deadline_at, s.lease_owner, s.lease_until, s.last_error, s.response, s.mode,
    s.created_at, s.updated_at, s.sent_at, e.redacted_at, s.destination, s.shrunk_at
    FROM delivery_state s JOIN delivery_events e ON e.id = s.id;
