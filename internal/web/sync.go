package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
)

// syncLeadView is a lead as the CRM sync shows it: as stored, with its
// stages and the time it last changed.
type syncLeadView struct {
	*model.Lead
	ChangedAt time.Time   `json:"changed_at"`
	Stages    []stageView `json:"stages"`
}

// stageView is a stage a lead reached.
type stageView struct {
	Stage        string    `json:"stage"`
	At           time.Time `json:"at"`
	EventName    string    `json:"event_name"`
	Value        *float64  `json:"value,omitempty"`
	Currency     string    `json:"currency,omitempty"`
	ActionSource string    `json:"action_source,omitempty"`
	RecordedAt   time.Time `json:"recorded_at"`
}

func stageViews(list []model.LeadStage) []stageView {
	out := make([]stageView, 0, len(list))
	for _, st := range list {
		out = append(out, stageView{Stage: st.Stage, At: st.At, EventName: st.EventName, Value: st.Value,
			Currency: st.Currency, ActionSource: st.ActionSource, RecordedAt: st.CreatedAt})
	}
	return out
}

func syncViews(list []app.SyncLead) []syncLeadView {
	out := make([]syncLeadView, 0, len(list))
	for _, l := range list {
		out = append(out, syncLeadView{Lead: l.Lead, ChangedAt: l.ChangedAt, Stages: stageViews(l.Stages)})
	}
	return out
}

// lookupKeys are the query parameters that name leads the way a CRM knows
// them.
var lookupKeys = []string{"email", "phone", "lead_id", "whatsapp_user_id", "external_id"}

// leadList answers GET /v1/leads for the key's site: the leads named by one
// look-up key, or, without one, the leads changed since a time (or after a
// cursor), oldest change first, a page at a time.
func (s *Server) leadList(w http.ResponseWriter, r *http.Request) {
	ctx, site, q := r.Context(), siteFrom(r.Context()), r.URL.Query()
	limit := 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			s.fail(w, r, model.Invalid("limit", "want a whole number from 1 to 500"))
			return
		}
		limit = n
	}
	for _, k := range lookupKeys {
		if q.Has(k) {
			ref := app.LeadRef{Email: q.Get("email"), Phone: q.Get("phone"), LeadAdsID: q.Get("lead_id"),
				WhatsAppUserID: q.Get("whatsapp_user_id"), ExternalID: q.Get("external_id")}
			list, err := s.app.LeadsLookup(ctx, site, ref, limit)
			if err != nil {
				s.fail(w, r, err)
				return
			}
			writeJSON(w, http.StatusOK, map[string]any{"leads": syncViews(list)})
			return
		}
	}
	var since time.Time
	cursor := q.Get("cursor")
	switch v := q.Get("changed_since"); {
	case v != "":
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			s.fail(w, r, model.Invalid("changed_since", "want an RFC 3339 time like 2026-12-02T15:04:05Z"))
			return
		}
		since = t
	case cursor == "":
		s.fail(w, r, model.Invalid("", "give changed_since (RFC 3339), a cursor, or one of email, phone, lead_id, whatsapp_user_id, external_id"))
		return
	}
	page, err := s.app.LeadsChanged(ctx, site, since, cursor, limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"leads": syncViews(page.Leads), "next_cursor": page.Next,
		"more": page.More, "until": page.Until})
}
