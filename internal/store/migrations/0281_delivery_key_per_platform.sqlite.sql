-- An outbox row is one event of one platform: the same event (a lead's
-- "Lead" with the event_id the browser's pixels share) goes to Meta and
-- to TikTok as two rows. The key was (site_id, event_name, event_id),
-- which took the second for a repeat of the first; it is now per
-- destination. SQLite cannot drop a table's UNIQUE constraint, so the
-- table is rebuilt with the same columns and indexes.
CREATE TABLE deliveries_next (
    id          TEXT PRIMARY KEY,
    site_id     TEXT NOT NULL REFERENCES sites (id),
    lead_id     TEXT NOT NULL DEFAULT '',
    kind        TEXT NOT NULL,
    event_name  TEXT NOT NULL,
    event_id    TEXT NOT NULL,
    pixel_id    TEXT NOT NULL,
    payload     TEXT NOT NULL,
    state       TEXT NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 0,
    next_at     BIGINT NOT NULL,
    deadline_at BIGINT NOT NULL,
    lease_owner TEXT NOT NULL DEFAULT '',
    lease_until BIGINT,
    last_error  TEXT NOT NULL DEFAULT '',
    response    TEXT NOT NULL DEFAULT '',
    mode        TEXT NOT NULL DEFAULT '',
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    sent_at     BIGINT,
    redacted_at BIGINT,
    destination TEXT NOT NULL DEFAULT 'meta',
    UNIQUE (site_id, destination, event_name, event_id)
);
INSERT INTO deliveries_next (id, site_id, lead_id, kind, event_name, event_id, pixel_id, payload, state, attempts,
    next_at, deadline_at, lease_owner, lease_until, last_error, response, mode, created_at, updated_at, sent_at,
    redacted_at, destination)
SELECT id, site_id, lead_id, kind, event_name, event_id, pixel_id, payload, state, attempts,
    next_at, deadline_at, lease_owner, lease_until, last_error, response, mode, created_at, updated_at, sent_at,
    redacted_at, destination FROM deliveries;
DROP TABLE deliveries;
ALTER TABLE deliveries_next RENAME TO deliveries;
CREATE INDEX deliveries_state_created ON deliveries (state, created_at);
CREATE INDEX deliveries_lead ON deliveries (lead_id) WHERE lead_id <> '';
CREATE INDEX deliveries_site_state ON deliveries (site_id, state);
CREATE INDEX deliveries_created ON deliveries (created_at);
CREATE INDEX deliveries_leased ON deliveries (lease_until) WHERE lease_owner <> '';
CREATE INDEX deliveries_claimable ON deliveries (site_id, destination, deadline_at, id, next_at)
    WHERE state IN ('pending', 'retry') AND lease_owner = '';
CREATE INDEX deliveries_google_awaiting ON deliveries (sent_at)
    WHERE destination = 'google' AND state = 'sent';
