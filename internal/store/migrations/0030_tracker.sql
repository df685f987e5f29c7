-- The first-party tracker: visitors with their click identity, the visits
-- t.js collects, the form-token nonces already used (a token is accepted
-- once), and server keys generated once and shared by every node.

CREATE TABLE visitors (
    site_id         TEXT NOT NULL REFERENCES sites (id),
    id              TEXT NOT NULL,
    fbc             TEXT NOT NULL DEFAULT '',
    fbc_at          BIGINT,
    fbp             TEXT NOT NULL DEFAULT '',
    first_seen      BIGINT NOT NULL,
    last_seen       BIGINT NOT NULL,
    last_ip         TEXT NOT NULL DEFAULT '',
    last_user_agent TEXT NOT NULL DEFAULT '',
    consent         INTEGER,
    PRIMARY KEY (site_id, id)
);

CREATE TABLE visits (
    id           TEXT PRIMARY KEY,
    site_id      TEXT NOT NULL,
    visitor_id   TEXT NOT NULL,
    page_url     TEXT NOT NULL DEFAULT '',
    referrer     TEXT NOT NULL DEFAULT '',
    fbclid       TEXT NOT NULL DEFAULT '',
    gclid        TEXT NOT NULL DEFAULT '',
    wbraid       TEXT NOT NULL DEFAULT '',
    gbraid       TEXT NOT NULL DEFAULT '',
    ttclid       TEXT NOT NULL DEFAULT '',
    msclkid      TEXT NOT NULL DEFAULT '',
    utm_source   TEXT NOT NULL DEFAULT '',
    utm_medium   TEXT NOT NULL DEFAULT '',
    utm_campaign TEXT NOT NULL DEFAULT '',
    utm_term     TEXT NOT NULL DEFAULT '',
    utm_content  TEXT NOT NULL DEFAULT '',
    client_ip    TEXT NOT NULL DEFAULT '',
    user_agent   TEXT NOT NULL DEFAULT '',
    at           BIGINT NOT NULL,
    event_id     TEXT NOT NULL,
    FOREIGN KEY (site_id, visitor_id) REFERENCES visitors (site_id, id),
    UNIQUE (site_id, event_id)
);
CREATE INDEX visits_visitor ON visits (site_id, visitor_id, at);

CREATE TABLE form_token_uses (
    site_id TEXT NOT NULL,
    nonce   TEXT NOT NULL,
    lead_id TEXT NOT NULL,
    used_at BIGINT NOT NULL,
    PRIMARY KEY (site_id, nonce)
);

CREATE TABLE server_keys (
    name       TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
