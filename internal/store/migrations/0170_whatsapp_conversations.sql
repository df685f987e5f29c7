-- A Click-to-WhatsApp conversation: the lead its first message started, found
-- again by the sender (its business-scoped user id, "user:<id>", and its
-- phone digits, "phone:<digits>", when the webhook names them), so later
-- messages join the lead instead of starting another. business_wrote_at is
-- the first time the webhook showed the business writing to the sender (a
-- status of an outgoing message) after the lead started: a message after it
-- is the person answering, evidence for a lead held for review.
CREATE TABLE whatsapp_conversations (
    site_id           TEXT NOT NULL REFERENCES sites (id),
    sender            TEXT NOT NULL,
    lead_id           TEXT NOT NULL,
    started_at        BIGINT NOT NULL,
    business_wrote_at BIGINT,
    messages          INTEGER NOT NULL DEFAULT 1,
    last_at           BIGINT NOT NULL,
    PRIMARY KEY (site_id, sender)
);
CREATE INDEX whatsapp_conversations_lead ON whatsapp_conversations (lead_id);
