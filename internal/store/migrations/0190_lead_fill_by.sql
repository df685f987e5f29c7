-- Who measured a lead's fill_ms: 'tracker' (t.js or the page's own script in
-- the visitor's browser: the lead came to the public endpoint) or 'backend'
-- (the site's own server posted it with its API key). The rules weigh the two
-- differently (a tracker's fill under two seconds is final junk, a backend's
-- gives its points), so a replay and the lead's story need to know it. ''
-- when the lead has no fill time, and for leads stored before this column,
-- whose judgement says it only when their fill was too fast.
ALTER TABLE leads ADD COLUMN fill_by TEXT NOT NULL DEFAULT '';
