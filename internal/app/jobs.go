package app

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// Job is one piece of a lead source's work after its webhook was answered
// (a CRM's contact to read, a deal's stage to record): an outbox row of the
// source's destination, done by its handler with the runner's retries (see
// internal/source).
type Job struct {
	// Key makes the piece once per site and destination: the event id the
	// source gave it (HubSpot's eventId, Pipedrive's meta.id).
	Key string
	// Kind says what the piece is, in the source's words ("deal.stage").
	Kind string
	// Payload is what the handler needs, as the source encodes it.
	Payload json.RawMessage
	// At is when the thing happened at the source (now when zero); the
	// piece is given up Keep after it.
	At   time.Time
	Keep time.Duration
}

// defaultJobKeep is how long a source's piece waits for the other system
// when the source says nothing: the longest any ad platform takes a stage.
const defaultJobKeep = 7 * 24 * time.Hour

// QueueJobs persists a source's pieces for destination in one transaction,
// each once per key: a piece whose key was queued before adds nothing, so a
// webhook's redelivery does no work twice. It wakes the runner when one was
// new and returns how many were.
func (s *Service) QueueJobs(ctx context.Context, site *model.Site, destination string, jobs []Job) (int, error) {
	for i, j := range jobs {
		if j.Key == "" || j.Kind == "" || destination == "" {
			return 0, model.Invalid(fmt.Sprintf("jobs[%d]", i), "a job needs a key, a kind and a destination")
		}
	}
	now := s.now().UTC()
	rows := make([]*model.Delivery, len(jobs))
	for i, j := range jobs {
		at, keep := j.At, j.Keep
		if at.IsZero() || at.After(now) {
			at = now
		}
		if keep <= 0 {
			keep = defaultJobKeep
		}
		payload := j.Payload
		if len(payload) == 0 {
			payload = json.RawMessage("{}")
		}
		rows[i] = &model.Delivery{ID: s.ids.New("dl_", now), SiteID: site.ID, Destination: destination, Kind: j.Kind,
			EventName: j.Kind, EventID: j.Key, Payload: payload, State: model.DeliveryPending,
			NextAt: now, DeadlineAt: at.Add(keep), CreatedAt: now, UpdatedAt: now}
	}
	n := 0
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		n = 0
		inserted, err := tx.DeliveryInsertAll(ctx, rows)
		for _, ok := range inserted {
			if ok {
				n++
			}
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	if n > 0 {
		s.wake()
	}
	return n, nil
}
