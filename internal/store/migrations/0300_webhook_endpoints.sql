-- A site's outgoing webhooks (docs/webhooks.md): the URLs its owner set in
-- the admin UI, the events each receives (comma-separated), and the secret
-- that signs each post, sealed with secret_key and bound to the endpoint as
-- site secrets are. Their posts are outbox rows of destination 'webhook'
-- whose pixel_id is the endpoint's id. They go with their site.
CREATE TABLE webhook_endpoints (
    id         TEXT PRIMARY KEY,
    site_id    TEXT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    url        TEXT NOT NULL,
    events     TEXT NOT NULL,
    sealed     TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX webhook_endpoints_site ON webhook_endpoints (site_id, created_at);
