package google

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// Class says what to do about a failed request.
type Class int

// The classes of failure.
const (
	// ClassNone is no error.
	ClassNone Class = iota
	// ClassTransient is a network error, a timeout, RESOURCE_EXHAUSTED,
	// DEADLINE_EXCEEDED, INTERNAL, UNAVAILABLE, a 429 or a 5xx: retry
	// with backoff and jitter.
	ClassTransient
	// ClassInvalid is a request Google refused for its data
	// (INVALID_ARGUMENT and the like): the event at fault is isolated and
	// dead-lettered, the rest sent again.
	ClassInvalid
	// ClassPause is an authentication or account-setup error: the
	// credentials are refused, the account is not reachable, its terms
	// are not accepted or enhanced conversions for leads is off. Nothing
	// of the site can go until the owner acts: its rows wait.
	ClassPause
)

// String names the class.
func (c Class) String() string {
	switch c {
	case ClassNone:
		return "none"
	case ClassTransient:
		return "transient"
	case ClassInvalid:
		return "invalid"
	case ClassPause:
		return "pause"
	}
	return "class(" + strconv.Itoa(int(c)) + ")"
}

// ErrInvalidRequest is wrapped by errors for requests the client refuses
// to make (no events, too many, no account).
var ErrInvalidRequest = errors.New("invalid request")

// APIError is an error answer of the Data Manager API: a google.rpc.Status
// ({"error": {"code", "message", "status", "details"}}) with the ErrorInfo
// reasons and BadRequest field violations of its details.
type APIError struct {
	HTTPStatus int
	Code       int
	Status     string // the canonical code, e.g. INVALID_ARGUMENT
	Message    string
	// Reasons are the ErrorInfo reasons (Google's ErrorReason values).
	Reasons []string
	// Violations are the BadRequest field violations.
	Violations []FieldViolation
	// RequestID is RequestInfo's id, for Google's support.
	RequestID string
	// RetryAfter is the server's Retry-After or RetryInfo delay.
	RetryAfter time.Duration
}

// FieldViolation is one field Google found at fault.
type FieldViolation struct {
	Field       string `json:"field"`
	Description string `json:"description"`
	Reason      string `json:"reason"`
}

// Error gives the status, the reasons and the first violations.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "google: HTTP %d", e.HTTPStatus)
	if e.Status != "" {
		b.WriteString(" " + e.Status)
	}
	if len(e.Reasons) > 0 {
		b.WriteString(" (" + strings.Join(e.Reasons, ", ") + ")")
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	for i, v := range e.Violations {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(e.Violations)-3)
			break
		}
		fmt.Fprintf(&b, "; %s: %s", v.Field, v.Description)
		if v.Reason != "" {
			b.WriteString(" [" + v.Reason + "]")
		}
	}
	if e.RequestID != "" {
		b.WriteString(" [request " + e.RequestID + "]")
	}
	return b.String()
}

// pauseReasons are the ErrorInfo reasons that no retry or split can fix:
// the account, its terms or its conversion actions must change.
var pauseReasons = map[string]string{
	"PERMISSION_DENIED":               "Google refused access to the Google Ads account: check that the credentials' user or service account has access to the operating account (and the login account, when set)",
	"TERMS_AND_CONDITIONS_NOT_SIGNED": "the Google Ads account has not accepted the customer data terms: accept them in Google Ads (Goals > Conversions > Settings)",
	"DESTINATION_ACCOUNT_NOT_ENABLED_ENHANCED_CONVERSIONS_FOR_LEADS": "enhanced conversions for leads is off in the Google Ads account: turn it on (Goals > Conversions > Settings)",
	"DESTINATION_ACCOUNT_ENHANCED_CONVERSIONS_TERMS_NOT_SIGNED":      "the Google Ads account has not accepted the enhanced conversions terms: accept them in Google Ads",
	"INVALID_CONVERSION_ACTION_ID":                                   "Google does not know a configured conversion action id: check google.qualified_conversion_action and google.stages",
	"INVALID_CONVERSION_ACTION_TYPE":                                 "a configured conversion action is not an import (offline) conversion action: create one of type Import in Google Ads",
	"INVALID_DESTINATION":                                            "Google refused the destination: check google.operating_account_id and google.login_account_id",
	"NOT_FOUND":                                                      "Google does not know the configured account or conversion action",
	"DESTINATION_ACCOUNT_DATA_POLICY_PROHIBITS_ENHANCED_CONVERSIONS": "the Google Ads account's data policy does not allow enhanced conversions",
}

// Class classifies the error as Google's error guide describes.
func (e *APIError) Class() Class {
	for _, r := range e.Reasons {
		if _, ok := pauseReasons[r]; ok {
			return ClassPause
		}
	}
	switch e.Status {
	case "UNAUTHENTICATED", "PERMISSION_DENIED":
		return ClassPause
	case "RESOURCE_EXHAUSTED", "DEADLINE_EXCEEDED", "INTERNAL", "UNAVAILABLE", "ABORTED":
		return ClassTransient
	}
	for _, r := range e.Reasons {
		switch r {
		case "INTERNAL_ERROR", "DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED":
			return ClassTransient
		}
	}
	switch {
	case e.HTTPStatus == http.StatusTooManyRequests || e.HTTPStatus >= 500:
		return ClassTransient
	case e.HTTPStatus == http.StatusUnauthorized || e.HTTPStatus == http.StatusForbidden:
		return ClassPause
	case e.HTTPStatus >= 400:
		return ClassInvalid
	}
	return ClassTransient
}

