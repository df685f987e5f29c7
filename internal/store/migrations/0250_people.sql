-- People in the admin UI: a role (admin manages people; member does not),
-- an optional limit to some sites (all_sites = 0 and rows in user_sites),
-- the last login, and one-time password links kept only as the SHA-256 of
-- their token. Users already present stay admins of every site.

ALTER TABLE users ADD COLUMN role TEXT NOT NULL DEFAULT 'admin';
ALTER TABLE users ADD COLUMN all_sites INTEGER NOT NULL DEFAULT 1;
ALTER TABLE users ADD COLUMN last_login_at BIGINT NOT NULL DEFAULT 0;

CREATE TABLE user_sites (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    site_id TEXT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, site_id)
);

CREATE TABLE password_links (
    token_hash TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX password_links_user ON password_links (user_id);
