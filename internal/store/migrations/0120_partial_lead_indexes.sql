-- Most leads come from a web form: no external id (set by a CRM import),
-- no Lead Ads id and, unless judged review, no review time. Their index
-- entries were kept all the same, three more B-trees to write per lead at
-- intake for look-ups that never ask for an empty value. Now the indexes
-- hold only the leads that have one; LeadFind names the condition so the
-- planners can use them. The look-ups by external or Lead Ads id want the
-- newest lead: with received_at in the index, SQLite's planner takes it
-- (before, it walked every lead of the site by leads_site_received).
DROP INDEX leads_external_id;
CREATE INDEX leads_external_id ON leads (site_id, external_id, received_at) WHERE external_id <> '';
DROP INDEX leads_lead_ads_id;
CREATE INDEX leads_lead_ads_id ON leads (site_id, lead_ads_id, received_at) WHERE lead_ads_id <> '';
DROP INDEX leads_review_until;
CREATE INDEX leads_review_until ON leads (verdict, review_until) WHERE review_until IS NOT NULL;
