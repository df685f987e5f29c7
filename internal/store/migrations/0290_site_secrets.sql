-- A site's ad platform secrets (a TikTok access token, a Google OAuth
-- client's refresh token, a service account key), set in the admin UI,
-- one row per secret by name ("tiktok.access_token"). The value is
-- sealed with secret_key, bound to its site and name as a site's Meta
-- token is: the table never holds a clear secret, and a value copied to
-- another row does not open. They go with their site.
CREATE TABLE site_secrets (
    site_id    TEXT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    sealed     TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (site_id, name)
);
