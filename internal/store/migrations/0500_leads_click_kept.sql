-- A lead's click identity (IP, user agent, fbc, fbp, the ad platforms'
-- cookies) is what a platform matches a website event by; retention now
-- clears it retention.click_days after the lead arrived (the lead keeps its
-- device family in its source detail). This index holds only the leads
-- that still have it, so that the hourly run finds them without reading the
-- ones it cleared before; its condition is store.clickKept, word for word
-- (SQLite uses a partial index only for a query that states its terms).
-- Nothing is cleared here: the next retention run does it.
CREATE INDEX leads_click_kept ON leads (received_at)
    WHERE (user_agent <> '' OR client_ip <> '' OR fbc <> '' OR fbp <> '');
