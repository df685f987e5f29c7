package capi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// MaxBatch is the most events Meta accepts in one request.
const MaxBatch = 1000

// Defaults of ClientOptions.
const (
	DefaultBaseURL    = "https://graph.facebook.com"
	DefaultAPIVersion = "v24.0"
	DefaultTimeout    = 30 * time.Second
)

// maxResponse bounds how much of an answer is read.
const maxResponse = 1 << 20

// ErrInvalidRequest is wrapped by errors for requests Send refuses to make
// (no pixel, no token, no events, more than MaxBatch).
var ErrInvalidRequest = errors.New("invalid request")

// ClientOptions configure a Client. Zero values mean the defaults.
type ClientOptions struct {
	BaseURL    string // default DefaultBaseURL
	APIVersion string // default DefaultAPIVersion, e.g. "v24.0"
	HTTP       *http.Client
	// Timeout bounds each Send, on top of the context; default
	// DefaultTimeout, negative for none.
	Timeout time.Duration
	// Now is the clock used for Retry-After dates; default time.Now.
	Now func() time.Time
}

// Client sends events to the Conversions API. It is safe for concurrent
// use.
type Client struct {
	base    string
	version string
	http    *http.Client
	timeout time.Duration
	now     func() time.Time
}

// NewClient returns a Client with opts.
func NewClient(opts ClientOptions) *Client {
	c := &Client{
		base:    strings.TrimRight(opts.BaseURL, "/"),
		version: strings.Trim(opts.APIVersion, "/"),
		http:    opts.HTTP,
		timeout: opts.Timeout,
		now:     opts.Now,
	}
	if c.base == "" {
		c.base = DefaultBaseURL
	}
	if c.version == "" {
		c.version = DefaultAPIVersion
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

// SendRequest is one request to a pixel's events edge.
type SendRequest struct {
	PixelID     string
	AccessToken string
	// TestEventCode sends the events to the Test Events tab.
	TestEventCode string
	// Events are server events as JSON, at most MaxBatch.
	Events []json.RawMessage
}

// Response is Meta's answer to an accepted request.
type Response struct {
	EventsReceived int               `json:"events_received"`
	Messages       []json.RawMessage `json:"messages"`
	FBTraceID      string            `json:"fbtrace_id"`
	// Raw is the answer's body as received.
	Raw json.RawMessage `json:"-"`
}

// sendBody is the JSON body of a request. The access token travels in it,
// not in the query string, because proxies and access logs record URLs.
// appendBody writes it; TestAppendBody holds it to json.Marshal of this.
type sendBody struct {
	Data          []json.RawMessage `json:"data"`
	TestEventCode string            `json:"test_event_code,omitempty"`
	AccessToken   string            `json:"access_token"`
}

// appendBody appends the request's body to dst: the bytes of
// json.Marshal(sendBody{...}), and its error, without compacting again
// each payload that is already as json.Marshal writes it (isMarshaled: all
// that we store are), which was the most of its work.
func appendBody(dst []byte, req SendRequest) ([]byte, error) {
	n := len(`{"data":[],"test_event_code":"","access_token":""}`) + len(req.TestEventCode) + len(req.AccessToken)
	for _, p := range req.Events {
		n += len(p) + 1
	}
	dst = slices.Grow(dst, n)
	dst = append(dst, `{"data":[`...)
	for i, p := range req.Events {
		if i > 0 {
			dst = append(dst, ',')
		}
		if isMarshaled(p) {
			dst = append(dst, p...)
			continue
		}
		b, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		dst = append(dst, b...)
	}
	dst = append(dst, ']')
	if req.TestEventCode != "" {
		dst = append(dst, `,"test_event_code":`...)
		dst = appendString(dst, req.TestEventCode)
	}
	dst = append(dst, `,"access_token":`...)
	dst = appendString(dst, req.AccessToken)
	return append(dst, '}'), nil
}

// appendString appends s as json.Marshal writes a string.
func appendString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always encodes
	return append(dst, b...)
}

// Send posts the events to {base}/{version}/{pixel}/events with the token as
// the access_token body parameter (the Graph API takes parameters in a POST
// body). An error answer is an *APIError; use Classify on any error. The
// token never appears in a returned error.
func (c *Client) Send(ctx context.Context, req SendRequest) (*Response, error) {
	switch {
	case req.PixelID == "" || strings.ContainsAny(req.PixelID, "/?#"):
		return nil, fmt.Errorf("capi send: pixel id %q: %w", req.PixelID, ErrInvalidRequest)
	case req.AccessToken == "":
		return nil, fmt.Errorf("capi send: no access token: %w", ErrInvalidRequest)
	case len(req.Events) == 0:
		return nil, fmt.Errorf("capi send: no events: %w", ErrInvalidRequest)
	case len(req.Events) > MaxBatch:
		return nil, fmt.Errorf("capi send: %d events, more than %d: %w", len(req.Events), MaxBatch, ErrInvalidRequest)
	}
	body, err := appendBody(nil, req)
	if err != nil {
		return nil, fmt.Errorf("capi send: encode: %v: %w", err, ErrInvalidRequest)
	}
	endpoint := c.base + "/" + c.version + "/" + url.PathEscape(req.PixelID) + "/events"
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("capi send to %s: %v: %w", endpoint, scrub(err, req.AccessToken), ErrInvalidRequest)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	resp, raw, err := c.roundTrip(hreq, endpoint, req.AccessToken)
	if err != nil {
		return nil, err
	}
	var r Response
	if err := json.Unmarshal(raw, &r); err != nil {
		// A 2xx that is not Meta's answer (a proxy page): try again later.
		return nil, &APIError{Status: resp.StatusCode, Message: "unreadable answer: " + snippet(raw), IsTransient: true}
	}
	r.Raw = raw
	return &r, nil
}

// roundTrip sends req and returns a 2xx answer with its body; a failure to
// get an answer is a *sendError naming endpoint without token, an error
// answer an *APIError.
func (c *Client) roundTrip(req *http.Request, endpoint, token string) (*http.Response, []byte, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		// *url.Error quotes the URL: keep only its cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, nil, &sendError{endpoint: endpoint, err: err, token: token}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, nil, &sendError{endpoint: endpoint, err: err, token: token}
	}
	if resp.StatusCode/100 != 2 {
		return nil, nil, c.apiError(resp, raw)
	}
	return resp, raw, nil
}

func (c *Client) apiError(resp *http.Response, raw []byte) *APIError {
	var env struct {
		Error *APIError `json:"error"`
	}
	e := &APIError{}
	if json.Unmarshal(raw, &env) == nil && env.Error != nil {
		e = env.Error
	} else {
		e.Message = snippet(raw)
	}
	e.Status = resp.StatusCode
	if e.FBTraceID == "" {
		e.FBTraceID = resp.Header.Get("X-Fb-Trace-Id")
	}
	e.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), c.now())
	return e
}

// sendError is a failure to get an answer. Its message names the endpoint
// without the token.
type sendError struct {
	endpoint string
	err      error
	token    string
}

// Error names the endpoint and the cause, never the token.
func (e *sendError) Error() string {
	return "capi send to " + e.endpoint + ": " + scrub(e.err, e.token).Error()
}

// Unwrap returns the cause, for Classify.
func (e *sendError) Unwrap() error { return e.err }

// scrub removes the access token from an error's text, should any layer
// ever echo it.
func scrub(err error, token string) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	s := err.Error()
	if token != "" {
		s = strings.ReplaceAll(s, token, "REDACTED")
		s = strings.ReplaceAll(s, url.QueryEscape(token), "REDACTED")
	}
	return errors.New(s)
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
