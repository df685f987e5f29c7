package app

import (
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
)

// linkVisitor ties a new lead to the visitor it came from (nil: none was
// found), named by the lead's visitor_id (the visitor cookie, or a server
// passing it on), else by the visitor in its form token, else by the
// event_id of one of the visitor's PageViews (store.LeadIntake finds it);
// and fills what the lead lacks from the visitor: fbc, fbp, IP, user agent
// and consent. What the lead brings itself is kept.
func linkVisitor(lead *model.Lead, v *model.Visitor) {
	if v == nil {
		return
	}
	lead.VisitorID = v.ID
	fill := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	fill(&lead.FBC, v.FBC)
	fill(&lead.FBP, v.FBP)
	fill(&lead.ClientIP, v.LastIP)
	fill(&lead.UserAgent, v.LastUserAgent)
	if lead.Consent == nil {
		lead.Consent = v.Consent
	}
}

// mayQueueLead tells whether a lead's events may go to Meta at all: not
// without consent where the site requires it, nor after an explicit no.
// The lead itself is stored either way. The site's consent setting is
// about its website's visitors: a lead that came through Meta's own
// surfaces (an Instant Form, a Click-to-WhatsApp chat) has no website
// visit to consent on, and is sent as Meta's terms for those ads have it.
func mayQueueLead(site *model.Site, lead *model.Lead) bool {
	if lead.Source == model.SourceLeadAds || capi.IsCTWA(lead) {
		return true
	}
	return site.ConsentAllows(lead.Consent)
}
