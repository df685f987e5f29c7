-- PostgreSQL gets delivery_state_due for Store.DeliveryNextDue (see its
-- twin). SQLite reads MIN(next_at) from delivery_state_claimable alone (the
-- statement names it), which holds next_at; an index more would cost its
-- intake an entry per event.
SELECT 1;
