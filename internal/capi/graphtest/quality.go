package graphtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// The Dataset Quality side of the stand-in: GET
// /{version}/dataset_quality?dataset_id={pixel}&fields=web{...}, Meta's read
// of a dataset's Event Match Quality and deduplication feedback per web
// event name. It needs a valid token (190 otherwise, as every read), the
// dataset_id parameter (100 without it), and a dataset the server was told
// about with SetDatasetQuality (100/33 otherwise: Meta's answer for an
// object the token cannot read). Without "web" among the fields the answer
// has no web figures, as Meta answers only the fields asked for.

// QualityEvent is what the stand-in says of one event name of a dataset.
type QualityEvent struct {
	EventName string
	// Score is the Event Match Quality composite score, 0-10.
	Score float64
	// Keys maps a match key's identifier (email, phone, fbc, fbp,
	// client_ip_address, client_user_agent, external_id, lead_id) to the
	// percentage of events carrying it.
	Keys map[string]float64
	// EventIDShare is the percentage of server events carrying event_id,
	// the dedupe key; negative leaves the dedupe feedback out.
	EventIDShare float64
}

// SetDatasetQuality makes the server answer Meta's dataset quality of
// datasetID with events; no events is a dataset with nothing to report.
func (s *Server) SetDatasetQuality(datasetID string, events ...QualityEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.quality == nil {
		s.quality = map[string][]QualityEvent{}
	}
	s.quality[datasetID] = append([]QualityEvent{}, events...)
}

// QualityReads is how many dataset quality reads were answered with
// figures.
func (s *Server) QualityReads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.qualityReads
}

var qualityPathRE = regexp.MustCompile(`^/v[0-9]+\.[0-9]+/dataset_quality$`)

func (s *Server) serveQuality(w http.ResponseWriter, r *http.Request, trace string) bool {
	if r.Method != http.MethodGet || !qualityPathRE.MatchString(r.URL.Path) {
		return false
	}
	q := r.URL.Query()
	token := q.Get("access_token")
	if token == "" {
		token = headerToken(r)
	}
	if !s.authorized(w, token, trace) {
		return true
	}
	id := q.Get("dataset_id")
	if id == "" {
		s.fail(w, http.StatusBadRequest, metaError{Code: 100, Type: "OAuthException", FBTraceID: trace,
			Message: "(#100) The parameter dataset_id is required"})
		return true
	}
	s.mu.Lock()
	events, known := s.quality[id]
	if known {
		s.qualityReads++
	}
	s.mu.Unlock()
	if !known {
		s.fail(w, http.StatusBadRequest, metaError{Code: 100, Subcode: 33, Type: "GraphMethodException", FBTraceID: trace,
			Message: fmt.Sprintf("Unsupported get request. Object with ID '%s' does not exist, cannot be loaded due to missing permissions, or does not support this operation.", id)})
		return true
	}
	out := map[string]any{}
	if strings.Contains(q.Get("fields"), "web") {
		web := []map[string]any{}
		for _, e := range events {
			keys := []map[string]any{}
			for _, k := range []string{"email", "phone", "fbc", "fbp", "client_ip_address", "client_user_agent", "external_id", "lead_id"} {
				if p, ok := e.Keys[k]; ok {
					keys = append(keys, map[string]any{"identifier": k, "coverage": map[string]any{"percentage": p}})
				}
			}
			ev := map[string]any{"event_name": e.EventName,
				"event_match_quality": map[string]any{"composite_score": e.Score, "match_key_feedback": keys}}
			if e.EventIDShare >= 0 {
				ev["dedupe_key_feedback"] = []map[string]any{{"dedupe_key": "event_id",
					"server_events_with_dedupe_key": map[string]any{"percentage": e.EventIDShare}}}
			}
			web = append(web, ev)
		}
		out["web"] = web
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
	return true
}
