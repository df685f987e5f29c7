-- A collect wrote about nine B-trees: the visit's row, its id's unique
-- index, its (site_id, event_id) unique index, the visitor and time
-- indexes, a look-up of the visitor for the foreign key, and for a new
-- visitor its row, its key's index and its last_seen index. Nobody looks a
-- visit up by its id, and the foreign key only repeated what intake already
-- does (a visit is stored with the visitor it was just given). Both tables
-- are now clustered on the key they are read by (WITHOUT ROWID): a visit
-- by (site_id, event_id), time first, so inserts append; a visitor by
-- (site_id, id). A visit now writes three B-trees, a new visitor two.
-- The visit's optional columns (most are empty: click ids, UTM tags) hold
-- NULL for nothing: binding a NULL costs the driver nothing, binding a
-- text copies it into C memory and frees it after, about a quarter of a
-- visit's store work by profile for its fifteen texts.
CREATE TABLE visits_lean (
    site_id      TEXT NOT NULL,
    event_id     TEXT NOT NULL,
    id           TEXT NOT NULL,
    visitor_id   TEXT NOT NULL,
    page_url     TEXT,
    referrer     TEXT,
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
    client_ip    TEXT,
    user_agent   TEXT,
    at           BIGINT NOT NULL,
    PRIMARY KEY (site_id, event_id)
) WITHOUT ROWID;
INSERT INTO visits_lean (site_id, event_id, id, visitor_id, page_url, referrer, fbclid, gclid, wbraid, gbraid, ttclid,
    msclkid, utm_source, utm_medium, utm_campaign, utm_term, utm_content, client_ip, user_agent, at)
SELECT site_id, event_id, id, visitor_id, page_url, referrer, fbclid, gclid, wbraid, gbraid, ttclid,
    msclkid, utm_source, utm_medium, utm_campaign, utm_term, utm_content, client_ip, user_agent, at FROM visits;
DROP TABLE visits;
ALTER TABLE visits_lean RENAME TO visits;
CREATE INDEX visits_visitor ON visits (site_id, visitor_id, at);
CREATE INDEX visits_at ON visits (at);

CREATE TABLE visitors_lean (
    site_id         TEXT NOT NULL REFERENCES sites (id),
    id              TEXT NOT NULL,
    fbc             TEXT NOT NULL DEFAULT '',
    fbc_at          BIGINT,
    fbp             TEXT NOT NULL DEFAULT '',
    first_seen      BIGINT NOT NULL,
    last_seen       BIGINT NOT NULL,
    last_ip         TEXT NOT NULL DEFAULT '',
    last_user_agent TEXT NOT NULL DEFAULT '',
    consent         INTEGER,
    PRIMARY KEY (site_id, id)
) WITHOUT ROWID;
INSERT INTO visitors_lean (site_id, id, fbc, fbc_at, fbp, first_seen, last_seen, last_ip, last_user_agent, consent)
SELECT site_id, id, fbc, fbc_at, fbp, first_seen, last_seen, last_ip, last_user_agent, consent FROM visitors;
DROP TABLE visitors;
ALTER TABLE visitors_lean RENAME TO visitors;
CREATE INDEX visitors_last_seen ON visitors (last_seen);
