-- When the runner's claim comes back short (every share with due events is
-- being sent, or nothing is due yet) it asks when the earliest unleased
-- event is due (Store.DeliveryNextDue). delivery_state_claimable is by share
-- and deadline, not by next_at, so PostgreSQL answered MIN(next_at) with a
-- scan of every row of delivery_state: a read of the whole outbox, sent
-- history included, several times a second while a backlog drains. This
-- index answers it with one descent. It holds only due or waiting events
-- that no one has leased: a row enters at intake (or when a retry or replay
-- puts it back) and leaves when claimed, so the claim and the outcome add
-- no entry to it.
CREATE INDEX delivery_state_due ON delivery_state (next_at)
    WHERE state IN ('pending', 'retry') AND lease_owner = '';
