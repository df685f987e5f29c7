-- DeliveryClaim walks the claimable events in (next_at, id) order and
-- stops at its limit. This partial index holds only pending and retry
-- events, in that order, with the site and lease it filters on: the claim
-- reads index entries, skipping busy sites' and leased events without
-- touching their rows, and no sort of every due event is needed. Sent, dead
-- and expired events, most of the table, are not in it.
CREATE INDEX deliveries_claimable ON deliveries (next_at, id, site_id, lease_until)
    WHERE state IN ('pending', 'retry');
