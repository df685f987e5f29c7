-- Every outbox row is written three times (queued, leased, recorded) and
-- each index on deliveries is one more B-tree page to dirty and write to
-- the log at every commit. deliveries_due (state, next_at) is served by
-- the others: the claim and DeliveryNextDue walk deliveries_claimable, the
-- sweep filters on state through deliveries_state_created. deliveries_lead
-- held every PageView under the empty lead id; only lead events need it.
DROP INDEX deliveries_due;
DROP INDEX deliveries_lead;
CREATE INDEX deliveries_lead ON deliveries (lead_id) WHERE lead_id <> '';
