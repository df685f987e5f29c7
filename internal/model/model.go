// Package model owns the plain types every other package shares: sites, leads,
// verdicts and their reasons, deliveries, and the errors the core returns. It
// imports nothing of ours, and only the standard library.
package model

import "errors"

// ErrNotFound is returned by look-ups that find nothing.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned when a write would break a uniqueness rule.
var ErrConflict = errors.New("conflict")

// InputError is bad input from a caller: the message names the problem and is
// safe to show to the caller. Field, when set, is the offending field.
type InputError struct {
	Field   string
	Message string
}

func (e *InputError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// Invalid returns an *InputError for field with message.
func Invalid(field, message string) error {
	return &InputError{Field: field, Message: message}
}
