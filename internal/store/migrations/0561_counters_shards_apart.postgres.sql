-- The counters' key puts the shard before the name: (site_id, day, shard,
-- name, dim). An intake adds to a random shard of today's counters (a row
-- each, up to 32 a counter), and the hourly fold (CountersFold) deletes the
-- shard rows of past days into shard 0. With the shard last, a day's shard
-- rows sat beside its shard 0 rows on every page of the key's B-tree: the
-- fold left each page with a row or two, and PostgreSQL frees only a page
-- left empty, so the key kept every day's churn for good: 10.2 MB at 10,000
-- leads of the scale fill where its rows need 0.86 (8 % of its leaf pages'
-- space used after VACUUM); a year replayed a week at a time, 12.6 MB in
-- that order and 3.5 in this one. With the shard first, a past day's shard
-- rows fill pages of their own, which the fold empties and VACUUM hands
-- back for reuse. Every statement names the key's columns as a set (ON
-- CONFLICT) or reads by site and a range of days with the name as a filter,
-- which this order serves as well: no statement changes. SQLite writes
-- shard 0 only (see 0460): nothing to do there. Building the key reads the
-- counters once: rows per site and day, not per lead (13,000 for a site's
-- year in the scale fill, 0.2 s).
CREATE UNIQUE INDEX site_counters_key ON site_counters (site_id, day, shard, name, dim);
ALTER TABLE site_counters DROP CONSTRAINT site_counters_pkey;
ALTER TABLE site_counters ADD CONSTRAINT site_counters_pkey PRIMARY KEY USING INDEX site_counters_key;
