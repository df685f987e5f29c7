-- A lead t.js sent without a form plugin's word that the site took it stays
-- open until open_until (Unix milliseconds) for a later attempt with its
-- event_id, which replaces its values; its outbox rows wait until then.
-- NULL: the lead is final (a confirmed submission, a form post, the site's
-- own server, an older lead).
ALTER TABLE leads ADD COLUMN open_until BIGINT;
