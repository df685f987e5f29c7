-- The dashboard's and the deliveries page's counts of a site's deliveries
-- by state since a time (Store.DeliveryStats, DeliveryStatsByDestination)
-- read at most 10,001 entries of this index a state instead of every
-- delivery of the site. It replaces deliveries_site_state, its prefix, so a
-- delivery keeps as many B-trees as before.
DROP INDEX IF EXISTS deliveries_site_state;
CREATE INDEX deliveries_site_state_created ON deliveries (site_id, state, created_at);
