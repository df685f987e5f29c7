-- DeliveryClaim walked deliveries_claimable in deadline order across all
-- sites and left out the sites it was told to skip (those being sent for,
-- those backing off) row by row: the backlog of a busy site sat at the
-- front of the index, and every claim walked past it on the one SQLite
-- writer while intake waited (tens of milliseconds per claim in a drain of
-- 100,000 events). The claim now goes site by site: the index is by site
-- first, so a skipped site costs nothing and a claimed one a seek.
DROP INDEX deliveries_claimable;
CREATE INDEX deliveries_claimable ON deliveries (site_id, deadline_at, id, next_at)
    WHERE state IN ('pending', 'retry') AND lease_owner = '';
