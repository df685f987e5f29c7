-- A PageView is sent once and nobody looks at it again, yet as an outbox
-- row it cost a collect about 40% of its CPU: a row in deliveries and its
-- seven B-trees at intake, then two rewrites (the claim's lease, the
-- outcome). PageViews now wait in pageview_queue, one small table in the
-- order they came (event ids are time-first), and are deleted once Meta took
-- them; any other outcome moves the event into deliveries, where retries,
-- pauses, dead letters and expiry already work. A site's queue is leased
-- as a whole (pageview_leases) until the outcome of the last PageView
-- claimed is recorded, so one node at a time sends it; the sent
-- ones are counted per site and day (pageview_counts) for the dashboard.
CREATE TABLE pageview_queue (
    site_id    TEXT NOT NULL,
    event_id   TEXT NOT NULL,
    pixel_id   TEXT NOT NULL,
    payload    TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (site_id, event_id)
);
CREATE TABLE pageview_leases (
    site_id TEXT PRIMARY KEY,
    owner   TEXT NOT NULL,
    until   BIGINT NOT NULL,
    through TEXT NOT NULL  -- the last event_id claimed: its outcome ends the lease
);
CREATE TABLE pageview_counts (
    site_id TEXT NOT NULL,
    day     BIGINT NOT NULL,
    sent    BIGINT NOT NULL,
    PRIMARY KEY (site_id, day)
);
