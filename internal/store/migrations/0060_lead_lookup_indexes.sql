-- The same person's earlier lead (LeadPrevious) and the CRM look-ups
-- (LeadFind) filter on a contact key and order by received_at: with the
-- time in the index they read one entry instead of scanning the site's
-- recent leads.
CREATE INDEX leads_phone_recent ON leads (site_id, phone_key, received_at);
CREATE INDEX leads_email_recent ON leads (site_id, email_key, received_at);
DROP INDEX leads_phone_key;
DROP INDEX leads_email_key;
