-- Every outbox row had five B-trees in delivery_state, three of them for
-- the counts and lists: (site_id, state, created_at, destination, kind),
-- (state, created_at) and (created_at). The last two served only the
-- readers of every site at once (the deliveries page of all sites, the
-- failures banner, the stats, retention's walks); those now read each
-- site's rows of each state through the first, sites being few, and
-- retention's walk of unredacted rows goes through delivery_state_unshrunk
-- (a row is redacted when shrunk). An event keeps three B-trees here, and
-- its finished row some 90 bytes fewer (SQLite; more on PostgreSQL).
DROP INDEX delivery_state_state_created;
DROP INDEX delivery_state_created;
