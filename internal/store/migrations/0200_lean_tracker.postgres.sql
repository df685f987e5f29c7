-- A visit is read by (site_id, event_id) and by its visitor, never by its
-- id: the id's unique index goes, and (site_id, event_id) becomes the key.
-- The foreign key to visitors stays here: another node may forget a visitor
-- between a collect's look-up and its insert (the SQLite twin, with one
-- writer, drops it). The optional columns hold NULL for nothing, as on
-- SQLite, where binding a NULL is much cheaper than binding a text.
ALTER TABLE visits DROP CONSTRAINT visits_site_id_event_id_key;
ALTER TABLE visits DROP CONSTRAINT visits_pkey;
ALTER TABLE visits ADD PRIMARY KEY (site_id, event_id);
ALTER TABLE visits ALTER COLUMN page_url DROP NOT NULL, ALTER COLUMN referrer DROP NOT NULL, ALTER COLUMN fbclid DROP NOT NULL, ALTER COLUMN gclid DROP NOT NULL, ALTER COLUMN wbraid DROP NOT NULL, ALTER COLUMN gbraid DROP NOT NULL, ALTER COLUMN ttclid DROP NOT NULL, ALTER COLUMN msclkid DROP NOT NULL, ALTER COLUMN utm_source DROP NOT NULL, ALTER COLUMN utm_medium DROP NOT NULL, ALTER COLUMN utm_campaign DROP NOT NULL, ALTER COLUMN utm_term DROP NOT NULL, ALTER COLUMN utm_content DROP NOT NULL, ALTER COLUMN client_ip DROP NOT NULL, ALTER COLUMN user_agent DROP NOT NULL;
