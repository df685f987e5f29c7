-- Google answers events:ingest at once and processes the request later;
-- requestStatus:retrieve says how it went. The rows whose answer is still
-- awaited are a few among every Google row ever sent: this index keeps the
-- follow-up's scan to the recent ones.
CREATE INDEX deliveries_google_awaiting ON deliveries (sent_at)
    WHERE destination = 'google' AND state = 'sent';
