-- The dashboard's and the deliveries page's counts of a site's deliveries
-- by state (and destination and kind) since a time
-- (Store.DeliveryStats, DeliveryStatsByDestination) read at most 10,001
-- entries of this index a state, the index alone, instead of every
-- delivery of the site; the match-key coverage walks it newest first. It
-- replaces deliveries_site_state, its prefix, so a delivery keeps as many
-- B-trees as before (each entry some 15 bytes longer).
DROP INDEX IF EXISTS deliveries_site_state;
CREATE INDEX deliveries_site_state_created ON deliveries (site_id, state, created_at, destination, kind);
