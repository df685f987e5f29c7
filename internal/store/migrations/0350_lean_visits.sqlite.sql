-- A visit keeps what matching and the windows need: who (visitor_id), when
-- (at), its PageView's event_id, the ad click ids and UTM tags of its
-- landing URL (the Google, TikTok and Microsoft click windows, the campaign
-- report's landing visit) and how many lead forms t.js found (form_visits).
-- Its surrogate id, page URL, referrer, IP and user agent are gone: nothing
-- read them after intake. The PageView is built from the request, the lead
-- keeps its own page, referrer, IP and agent, and the visitor its last IP
-- and agent (the fallback a lead without them is given). SQLite drops a
-- column by rewriting the table once per column, so the table is rebuilt
-- once, as migration 0200 did.
CREATE TABLE visits_lean (
    site_id      TEXT NOT NULL,
    event_id     TEXT NOT NULL,
    visitor_id   TEXT NOT NULL,
    fbclid       TEXT,
    gclid        TEXT,
    wbraid       TEXT,
    gbraid       TEXT,
    ttclid       TEXT,
    msclkid      TEXT,
    utm_source   TEXT,
    utm_medium   TEXT,
    utm_campaign TEXT,
    utm_term     TEXT,
    utm_content  TEXT,
    at           BIGINT NOT NULL,
    lead_forms   INTEGER,
    PRIMARY KEY (site_id, event_id)
) WITHOUT ROWID;
INSERT INTO visits_lean (site_id, event_id, visitor_id, fbclid, gclid, wbraid, gbraid, ttclid, msclkid,
    utm_source, utm_medium, utm_campaign, utm_term, utm_content, at, lead_forms)
SELECT site_id, event_id, visitor_id, NULLIF(fbclid, ''), NULLIF(gclid, ''), NULLIF(wbraid, ''), NULLIF(gbraid, ''),
    NULLIF(ttclid, ''), NULLIF(msclkid, ''), NULLIF(utm_source, ''), NULLIF(utm_medium, ''), NULLIF(utm_campaign, ''),
    NULLIF(utm_term, ''), NULLIF(utm_content, ''), at, lead_forms FROM visits;
DROP TABLE visits;
ALTER TABLE visits_lean RENAME TO visits;
CREATE INDEX visits_visitor ON visits (site_id, visitor_id, at);
CREATE INDEX visits_at ON visits (at);
