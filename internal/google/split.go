package google

import (
	"context"
	"errors"

	"golang.org/x/oauth2"
)

// Outcome is what became of one event of IngestAll.
type Outcome struct {
	// RequestID is the accepted request that carried the event; empty for
	// validateOnly requests, which have none.
	RequestID string
	// Accepted is set when a request with the event was accepted.
	Accepted bool
	// Err is Google's refusal of this event alone: dead-letter it.
	Err error
}

// EventError is Google's refusal of one event, isolated from its request.
type EventError struct {
	Reason string
	// Cause is the refusal of the request the event was isolated in.
	Cause *APIError
}

func (e *EventError) Error() string { return e.Reason }

// Unwrap returns the request's refusal, so Classify sees it as invalid.
func (e *EventError) Unwrap() error { return e.Cause }

// IngestAll sends events to the target in requests of at most MaxBatch
// events and MaxDestinations conversion actions. Google refuses a request
// whole when one event is bad (fast fail): IngestAll then takes the events
// its field violations name (events[N]) out with Google's reason and sends
// the rest again, and when the refusal names no event it halves the
// request until each bad event stands alone. It returns each event's
// outcome and how many requests it made. A failure that is not about the
// data (transient, pause) stops it: that error is returned and the events
// not yet accepted have an empty Outcome.
func (c *Client) IngestAll(ctx context.Context, ts oauth2.TokenSource, t Target, events []Event) ([]Outcome, int, error) {
	out := make([]Outcome, len(events))
	requests := 0
	var send func(idx []int) error
	send = func(idx []int) error {
		batch := make([]Event, len(idx))
		for k, i := range idx {
			batch[k] = events[i]
		}
		req, err := NewRequest(t, batch)
		if err != nil {
			return err
		}
		requests++
		resp, err := c.Ingest(ctx, ts, req)
		if err == nil {
			for _, i := range idx {
				out[i] = Outcome{RequestID: resp.RequestID, Accepted: true}
			}
			return nil
		}
		var ae *APIError
		if Classify(err) != ClassInvalid || !errors.As(err, &ae) {
			return err
		}
		if len(idx) == 1 {
			out[idx[0]].Err = &EventError{Reason: ae.ViolationOf(0), Cause: ae}
			return nil
		}
		bad := map[int]bool{}
		for _, f := range ae.FaultIndexes() {
			if f < len(idx) {
				bad[f] = true
				out[idx[f]].Err = &EventError{Reason: ae.ViolationOf(f), Cause: ae}
			}
		}
		if len(bad) > 0 {
			rest := make([]int, 0, len(idx)-len(bad))
			for k, i := range idx {
				if !bad[k] {
					rest = append(rest, i)
				}
			}
			if len(rest) == 0 {
				return nil
			}
			return send(rest)
		}
		// The refusal names no event: halve until the culprit is alone.
		mid := len(idx) / 2
		if err := send(idx[:mid]); err != nil {
			return err
		}
		return send(idx[mid:])
	}
	for _, chunk := range chunks(events) {
		if err := send(chunk); err != nil {
			return out, requests, err
		}
	}
	return out, requests, nil
}

// chunks groups event indexes in order into requests of at most MaxBatch
// events naming at most MaxDestinations conversion actions.
func chunks(events []Event) [][]int {
	var out [][]int
	var cur []int
	refs := map[string]bool{}
	for i, e := range events {
		n := 0
		for _, r := range e.DestinationReferences {
			if !refs[r] {
				n++
			}
		}
		if len(cur) == MaxBatch || len(refs)+n > MaxDestinations {
			out = append(out, cur)
			cur, refs = nil, map[string]bool{}
		}
		cur = append(cur, i)
		for _, r := range e.DestinationReferences {
			refs[r] = true
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
