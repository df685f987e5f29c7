-- delivery_state_unshrunk (migration 0390) held every row not shrunk yet,
-- so each event got an entry at intake and, as neither the claim's nor the
-- outcome's update is HOT (state is in delivery_state_site_state_created's
-- key and the claim indexes' predicates), another for the version its
-- outcome wrote; the intake's entry was dead from then on, for vacuum to
-- remove. Retention (DeliveriesToShrink, DeliveriesToRedact) reads only
-- finished rows from it, so it now holds only those: an event gets its one
-- entry from the outcome that finishes it, none at intake or from a retry,
-- and the outbox's queued rows (a backlog of millions in an outage) are
-- not in it. Each of retention's statements names the predicate's state
-- condition as written here, so that both engines use the index.
DROP INDEX delivery_state_unshrunk;
CREATE INDEX delivery_state_unshrunk ON delivery_state (created_at, id)
    WHERE shrunk_at IS NULL AND state NOT IN ('pending', 'retry', 'paused');
