-- Where a lead came from: a web form (the default, and every lead before
-- this), Meta's Lead Ads (Instant Forms), a Click-to-WhatsApp conversation,
-- or a server posting through the API. source_detail holds what the source
-- says about it as a JSON object of strings (form, ad, ad set and campaign
-- ids and names, the ctwa_clid, ...), shown to the owner and used to send
-- the source's events as Meta specifies for it.
ALTER TABLE leads ADD COLUMN source TEXT NOT NULL DEFAULT 'web';
ALTER TABLE leads ADD COLUMN source_detail TEXT NOT NULL DEFAULT '{}';
