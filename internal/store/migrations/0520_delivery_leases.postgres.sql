-- The lease of an outbox event moves to a narrow table of its own. The
-- claim set lease_owner and lease_until on the delivery_state row and the
-- outcome cleared them with the state: two updates an event, neither HOT
-- (both columns were in the claim's, the leased and the next-due indexes'
-- keys or predicates), so each wrote a new version of the row and entries
-- in its key, delivery_state_site_state_created and delivery_state_unshrunk
-- (seven index entries an event with the leased index's). Now the claim
-- inserts a row of a few bytes in delivery_leases (its key and the expiry
-- index) and locks the state row without writing it; the outcome deletes
-- the lease and updates the state row once. An event is claimable when it
-- is due (delivery_state_claimable, delivery_state_due: no lease in their
-- predicates any more) and has no lease row; a claim gives expired leases
-- back first, as before, by deleting them (through delivery_leases_until).
-- The table is logged like the rest: a lease taken before a crash is still
-- there after it and runs out at its time, so no event is sent by two nodes
-- at once, and one whose outcome was recorded is never claimed again.
CREATE TABLE delivery_leases (
    id    TEXT PRIMARY KEY,
    until BIGINT NOT NULL,
    owner TEXT NOT NULL
);
CREATE INDEX delivery_leases_until ON delivery_leases (until);
INSERT INTO delivery_leases (id, until, owner)
    SELECT id, COALESCE(lease_until, 0), lease_owner FROM delivery_state WHERE lease_owner <> '';
DROP VIEW deliveries;
DROP INDEX delivery_state_claimable;
DROP INDEX delivery_state_leased;
DROP INDEX delivery_state_due;
ALTER TABLE delivery_state DROP COLUMN lease_owner, DROP COLUMN lease_until;
CREATE INDEX delivery_state_claimable ON delivery_state (site_id, destination, deadline_at, id, next_at)
    WHERE state IN ('pending', 'retry');
CREATE INDEX delivery_state_due ON delivery_state (next_at) WHERE state IN ('pending', 'retry');
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
