package web

import (
	"net/http"

	"github.com/cleanads/cleanads/internal/app"
)

// eventBody is the JSON body of POST /v1/events: the lead as the CRM knows
// it, and the event.
type eventBody struct {
	Lead app.LeadRef `json:"lead"`
	app.LeadEventInput
}

// eventCreate records a stage or evidence about a lead of the key's site
// named by id, event_id, external_id, Lead Ads lead_id, e-mail or phone,
// and answers with the lead as it now stands.
func (s *Server) eventCreate(w http.ResponseWriter, r *http.Request) {
	var in eventBody
	if err := decodeJSON(r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	lead, err := s.app.AddEvent(r.Context(), siteFrom(r.Context()), in.Lead, &in.LeadEventInput)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeLead(w, r, lead)
}
