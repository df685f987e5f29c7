-- On SQLite an outbox event's lease goes back into its delivery_state row,
-- as two columns no index names (migration 0520 moved it to
-- delivery_leases on both engines; see the PostgreSQL twin). SQLite updates
-- only the indexes whose columns (or partial index conditions) a statement
-- changes, so a claim that writes the lease rewrites the state row alone,
-- and the outcome clears it in the row it updates anyway: the lease row's
-- insert (two B-trees: its key and delivery_leases_until) at the claim, its
-- delete at the outcome and the claim's probe of it per event go. An
-- expired lease is free to the claim, the sweep and the next-due look-up
-- as they read it (lease_until <= now), so nothing gives leases back.
-- ADD COLUMN does not rewrite the table; the live leases are copied.
ALTER TABLE delivery_state ADD COLUMN lease_until BIGINT;
ALTER TABLE delivery_state ADD COLUMN lease_owner TEXT;
UPDATE delivery_state SET lease_until = (SELECT l.until FROM delivery_leases l WHERE l.id = delivery_state.id),
    lease_owner = (SELECT l.owner FROM delivery_leases l WHERE l.id = delivery_state.id)
    WHERE id IN (SELECT id FROM delivery_leases);
DROP TABLE delivery_leases;
