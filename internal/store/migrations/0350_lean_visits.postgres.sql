-- A visit keeps what matching and the windows need: who (visitor_id), when
-- (at), its PageView's event_id, the ad click ids and UTM tags of its
-- landing URL (the Google, TikTok and Microsoft click windows, the campaign
-- report's landing visit) and how many lead forms t.js found (form_visits).
-- Its surrogate id (and with it the primary key's index: nobody looks a
-- visit up by it), page URL, referrer, IP and user agent are gone: nothing
-- read them after intake. The PageView is built from the request, the lead
-- keeps its own page, referrer, IP and agent, and the visitor its last IP
-- and agent. On PostgreSQL a dropped column is only hidden: the rows
-- written before keep its bytes until they are rewritten (VACUUM FULL) or
-- deleted by retention; the id's index goes at once. (site_id, event_id)
-- stays unique, the key visits are read by.
ALTER TABLE visits DROP COLUMN id, DROP COLUMN page_url, DROP COLUMN referrer,
    DROP COLUMN client_ip, DROP COLUMN user_agent;
