-- CRM stages (each once per lead), receipts of webhook deliveries (each
-- WhatsApp message or call handled once), the WhatsApp user ids matched to a
-- phone, and look-ups by Meta Lead Ads id.

CREATE TABLE lead_stages (
    lead_id     TEXT NOT NULL REFERENCES leads (id) ON DELETE CASCADE,
    stage       TEXT NOT NULL,
    at          BIGINT NOT NULL,
    event_name  TEXT NOT NULL,
    event_id    TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (lead_id, stage)
);

-- source is "whatsapp" (external_id the message id) or "call:<site>"
-- (external_id the call tracker's id).
CREATE TABLE webhook_receipts (
    source      TEXT NOT NULL,
    external_id TEXT NOT NULL,
    received_at BIGINT NOT NULL,
    outcome     TEXT NOT NULL DEFAULT '',
    site_id     TEXT NOT NULL DEFAULT '',
    lead_id     TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (source, external_id)
);

-- A WhatsApp business-scoped user id (from_user_id) remembered with the
-- phone it was first matched by, so later messages without a phone match.
CREATE TABLE whatsapp_contacts (
    site_id     TEXT NOT NULL REFERENCES sites (id),
    user_id     TEXT NOT NULL,
    phone_key   TEXT NOT NULL,
    lead_id     TEXT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (site_id, user_id)
);

CREATE INDEX leads_lead_ads_id ON leads (site_id, lead_ads_id);
