-- Retention deletes the receipts of inbound WhatsApp messages and calls
-- older than retention.receipt_days (they grew without bound: one row per
-- message or call, ever); it finds them by their time.
CREATE INDEX webhook_receipts_received ON webhook_receipts (received_at);
