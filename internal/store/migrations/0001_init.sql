-- The spine: sites, leads with their decision and history, and the outbox of
-- events for Meta. Times are Unix milliseconds (BIGINT) in both engines.

CREATE TABLE sites (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    api_key_hash  TEXT NOT NULL DEFAULT '',
    pinned        INTEGER NOT NULL DEFAULT 0,
    settings      TEXT NOT NULL DEFAULT '{}',
    access_token  TEXT NOT NULL DEFAULT '',
    paused_reason TEXT NOT NULL DEFAULT '',
    paused_at     BIGINT,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);

CREATE TABLE leads (
    id            TEXT PRIMARY KEY,
    site_id       TEXT NOT NULL REFERENCES sites (id),
    event_id      TEXT NOT NULL,
    visitor_id    TEXT NOT NULL DEFAULT '',
    email         TEXT NOT NULL DEFAULT '',
    phone         TEXT NOT NULL DEFAULT '',
    name          TEXT NOT NULL DEFAULT '',
    first_name    TEXT NOT NULL DEFAULT '',
    last_name     TEXT NOT NULL DEFAULT '',
    message       TEXT NOT NULL DEFAULT '',
    fields        TEXT NOT NULL DEFAULT '{}',
    page_url      TEXT NOT NULL DEFAULT '',
    referrer      TEXT NOT NULL DEFAULT '',
    fbc           TEXT NOT NULL DEFAULT '',
    fbp           TEXT NOT NULL DEFAULT '',
    fbclid        TEXT NOT NULL DEFAULT '',
    gclid         TEXT NOT NULL DEFAULT '',
    external_id   TEXT NOT NULL DEFAULT '',
    lead_ads_id   TEXT NOT NULL DEFAULT '',
    consent       INTEGER,
    fill_ms       BIGINT,
    honeypot      TEXT NOT NULL DEFAULT '',
    client_ip     TEXT NOT NULL DEFAULT '',
    user_agent    TEXT NOT NULL DEFAULT '',
    email_key     TEXT NOT NULL DEFAULT '',
    phone_key     TEXT NOT NULL DEFAULT '',
    submitted_at  BIGINT NOT NULL,
    received_at   BIGINT NOT NULL,
    verdict       TEXT NOT NULL,
    score         INTEGER NOT NULL DEFAULT 0,
    reasons       TEXT NOT NULL DEFAULT '[]',
    rules_version TEXT NOT NULL DEFAULT '',
    decided_by    TEXT NOT NULL DEFAULT '',
    review_until  BIGINT,
    UNIQUE (site_id, event_id)
);
CREATE INDEX leads_site_received ON leads (site_id, received_at);
CREATE INDEX leads_email_key ON leads (site_id, email_key);
CREATE INDEX leads_phone_key ON leads (site_id, phone_key);
CREATE INDEX leads_external_id ON leads (site_id, external_id);
CREATE INDEX leads_review_until ON leads (verdict, review_until);

CREATE TABLE lead_history (
    id       TEXT PRIMARY KEY,
    lead_id  TEXT NOT NULL REFERENCES leads (id) ON DELETE CASCADE,
    at       BIGINT NOT NULL,
    kind     TEXT NOT NULL,
    data     TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX lead_history_lead ON lead_history (lead_id, at);

CREATE TABLE deliveries (
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
    UNIQUE (site_id, event_name, event_id)
);
CREATE INDEX deliveries_due ON deliveries (state, next_at);
CREATE INDEX deliveries_lead ON deliveries (lead_id);
