-- A site's page lists its newest webhook posts (Store.WebhookDeliveries).
-- Without an index of their own it read and sorted every delivery of the
-- site to keep twenty: 141-305 ms at 100,000 leads. The index holds the
-- webhook rows only, so Meta's, Google's and TikTok's rows do not pay for it.
CREATE INDEX delivery_state_webhook_recent ON delivery_state (site_id, created_at, id)
    WHERE destination = 'webhook';
