-- DeliveryClaim takes the oldest events first (ORDER BY deadline_at, id),
-- but deliveries_claimable was in (next_at, id) order: every claim read
-- every due event's row for its deadline and sorted them all to keep the
-- first thousand, on the one SQLite writer, so a backlog of a million events
-- held up intake for seconds at each claim. In claim order, with the
-- columns the claim filters on (next_at, site, lease), a claim reads index
-- entries until it has its limit. DeliveryNextDue, which wants the smallest
-- next_at, now reads the unsent events of this index on a reader: few,
-- except during a backlog, and never on the writer.
DROP INDEX deliveries_claimable;
CREATE INDEX deliveries_claimable ON deliveries (deadline_at, id, next_at, site_id, lease_until)
    WHERE state IN ('pending', 'retry');
