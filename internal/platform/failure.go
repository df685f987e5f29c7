package platform

import (
	"encoding/json"
	"errors"
	"time"
)

// Class is how a request-level failure is handled. Every platform sorts
// its own errors into these; the runner acts on the class alone.
type Class int

// The classes of failure.
const (
	// Transient: the platform or the network failed; every row is tried
	// again after the runner's backoff, and the share waits until then.
	Transient Class = iota
	// Throttled: the platform asked us to slow down; as Transient, never
	// sooner than its RetryAfter.
	Throttled
	// Refused: the request itself is wrong in a way no retry mends (and
	// the platform could not say which event); every row is dead with the
	// platform's words.
	Refused
	// Paused: the credentials or the account need the owner (a revoked
	// token, terms not accepted): the site's rows of the platform wait,
	// parked, until the owner changes the settings or resumes; Words says
	// what to do.
	Paused
)

func (c Class) String() string {
	switch c {
	case Throttled:
		return "throttled"
	case Refused:
		return "refused"
	case Paused:
		return "paused"
	}
	return "transient"
}

// Failure is a classified request-level failure. Platforms return one (or
// an error wrapping one) from Send; an error that is none is Transient.
type Failure struct {
	Class Class
	// Words say what happened, and for a pause what the owner must do, in
	// plain words.
	Words string
	// RetryAfter is the least wait the platform asked for.
	RetryAfter time.Duration
	// Err is the platform's own error.
	Err error
	// Response is the platform's answer as kept on the rows the request
	// carried (nil: they keep what they had).
	Response json.RawMessage
}

func (f *Failure) Error() string {
	if f.Err == nil {
		return f.Words
	}
	if f.Words == "" {
		return f.Err.Error()
	}
	return f.Words + ": " + f.Err.Error()
}

func (f *Failure) Unwrap() error { return f.Err }

// Classify returns the class of err: its Failure's, else Transient.
func Classify(err error) *Failure {
	var f *Failure
	if errors.As(err, &f) {
		return f
	}
	return &Failure{Class: Transient, Err: err}
}
