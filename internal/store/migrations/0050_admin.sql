-- The admin web UI: users with bcrypt password hashes, sessions (the token
-- is stored only as its SHA-256, with the per-session CSRF token), and login
-- attempts for the rate limit. Times are Unix milliseconds.

CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    email         TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    lang          TEXT NOT NULL DEFAULT '',
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);

CREATE TABLE sessions (
    token_hash TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    csrf       TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_expires ON sessions (expires_at);

CREATE TABLE login_attempts (
    id    TEXT PRIMARY KEY,
    at    BIGINT NOT NULL,
    ip    TEXT NOT NULL,
    email TEXT NOT NULL,
    ok    INTEGER NOT NULL
);
CREATE INDEX login_attempts_ip ON login_attempts (ip, at);
CREATE INDEX login_attempts_email ON login_attempts (email, at);

-- The inbox lists every site's leads newest first.
CREATE INDEX leads_received ON leads (received_at);
-- The deliveries page lists by state, newest first.
CREATE INDEX deliveries_state_created ON deliveries (state, created_at);
