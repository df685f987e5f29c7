-- The lease of an outbox event moves to a narrow table of its own (see the
-- PostgreSQL twin: there the two updates of an event's state row were what
-- held the drain). On SQLite the claim's update of the state row rewrote
-- its entries in delivery_state_claimable and delivery_state_leased; it now
-- inserts a small row in delivery_leases instead, and the outcome deletes
-- it with the state row's one update. Same schema on both engines, so the
-- store has one claim. delivery_state is rebuilt without the two columns
-- (SQLite rewrites the table for each column dropped).
CREATE TABLE delivery_leases (
    id    TEXT PRIMARY KEY,
    until BIGINT NOT NULL,
    owner TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX delivery_leases_until ON delivery_leases (until);
INSERT INTO delivery_leases (id, until, owner)
    SELECT id, COALESCE(lease_until, 0), lease_owner FROM delivery_state WHERE lease_owner <> '';
DROP VIEW deliveries;
DROP INDEX delivery_state_claimable;
DROP INDEX delivery_state_leased;
ALTER TABLE delivery_state DROP COLUMN lease_owner;
ALTER TABLE delivery_state DROP COLUMN lease_until;
CREATE INDEX delivery_state_claimable ON delivery_state (site_id, destination, deadline_at, id, next_at)
    WHERE state IN ('pending', 'retry');
-- The view loses the lease's columns (nothing read them from it).
CREATE VIEW deliveries AS SELECT s.id, s.site_id, e.lead_id, s.kind, e.event_name, e.event_id, e.pixel_id, e.payload,
    s.state, s.attempts, s.next_at, s.deadline_at, s.last_error,
    s.response, s.mode, s.created_at, s.updated_at, s.sent_at, e.redacted_at, s.destination, s.shrunk_at
    FROM delivery_state s JOIN delivery_events e ON e.id = s.id
UNION ALL SELECT id, site_id, lead_id, archived_kind, event_name, event_id, pixel_id, payload,
    archived_state, archived_attempts, archived_updated_at, archived_deadline_at, archived_error,
    archived_response, archived_mode, archived_created_at, archived_updated_at, archived_sent_at, redacted_at,
    destination, archived_at
    FROM delivery_events WHERE archived_at IS NOT NULL;
