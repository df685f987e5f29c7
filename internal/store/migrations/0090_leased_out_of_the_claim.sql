-- A leased event stayed in deliveries_claimable until its outcome was
-- recorded, so every claim walked past all the events being sent (4 workers
-- of up to 5,000 each) before it found one to take: tens of milliseconds on
-- the one SQLite writer at every round of a backlog, intake held up
-- meanwhile. Now the claim's index holds only unleased events, and leased
-- ones are in deliveries_leased by when their lease runs out, where
-- DeliveryClaim finds the expired leases (a node that died sending) and
-- gives their events back first.
DROP INDEX deliveries_claimable;
CREATE INDEX deliveries_claimable ON deliveries (deadline_at, id, next_at, site_id)
    WHERE state IN ('pending', 'retry') AND lease_owner = '';
CREATE INDEX deliveries_leased ON deliveries (lease_until) WHERE lease_owner <> '';