// refusedToken tells whether Google refused the access token itself
// (401, UNAUTHENTICATED), which a new token from the same grant may mend,
// rather than the account's access (403, PERMISSION_DENIED), which it
// cannot.
func (e *APIError) refusedToken() bool {
	return e.Status == "UNAUTHENTICATED" || e.Status == "" && e.HTTPStatus == http.StatusUnauthorized
}

// PauseReason says in plain words what the owner must do about a pause.
func (e *APIError) PauseReason() string {
	for _, r := range e.Reasons {
		if why, ok := pauseReasons[r]; ok {
			return why
		}
	}
	if e.Status == "UNAUTHENTICATED" || e.HTTPStatus == http.StatusUnauthorized {
		return "Google refused a new access token made from the site's credentials (the token endpoint issued it; the Data Manager API did not take it): check that the Data Manager API is enabled for the Google Cloud project of the OAuth client or service account, or authorise CleanAds again"
	}
	return "Google refused access: " + e.Message
}

var eventIndex = regexp.MustCompile(`(?:^|\.)events\[(\d+)\]`)

// FaultIndexes returns the events the refusal's field violations name
// (events[N], in any path such as "events.events[3].user_data"), sorted
// and each once; nil when none names an event.
func (e *APIError) FaultIndexes() []int {
	seen := map[int]bool{}
	var out []int
	for _, v := range e.Violations {
		m := eventIndex.FindStringSubmatch(v.Field)
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err != nil || seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, n)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// ViolationOf returns Google's words about event i, or the error's message.
func (e *APIError) ViolationOf(i int) string {
	var parts []string
	for _, v := range e.Violations {
		m := eventIndex.FindStringSubmatch(v.Field)
		if m != nil && m[1] == strconv.Itoa(i) {
			s := v.Field + ": " + v.Description
			if v.Reason != "" {
				s += " [" + v.Reason + "]"
			}
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return e.Error()
	}
	return "google: " + strings.Join(parts, "; ")
}

// AuthError is a credential the token endpoint refused or could not use.
type AuthError struct {
	// Grant is true for invalid_grant: the refresh token was revoked or
	// expired, or the key was deleted; the owner must authorise again.
	Grant bool
	Err   error
}

func (e *AuthError) Error() string { return "google oauth: " + e.Err.Error() }

// Unwrap returns the cause.
func (e *AuthError) Unwrap() error { return e.Err }

// tokenError classifies a token source's failure: an answer of the token
// endpoint refusing the credential is an *AuthError, anything else
// (network, 5xx) is returned as it is, transient.
func tokenError(err error) error {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return err
	}
	code := re.ErrorCode
	if code == "" {
		var body struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(re.Body, &body) == nil {
			code = body.Error
		}
	}
	if re.Response != nil && re.Response.StatusCode >= 500 {
		return err
	}
	switch code {
	case "invalid_grant":
		return &AuthError{Grant: true, Err: fmt.Errorf("invalid_grant: %s", re.ErrorDescription)}
	case "invalid_client", "unauthorized_client", "invalid_scope", "access_denied":
		return &AuthError{Err: fmt.Errorf("%s: %s", code, re.ErrorDescription)}
	}
	if re.Response != nil && re.Response.StatusCode == http.StatusTooManyRequests {
		return err
	}
	return &AuthError{Err: fmt.Errorf("token endpoint refused the credential: %s %s", code, re.ErrorDescription)}
}

// Classify tells what to do about an error of Ingest or Status: an
// *APIError by its status and reasons; a refused credential pauses; a
// request the client refused to make is invalid; network errors, timeouts
// and anything unknown are transient, so nothing is dropped.
func Classify(err error) Class {
	if err == nil {
		return ClassNone
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Class()
	}
	var au *AuthError
	if errors.As(err, &au) {
		return ClassPause
	}
	if errors.Is(err, ErrInvalidRequest) {
		return ClassInvalid
	}
	return ClassTransient
}

// PauseReason says in plain words why the site's Google deliveries wait.
func PauseReason(err error) string {
	var au *AuthError
	if errors.As(err, &au) {
		if au.Grant {
			return "Google no longer accepts the site's authorisation (invalid_grant): the refresh token was revoked or expired, or the key deleted. Authorise CleanAds again and put the new credentials in the site's google block"
		}
		return "Google refused the site's OAuth client or key: " + au.Err.Error()
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.PauseReason()
	}
	return err.Error()
}

// RetryAfter returns the delay Google asked for with err, or zero.
func RetryAfter(err error) time.Duration {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.RetryAfter
	}
	return 0
}
