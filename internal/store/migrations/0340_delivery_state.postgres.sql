-- The outbox in two tables. A claim (the lease) and an outcome (state,
-- attempts, next time, Meta's answer) rewrote the whole deliveries row,
-- payload included, and on PostgreSQL an entry in each of its nine indexes.
-- The changing columns are now in delivery_state, a narrow row (with
-- copies of the few fixed columns its indexes order by: site, destination,
-- kind, created and deadline times) and the indexes the claim, the counts
-- and the admin lists read; delivery_events keeps the payload and the
-- event's fixed columns, written once at intake (and again only when
-- retention or an erasure redacts the payload), with its key, the event's
-- unique key and the lead's index. The view deliveries joins the two for
-- the readers that want a whole row.
-- On PostgreSQL the wide table keeps its name's storage: it is renamed,
-- loses the indexes that move, and drops the changing columns (a change of
-- the catalogue alone; their old bytes go as rows are rewritten or
-- vacuumed full).
CREATE TABLE delivery_state (
    id          TEXT PRIMARY KEY,
    site_id     TEXT NOT NULL,
    destination TEXT NOT NULL,
    kind        TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    deadline_at BIGINT NOT NULL,
    state       TEXT NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 0,
    next_at     BIGINT NOT NULL,
    lease_owner TEXT NOT NULL DEFAULT '',
    lease_until BIGINT,
    sent_at     BIGINT,
    updated_at  BIGINT NOT NULL,
    mode        TEXT NOT NULL DEFAULT '',
    last_error  TEXT NOT NULL DEFAULT '',
    response    TEXT NOT NULL DEFAULT ''
);
INSERT INTO delivery_state (id, site_id, destination, kind, created_at, deadline_at, state, attempts, next_at,
    lease_owner, lease_until, sent_at, updated_at, mode, last_error, response)
SELECT id, site_id, destination, kind, created_at, deadline_at, state, attempts, next_at,
    lease_owner, lease_until, sent_at, updated_at, mode, last_error, response FROM deliveries;
ALTER TABLE deliveries RENAME TO delivery_events;
DROP INDEX deliveries_state_created;
DROP INDEX deliveries_site_state_created;
DROP INDEX deliveries_created;
DROP INDEX deliveries_leased;
DROP INDEX deliveries_claimable;
DROP INDEX deliveries_google_awaiting;
ALTER INDEX deliveries_lead RENAME TO delivery_events_lead;
ALTER INDEX deliveries_event RENAME TO delivery_events_event;
ALTER TABLE delivery_events DROP COLUMN kind, DROP COLUMN state, DROP COLUMN attempts, DROP COLUMN next_at,
    DROP COLUMN deadline_at, DROP COLUMN lease_owner, DROP COLUMN lease_until, DROP COLUMN last_error,
    DROP COLUMN response, DROP COLUMN mode, DROP COLUMN created_at, DROP COLUMN updated_at, DROP COLUMN sent_at;
CREATE INDEX delivery_state_claimable ON delivery_state (site_id, destination, deadline_at, id, next_at)
    WHERE state IN ('pending', 'retry') AND lease_owner = '';
CREATE INDEX delivery_state_leased ON delivery_state (lease_until) WHERE lease_owner <> '';
CREATE INDEX delivery_state_site_state_created ON delivery_state (site_id, state, created_at, destination, kind);
CREATE INDEX delivery_state_state_created ON delivery_state (state, created_at);
CREATE INDEX delivery_state_created ON delivery_state (created_at);
CREATE INDEX delivery_state_google_awaiting ON delivery_state (sent_at)
    WHERE destination = 'google' AND state = 'sent';
CREATE VIEW deliveries AS SELECT s.id, s.site_id, e.lead_id, s.kind, e.event_name, e.event_id, e.pixel_id, e.payload,
    s.state, s.attempts, s.next_at, s.deadline_at, s.lease_owner, s.lease_until, s.last_error, s.response, s.mode,
    s.created_at, s.updated_at, s.sent_at, e.redacted_at, s.destination
    FROM delivery_state s JOIN delivery_events e ON e.id = s.id;
