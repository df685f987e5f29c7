package web

import (
	"testing"

	"github.com/cleanads/cleanads/internal/model"
)

// TestFailureOf: a stored error and answer read as their cause, and the
// platform's message only when the platform said it.
func TestFailureOf(t *testing.T) {
	cases := []struct {
		name, dest        string
		state             model.DeliveryState
		lastError, answer string
		cause, said       string
	}{
		{"unreachable", "meta", model.DeliveryRetry, `Post "https://graph.facebook.com/...": dial tcp: connection refused`,
			`{"error":{"class":"transient","message":"Post ...: dial tcp: connection refused"}}`, causeUnreachable, ""},
		{"Meta's 500", "meta", model.DeliveryRetry, "meta: HTTP 500, code 2: An unexpected error has occurred.",
			`{"error":{"class":"transient","status":500,"code":2,"message":"An unexpected error has occurred."}}`, causeServer, "An unexpected error has occurred."},
		{"throttled", "meta", model.DeliveryRetry, "meta: HTTP 400, code 17: User request limit reached",
			`{"error":{"class":"throttled","status":400,"code":17,"message":"User request limit reached"}}`, causeThrottled, "User request limit reached"},
		{"refused event", "meta", model.DeliveryDead, "meta: HTTP 400, code 100/2804019: Invalid parameter",
			`{"error":{"class":"rejected","status":400,"code":100,"message":"Invalid parameter","error_user_msg":"event_source_url is required"}}`,
			causeRejected, "Invalid parameter. event_source_url is required"},
		{"refused by our check", "meta", model.DeliveryDead, "precheck event_time: too old", `{"precheck":{"rule":"event_time"}}`, causeRejected, ""},
		{"refused token", "meta", model.DeliveryPaused, "token expired", `{"error":{"class":"auth","status":400,"code":190}}`, causeAuth, ""},
		{"older row, no class", "meta", model.DeliveryDead, "Invalid parameter", `{"error":{"message":"Invalid parameter"}}`, causeRejected, "Invalid parameter"},
		{"our own note", "meta", model.DeliveryExpired, "deadline passed", ``, "", ""},
		{"Google unreachable", "google", model.DeliveryRetry, "Post https://datamanager.googleapis.com: dial tcp: i/o timeout", "", causeUnreachable, ""},
		{"Google 429", "google", model.DeliveryRetry, "google: HTTP 429 RESOURCE_EXHAUSTED: quota", "", causeThrottled, "RESOURCE_EXHAUSTED: quota"},
		{"Google 503", "google", model.DeliveryRetry, "google: HTTP 503 UNAVAILABLE", "", causeServer, "UNAVAILABLE"},
		{"Google refused one event", "google", model.DeliveryDead, "google: events[0]: SHA256 encoded value is malformed.", "", causeRejected,
			"events[0]: SHA256 encoded value is malformed."},
		{"Google's credential", "google", model.DeliveryRetry, "google oauth: invalid_grant", "", causeAuth, ""},
		{"Google holds", "google", model.DeliveryPaused, "the Google Ads account has not accepted the customer data terms", "", causeHeld,
			"the Google Ads account has not accepted the customer data terms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := failureOf(c.dest, c.state, c.lastError, []byte(c.answer))
			if f.Cause != c.cause || f.Said != c.said {
				t.Errorf("got %q, %q; want %q, %q", f.Cause, f.Said, c.cause, c.said)
			}
		})
	}
}
