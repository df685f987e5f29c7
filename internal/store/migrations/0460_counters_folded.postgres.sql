-- A counter of a past day is one row (store.CountersFold, run by the
-- hourly retention job): its shards, there so that concurrent intakes do
-- not wait on one row, are folded into shard 0 once the day is over, as
-- they were 32 rows a counter and day for good. This index holds the rows
-- left to fold (today's, yesterday's and the few written to older days
-- since the last run), so the job finds them without reading the table.
CREATE INDEX site_counters_unfolded ON site_counters (day) WHERE shard <> 0;
-- The rows already there, folded once, today's too (the intakes that
-- follow spread today's over its shards again): each counter's shard rows
-- summed into its shard 0.
WITH gone AS (
    DELETE FROM site_counters WHERE shard <> 0
    RETURNING site_id, day, name, dim, n)
INSERT INTO site_counters (site_id, day, name, dim, shard, n)
SELECT site_id, day, name, dim, 0, SUM(n) FROM gone GROUP BY site_id, day, name, dim
ON CONFLICT (site_id, day, name, dim, shard) DO UPDATE SET n = site_counters.n + excluded.n;
