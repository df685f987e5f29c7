package google

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// Defaults of ClientOptions.
const (
	DefaultBaseURL = "https://datamanager.googleapis.com"
	DefaultTimeout = 30 * time.Second
)

// Scope is the OAuth scope of the Data Manager API.
const Scope = "https://www.googleapis.com/auth/datamanager"

const maxResponse = 1 << 20

// ClientOptions configure a Client. Zero values mean the defaults.
type ClientOptions struct {
	BaseURL string // default DefaultBaseURL
	HTTP    *http.Client
	// Timeout bounds each call, on top of the context; negative for none.
	Timeout time.Duration
	Now     func() time.Time
}

// Client calls the Data Manager API. It holds no credentials: each call
// takes the token source of the site it is for. It is safe for concurrent
// use.
type Client struct {
	base    string
	http    *http.Client
	timeout time.Duration
	now     func() time.Time
}

// NewClient returns a Client with opts.
func NewClient(opts ClientOptions) *Client {
	c := &Client{base: strings.TrimRight(opts.BaseURL, "/"), http: opts.HTTP, timeout: opts.Timeout, now: opts.Now}
	if c.base == "" {
		c.base = DefaultBaseURL
	}
	if c.http == nil {
		c.http = &http.Client{}
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

// IngestResponse is Google's answer to an accepted events:ingest: the id
// to ask requestStatus:retrieve about (none for validateOnly).
type IngestResponse struct {
	RequestID string `json:"requestId"`
	// Raw is the answer as received.
	Raw json.RawMessage `json:"-"`
}

// Ingest posts the request to /v1/events:ingest with a bearer token from
// ts. Google accepts or refuses a request whole: an error answer is an
// *APIError, a refused credential an *AuthError; use Classify on any.
func (c *Client) Ingest(ctx context.Context, ts oauth2.TokenSource, req *Request) (*IngestResponse, error) {
	switch {
	case req == nil || len(req.Events) == 0:
		return nil, fmt.Errorf("google ingest: no events: %w", ErrInvalidRequest)
	case len(req.Events) > MaxBatch:
		return nil, fmt.Errorf("google ingest: %d events, more than %d: %w", len(req.Events), MaxBatch, ErrInvalidRequest)
	case len(req.Destinations) == 0:
		return nil, fmt.Errorf("google ingest: no destinations: %w", ErrInvalidRequest)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("google ingest: encode: %v: %w", err, ErrInvalidRequest)
	}
	raw, err := c.do(ctx, ts, http.MethodPost, c.base+"/v1/events:ingest", body)
	if err != nil {
		return nil, err
	}
	r := IngestResponse{Raw: raw}
	if err := decode(raw, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Request statuses of requestStatus:retrieve.
const (
	StatusUnknown        = "REQUEST_STATUS_UNKNOWN"
	StatusSuccess        = "SUCCESS"
	StatusProcessing     = "PROCESSING"
	StatusFailed         = "FAILED"
	StatusPartialSuccess = "PARTIAL_SUCCESS"
)

// StatusResponse is requestStatus:retrieve's answer: one result per
// destination of the request.
type StatusResponse struct {
	PerDestination []DestinationStatus `json:"requestStatusPerDestination"`
	Raw            json.RawMessage     `json:"-"`
}

// DestinationStatus is how Google processed a request's events for one
// destination.
type DestinationStatus struct {
	Destination   Destination `json:"destination"`
	RequestStatus string      `json:"requestStatus"`
	ErrorInfo     *struct {
		ErrorCounts []ReasonCount `json:"errorCounts"`
	} `json:"errorInfo,omitempty"`
	WarningInfo *struct {
		WarningCounts []ReasonCount `json:"warningCounts"`
	} `json:"warningInfo,omitempty"`
	EventsIngestionStatus *struct {
		RecordCount json.Number `json:"recordCount"`
	} `json:"eventsIngestionStatus,omitempty"`
}

// ReasonCount is how many records met one reason.
type ReasonCount struct {
	RecordCount json.Number `json:"recordCount"`
	Reason      string      `json:"reason"`
}

// Done tells whether Google has finished with the request for every
// destination.
func (s *StatusResponse) Done() bool {
	if len(s.PerDestination) == 0 {
		return false
	}
	for _, d := range s.PerDestination {
		if d.RequestStatus == StatusProcessing || d.RequestStatus == StatusUnknown || d.RequestStatus == "" {
			return false
		}
	}
	return true
}

// Status asks requestStatus:retrieve how Google processed a request.
func (c *Client) Status(ctx context.Context, ts oauth2.TokenSource, requestID string) (*StatusResponse, error) {
	if requestID == "" {
		return nil, fmt.Errorf("google status: no request id: %w", ErrInvalidRequest)
	}
	raw, err := c.do(ctx, ts, http.MethodGet, c.base+"/v1/requestStatus:retrieve?requestId="+url.QueryEscape(requestID), nil)
	if err != nil {
		return nil, err
	}
	r := StatusResponse{Raw: raw}
	if err := decode(raw, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// invalidator is a token source that can drop a token Google refused
// (Tokens' sources are).
type invalidator interface{ Invalidate(accessToken string) }

// do makes one call of the API. An access token Google refuses (401
// UNAUTHENTICATED: it expired early or was revoked before its time while
// the grant behind it still holds) is dropped, a new one is fetched from
// the grant and the call is made once more, so that only a refused grant
// (the token endpoint's invalid_grant, invalid_client...) or a new token
// refused again pauses the site. A source that cannot drop its token gets
// no second try: it would hand out the same token.
func (c *Client) do(ctx context.Context, ts oauth2.TokenSource, method, endpoint string, body []byte) ([]byte, error) {
	if ts == nil {
		return nil, fmt.Errorf("google: no credentials: %w", ErrInvalidRequest)
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	for try := 0; ; try++ {
		tok, err := ts.Token()
		if err != nil {
			return nil, tokenError(err)
		}
		raw, err := c.call(ctx, tok, method, endpoint, body)
		var ae *APIError
		inv, canDrop := ts.(invalidator)
		if !canDrop || !errors.As(err, &ae) || !ae.refusedToken() {
			return raw, err
		}
		// Dropped either way: a token refused twice, new as it was, is
		// not used a third time either.
		inv.Invalidate(tok.AccessToken)
		if try > 0 {
			return nil, err
		}
	}
}

// call makes one HTTP request with tok.
func (c *Client) call(ctx context.Context, tok *oauth2.Token, method, endpoint string, body []byte) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hreq, err := http.NewRequestWithContext(ctx, method, endpoint, rd)
	if err != nil {
		return nil, fmt.Errorf("google %s: %v: %w", endpoint, err, ErrInvalidRequest)
	}
	if body != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	hreq.Header.Set("Accept", "application/json")
	tok.SetAuthHeader(hreq)
	resp, err := c.http.Do(hreq)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("google %s: %w", endpoint, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, fmt.Errorf("google %s: %w", endpoint, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, c.apiError(resp, raw)
	}
	return raw, nil
}

// apiError reads Google's error envelope, a google.rpc.Status.
func (c *Client) apiError(resp *http.Response, raw []byte) *APIError {
	var env struct {
		Error *struct {
			Code    int               `json:"code"`
			Message string            `json:"message"`
			Status  string            `json:"status"`
			Details []json.RawMessage `json:"details"`
		} `json:"error"`
	}
	e := &APIError{HTTPStatus: resp.StatusCode}
	if json.Unmarshal(raw, &env) == nil && env.Error != nil {
		e.Code, e.Message, e.Status = env.Error.Code, env.Error.Message, env.Error.Status
		for _, d := range env.Error.Details {
			var det struct {
				Type            string           `json:"@type"`
				Reason          string           `json:"reason"`
				FieldViolations []FieldViolation `json:"fieldViolations"`
				RequestID       string           `json:"requestId"`
				RetryDelay      string           `json:"retryDelay"`
			}
			if json.Unmarshal(d, &det) != nil {
				continue
			}
			switch {
			case strings.HasSuffix(det.Type, "google.rpc.ErrorInfo"):
				if det.Reason != "" {
					e.Reasons = append(e.Reasons, det.Reason)
				}
			case strings.HasSuffix(det.Type, "google.rpc.BadRequest"):
				e.Violations = append(e.Violations, det.FieldViolations...)
			case strings.HasSuffix(det.Type, "google.rpc.RequestInfo"):
				e.RequestID = det.RequestID
			case strings.HasSuffix(det.Type, "google.rpc.RetryInfo"):
				if d, err := time.ParseDuration(det.RetryDelay); err == nil && d > 0 {
					e.RetryAfter = d
				}
			}
		}
	} else {
		e.Message = snippet(raw)
	}
	if h := resp.Header.Get("Retry-After"); h != "" && e.RetryAfter == 0 {
		if n, err := strconv.Atoi(h); err == nil && n > 0 {
			e.RetryAfter = time.Duration(n) * time.Second
		} else if t, err := http.ParseTime(h); err == nil && t.After(c.now()) {
			e.RetryAfter = t.Sub(c.now())
		}
	}
	return e
}

// decode reads a 2xx answer; one that is not Google's (a proxy's page) is
// an UNAVAILABLE error: try again later.
func decode(raw []byte, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return &APIError{HTTPStatus: http.StatusOK, Status: "UNAVAILABLE", Message: "unreadable answer: " + snippet(raw)}
	}
	return nil
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
