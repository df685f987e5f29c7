-- Deterministic: times come as arguments, Unix milliseconds.
CREATE TABLE notes2 (id TEXT PRIMARY KEY, created_at BIGINT NOT NULL);
