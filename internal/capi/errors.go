package capi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Class says what to do about a failed request.
type Class int

// The classes of failure.
const (
	// ClassNone is no error.
	ClassNone Class = iota
	// ClassTransient is a network error, a timeout, a 5xx or an error Meta
	// marks transient (is_transient, codes 1 and 2): retry with backoff.
	ClassTransient
	// ClassThrottled is a rate limit (codes 4, 17, 32, 341, 613,
	// 80000-80014, HTTP 429): retry later, after Retry-After when given.
	ClassThrottled
	// ClassRejected is a request whose data Meta refused (code 100 and its
	// 2804xxx subcodes, other 4xx): retrying the same data fails again.
	ClassRejected
	// ClassAuth is an invalid or expired token (190, 102, 104) or a missing
	// permission (10, 200-299): stop sending for the site until the token
	// changes.
	ClassAuth
)

// String names the class.
func (c Class) String() string {
	switch c {
	case ClassNone:
		return "none"
	case ClassTransient:
		return "transient"
	case ClassThrottled:
		return "throttled"
	case ClassRejected:
		return "rejected"
	case ClassAuth:
		return "auth"
	}
	return "class(" + strconv.Itoa(int(c)) + ")"
}

// Retryable tells whether the same request may succeed later.
func (c Class) Retryable() bool { return c == ClassTransient || c == ClassThrottled }

// APIError is an error answer from the Graph API, in Meta's error format
// {"error": {...}}, with the HTTP status and any Retry-After.
type APIError struct {
	Status      int    `json:"-"`
	Message     string `json:"message"`
	Type        string `json:"type"`
	Code        int    `json:"code"`
	Subcode     int    `json:"error_subcode"`
	IsTransient bool   `json:"is_transient"`
	UserTitle   string `json:"error_user_title"`
	UserMsg     string `json:"error_user_msg"`
	FBTraceID   string `json:"fbtrace_id"`
	// RetryAfter is the server's Retry-After, zero when it sent none.
	RetryAfter time.Duration `json:"-"`
}

// Error gives status, code, subcode, type, messages and fbtrace_id.
func (e *APIError) Error() string {
	s := fmt.Sprintf("meta: HTTP %d, code %d", e.Status, e.Code)
	if e.Subcode != 0 {
		s += fmt.Sprintf("/%d", e.Subcode)
	}
	if e.Type != "" {
		s += " (" + e.Type + ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.UserMsg != "" && e.UserMsg != e.Message {
		s += ": " + e.UserMsg
	}
	if e.FBTraceID != "" {
		s += " [fbtrace_id " + e.FBTraceID + "]"
	}
	return s
}

// Class classifies the error as Meta's error-handling guide describes.
func (e *APIError) Class() Class {
	c := e.Code
	switch {
	case c == 190 || c == 102 || c == 104 || c == 10 || c >= 200 && c <= 299:
		return ClassAuth
	case c == 4 || c == 17 || c == 32 || c == 341 || c == 613 || c >= 80000 && c <= 80014 ||
		e.Status == http.StatusTooManyRequests:
		return ClassThrottled
	case e.IsTransient || c == 1 || c == 2 || e.Status >= 500:
		return ClassTransient
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		if c == 0 {
			return ClassAuth
		}
		return ClassRejected
	case e.Status >= 400:
		return ClassRejected
	}
	return ClassTransient
}

// Classify tells what to do about an error from Send: an *APIError by its
// code; network errors, timeouts and cut connections are transient; a
// request Send refused to make (ErrInvalidRequest) is rejected. Anything
// else is treated as transient, so nothing is dropped on an unknown error.
func Classify(err error) Class {
	if err == nil {
		return ClassNone
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Class()
	}
	if errors.Is(err, ErrInvalidRequest) {
		return ClassRejected
	}
	// Network errors, timeouts, cancellations and cut connections land
	// here, and so does anything unknown: retrying is bounded by the
	// event's 7-day deadline, dropping would lose the event.
	return ClassTransient
}

// RetryAfter returns the Retry-After Meta sent with err, or zero.
func RetryAfter(err error) time.Duration {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.RetryAfter
	}
	return 0
}

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date.
func parseRetryAfter(h string, now time.Time) time.Duration {
	if h == "" {
		return 0
	}
	if n, err := strconv.Atoi(h); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
