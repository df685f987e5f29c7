-- SQLite keeps delivery_leases_until: see the PostgreSQL twin.
SELECT 1;
