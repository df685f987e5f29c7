-- SQLite keeps an outbox event's lease in its delivery_state row again
-- (see the SQLite twin). PostgreSQL keeps delivery_leases (migration 0520):
-- there any update of the state row writes a new version of it with an
-- entry in each of its indexes, which the lease row avoids. Nothing to do.
SELECT 1;
