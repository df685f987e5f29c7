-- Per-site, per-day counters, kept in the same transaction as the rows they
-- count (store.CountersAdd, called by VisitInsert and LeadInsert), so that a
-- figure over days costs a read of a few rows, not a scan of the visits:
-- the dashboard's visits, the lost-leads notice, and later the campaign
-- report's and the funnel's figures. day is UTC days since the epoch (Unix
-- milliseconds / 86400000); name is what is counted (visits, form_visits,
-- leads, leads_untracked, ...); dim, '' or one value it is split by (a
-- lead's source, later a campaign or a stage). shard spreads one hot
-- counter over a few rows on PostgreSQL, where concurrent transactions
-- would otherwise wait on each other's row lock until they commit; SQLite
-- has one writer and always writes shard 0. A figure is SUM(n) over the
-- shards. `cleanads counters rebuild` recounts them from the rows.
CREATE TABLE site_counters (
    site_id TEXT NOT NULL,
    day     INTEGER NOT NULL,
    name    TEXT NOT NULL,
    dim     TEXT NOT NULL DEFAULT '',
    shard   INTEGER NOT NULL DEFAULT 0,
    n       BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (site_id, day, name, dim, shard)
);
-- How many lead forms t.js found on the visit's page (its collect's "lf");
-- NULL when the tracker did not say (t.v1.js).
ALTER TABLE visits ADD COLUMN lead_forms INTEGER;
-- The counts of the rows already there (one scan, once), so the dashboard's
-- past days are not empty after the upgrade; form_visits start now.
INSERT INTO site_counters (site_id, day, name, dim, shard, n)
SELECT site_id, at / 86400000, 'visits', '', 0, COUNT(*) FROM visits GROUP BY site_id, at / 86400000;
INSERT INTO site_counters (site_id, day, name, dim, shard, n)
SELECT site_id, received_at / 86400000, 'leads', source, 0, COUNT(*) FROM leads GROUP BY site_id, received_at / 86400000, source;
INSERT INTO site_counters (site_id, day, name, dim, shard, n)
SELECT site_id, received_at / 86400000, 'leads_untracked', source, 0, COUNT(*) FROM leads WHERE fill_by <> 'tracker'
GROUP BY site_id, received_at / 86400000, source;
