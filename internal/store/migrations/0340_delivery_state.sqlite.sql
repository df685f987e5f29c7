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
-- On SQLite delivery_state is a WITHOUT ROWID table keyed by the id the
-- claim's index and the outcome's update find it by: one B-tree, not a
-- rowid table and its key's index. The wide table is rebuilt without the
-- changing columns (SQLite drops a column by rewriting the table each
-- time), in the same transaction as the copy.
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
) WITHOUT ROWID;
INSERT INTO delivery_state (id, site_id, destination, kind, created_at, deadline_at, state, attempts, next_at,
    lease_owner, lease_until, sent_at, updated_at, mode, last_error, response)
SELECT id, site_id, destination, kind, created_at, deadline_at, state, attempts, next_at,
    lease_owner, lease_until, sent_at, updated_at, mode, last_error, response FROM deliveries;
CREATE TABLE delivery_events (
    id          TEXT PRIMARY KEY,
    site_id     TEXT NOT NULL REFERENCES sites (id),
    destination TEXT NOT NULL,
    lead_id     TEXT NOT NULL DEFAULT '',
    event_name  TEXT NOT NULL,
    event_id    TEXT NOT NULL,
    pixel_id    TEXT NOT NULL,
    payload     TEXT NOT NULL,
    redacted_at BIGINT,
    UNIQUE (site_id, destination, event_name, event_id)
);
INSERT INTO delivery_events (id, site_id, destination, lead_id, event_name, event_id, pixel_id, payload, redacted_at)
SELECT id, site_id, destination, lead_id, event_name, event_id, pixel_id, payload, redacted_at FROM deliveries;
DROP TABLE deliveries;
CREATE INDEX delivery_events_lead ON delivery_events (lead_id) WHERE lead_id <> '';
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
