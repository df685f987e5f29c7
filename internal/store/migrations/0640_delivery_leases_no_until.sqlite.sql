-- SQLite has had no delivery_leases since 0620 (the lease is in the state
-- row): see the PostgreSQL twin.
SELECT 1;
