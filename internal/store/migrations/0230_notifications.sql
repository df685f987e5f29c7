-- Notifications ("know at once"): the owner hears of a new real lead, and
-- when asked of one waiting for evidence, by e-mail through their own SMTP
-- server and by a chat webhook. Times are Unix milliseconds.

-- The one SMTP server every notification mail goes through (row id 1); its
-- password is sealed with secret_key. tls: starttls, tls or none (none only
-- for a server on this machine).
CREATE TABLE notify_smtp (
    id         INTEGER PRIMARY KEY,
    host       TEXT NOT NULL,
    port       INTEGER NOT NULL,
    username   TEXT NOT NULL,
    password   TEXT NOT NULL,
    from_addr  TEXT NOT NULL,
    tls        TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- Where a user is told: channel 'email' (target: the address, in clear) or
-- 'chat' (target: the webhook URL, sealed, since it holds a token; kind:
-- slack, telegram or generic).
CREATE TABLE notify_channels (
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    channel    TEXT NOT NULL,
    kind       TEXT NOT NULL,
    target     TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, channel)
);

-- Which verdicts notify a user, per site (0/1 each), and whether the user
-- gets the site's daily digest by mail; no row: none.
CREATE TABLE notify_rules (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    site_id TEXT NOT NULL,
    clean   INTEGER NOT NULL,
    review  INTEGER NOT NULL,
    junk    INTEGER NOT NULL,
    digest  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, site_id)
);

-- The daily digests sent: one per user and day (YYYY-MM-DD in the admin's
-- time zone), so a restart or a second node never sends one twice.
CREATE TABLE notify_digests (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    day     TEXT NOT NULL,
    sent_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, day)
);
CREATE INDEX notify_rules_site ON notify_rules (site_id);

-- The notifications' outbox: one row per lead, verdict, user and channel,
-- queued in the transaction that gave the lead that verdict, so each is
-- sent once. state: pending (due at next_at), sent, dead (gave up after
-- its attempts; last_error says why) or dropped (the user removed the
-- channel before it went). It holds no lead data: the sender reads the
-- lead when it sends.
CREATE TABLE notifications (
    lead_id    TEXT NOT NULL,
    verdict    TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    channel    TEXT NOT NULL,
    site_id    TEXT NOT NULL,
    state      TEXT NOT NULL,
    attempts   INTEGER NOT NULL,
    next_at    BIGINT NOT NULL,
    last_error TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    sent_at    BIGINT,
    PRIMARY KEY (lead_id, verdict, user_id, channel)
);
CREATE INDEX notifications_due ON notifications (state, next_at);
CREATE INDEX notifications_created ON notifications (created_at);
