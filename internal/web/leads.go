package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/source"
)

// decodeJSON reads one JSON object from the body, refusing invalid UTF-8
// (Go's decoder would silently replace it), unknown fields and trailing data.
func decodeJSON(r *http.Request, v any) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return readError(err)
	}
	return source.DecodeJSON(b, v, true)
}

// site returns the named site, or a 400 naming the problem.
func (s *Server) site(r *http.Request, id string) (*model.Site, error) {
	if id == "" {
		return nil, model.Invalid("site", "required: the id of the site this lead is for")
	}
	site, err := s.sites.get(r.Context(), model.SiteID(id))
	if errors.Is(err, model.ErrNotFound) {
		return nil, model.Invalid("site", fmt.Sprintf("unknown site %q", id))
	}
	return site, err
}

// leadView is a lead as the API shows it.
type leadView struct {
	*model.Lead
	History    []model.HistoryEntry `json:"history"`
	Deliveries []deliveryView       `json:"deliveries"`
	Stages     []stageView          `json:"stages"`
}

type deliveryView struct {
	Kind      string          `json:"kind"`
	EventName string          `json:"event_name"`
	EventID   string          `json:"event_id"`
	State     string          `json:"state"`
	Attempts  int             `json:"attempts"`
	LastError string          `json:"last_error,omitempty"`
	Response  json.RawMessage `json:"response,omitempty"`
	SentAt    *time.Time      `json:"sent_at,omitempty"`
	// Destination is where the event went: meta, google, ...
	Destination string `json:"destination"`
}

// leadEventCreate records evidence about a lead of the key's site and
// answers with the lead as it now stands.
func (s *Server) leadEventCreate(w http.ResponseWriter, r *http.Request) {
	var in app.LeadEventInput
	if err := decodeJSON(r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	lead, err := s.app.AddLeadEvent(r.Context(), siteFrom(r.Context()), model.LeadID(r.PathValue("id")), &in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeLead(w, r, lead)
}

// leadGet shows a lead of the key's site as stored, with its history and
// deliveries.
func (s *Server) leadGet(w http.ResponseWriter, r *http.Request) {
	site := siteFrom(r.Context())
	lead, err := s.db.LeadByID(r.Context(), model.LeadID(r.PathValue("id")))
	if err == nil && lead.SiteID != site.ID {
		err = model.ErrNotFound
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeLead(w, r, lead)
}

// writeLead answers with a lead, its history and its deliveries.
func (s *Server) writeLead(w http.ResponseWriter, r *http.Request, lead *model.Lead) {
	hist, err := s.db.HistoryByLead(r.Context(), lead.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	dels, err := s.db.DeliveriesByLead(r.Context(), lead.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	stages, err := s.db.LeadStagesByLead(r.Context(), lead.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := leadView{Lead: lead, History: nonNil(hist), Deliveries: []deliveryView{}, Stages: stageViews(stages)}
	for _, d := range dels {
		dest := d.Destination
		if dest == "" {
			dest = model.DestinationMeta
		}
		v.Deliveries = append(v.Deliveries, deliveryView{Destination: dest, Kind: d.Kind, EventName: d.EventName, EventID: d.EventID,
			State: string(d.State), Attempts: d.Attempts, LastError: d.LastError, Response: d.Response, SentAt: d.SentAt})
	}
	writeJSON(w, http.StatusOK, v)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
