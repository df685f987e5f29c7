-- The visit's optional columns hold NULL for nothing, as on SQLite, where
-- binding a NULL costs the driver much less than binding a text (the
-- SQLite twin says more). The keys stay as they were here: clustering on
-- (site_id, event_id) and dropping the id's index, as SQLite now does,
-- measured no better on two nodes (collect 1,733 and 1,121-1,310 a second
-- with the change, 2,052 and 2,200-2,450 without it, runs apart by a
-- third), and the foreign key to visitors guards against another node
-- forgetting a visitor between a collect's look-up and its insert.
ALTER TABLE visits ALTER COLUMN page_url DROP NOT NULL, ALTER COLUMN referrer DROP NOT NULL,
    ALTER COLUMN fbclid DROP NOT NULL, ALTER COLUMN gclid DROP NOT NULL, ALTER COLUMN wbraid DROP NOT NULL,
    ALTER COLUMN gbraid DROP NOT NULL, ALTER COLUMN ttclid DROP NOT NULL, ALTER COLUMN msclkid DROP NOT NULL,
    ALTER COLUMN utm_source DROP NOT NULL, ALTER COLUMN utm_medium DROP NOT NULL,
    ALTER COLUMN utm_campaign DROP NOT NULL, ALTER COLUMN utm_term DROP NOT NULL,
    ALTER COLUMN utm_content DROP NOT NULL, ALTER COLUMN client_ip DROP NOT NULL,
    ALTER COLUMN user_agent DROP NOT NULL;
