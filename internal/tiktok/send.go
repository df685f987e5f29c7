package tiktok

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

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
)

// Answer is TikTok's answer to a request.
type Answer struct {
	Code      int             `json:"code"`
	Message   string          `json:"message"`
	RequestID string          `json:"request_id"`
	Data      json.RawMessage `json:"data,omitempty"`
}

// APIError is an answer of TikTok's other than success, or an HTTP error.
type APIError struct {
	HTTPStatus int
	Code       int
	Message    string
	RequestID  string
	RetryAfter time.Duration
	// Body is the answer as it came, kept on the rows.
	Body json.RawMessage
}

func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("tiktok:")
	if e.Code != 0 {
		fmt.Fprintf(&b, " code %d", e.Code)
	} else {
		fmt.Fprintf(&b, " HTTP %d", e.HTTPStatus)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.RequestID != "" {
		b.WriteString(" [request " + e.RequestID + "]")
	}
	return b.String()
}

// kind is what to do about a refusal.
type kind int

const (
	kindTransient kind = iota
	kindThrottled
	kindInvalid // the data: halve until the bad event stands alone
	kindPaused
	kindRefused // the request itself, no split mends it
)

// TikTok's answer codes (from the error code list of TikTok's Business API
// and its SDKs), by what they mean for a batch of events.
var (
	// codesPaused need the owner: the token is empty, invalid, expired,
	// revoked or without permission for the pixel or event set, or the
	// pixel, event set or ad account is unknown or closed.
	codesPaused = map[int]string{
		40001: "TikTok says the access token has no permission for this pixel or CRM event set: generate the token on that pixel's or event set's Settings tab in Events Manager and paste it in the site's TikTok settings",
		40003: "TikTok forbids this access token to send events: generate a new one in Events Manager and paste it in the site's TikTok settings",
		40007: "TikTok does not know the pixel code or CRM event set ID: check them against Events Manager in the site's TikTok settings",
		40102: "the TikTok access token has expired: generate a new one in Events Manager and paste it in the site's TikTok settings",
		40104: "the TikTok access token is missing: generate one in Events Manager and paste it in the site's TikTok settings",
		40105: "TikTok refused the access token (it is wrong or was revoked): generate a new one in Events Manager (the pixel's or event set's Settings tab) and paste it in the site's TikTok settings",
		40113: "TikTok forbids this app's access: generate a new access token in Events Manager and paste it in the site's TikTok settings",
		40114: "the TikTok ad account is closed or logged out: check it in TikTok Ads Manager, then resume",
		40118: "TikTok has not allowed this ad account to use the Events API: ask TikTok support, then resume",
		40125: "TikTok gives the access token no permission: generate a new one in Events Manager and paste it in the site's TikTok settings",
		40130: "the TikTok access token lacks the Events API scope: generate a new one in Events Manager and paste it in the site's TikTok settings",
		40300: "TikTok does not know the ad account of the pixel or event set: check them in Events Manager and the site's TikTok settings",
		40301: "the TikTok ad account's role does not allow sending events: check its permissions in TikTok Business Center, then resume",
	}
	// codesThrottled: too many requests.
	codesThrottled = map[int]bool{40100: true, 40132: true, 61000: true}
	// codesInvalid: the request's data is refused (invalid parameters,
	// identifiers not hashed, too many events): one bad event fails all.
	codesInvalid = map[int]bool{40000: true, 40002: true, 40061: true, 40062: true}
	// codesRefused: the request is wrong in a way no split mends (an API
	// version or route TikTok does not serve: this program's fault).
	codesRefused = map[int]bool{40006: true, 40051: true, 40400: true}
)

// classify says what to do about an error of post.
func classify(err error) kind {
	var ae *APIError
	if !errors.As(err, &ae) {
		return kindTransient // the network, a timeout, an unreadable answer
	}
	if ae.Code != 0 {
		switch {
		case codesPaused[ae.Code] != "":
			return kindPaused
		case codesThrottled[ae.Code]:
			return kindThrottled
		case codesInvalid[ae.Code]:
			return kindInvalid
		case codesRefused[ae.Code]:
			return kindRefused
		}
		// 50000 system error, 50002 timeout, 51xxx-53xxx internal
		// services, 60001 maintenance, and codes not listed: tried again.
		return kindTransient
	}
	switch {
	case ae.HTTPStatus == http.StatusTooManyRequests:
		return kindThrottled
	case ae.HTTPStatus == http.StatusUnauthorized || ae.HTTPStatus == http.StatusForbidden:
		return kindPaused
	}
	return kindTransient
}

// failure turns an error of post into the platform's failure.
func failure(err error) *platform.Failure {
	var ae *APIError
	errors.As(err, &ae)
	switch classify(err) {
	case kindPaused:
		words := "TikTok refused the access token: generate a new one in Events Manager and paste it in the site's TikTok settings"
		if ae != nil && codesPaused[ae.Code] != "" {
			words = codesPaused[ae.Code]
		}
		return &platform.Failure{Class: platform.Paused, Words: words, Err: err}
	case kindThrottled:
		f := &platform.Failure{Class: platform.Throttled, Words: "TikTok asked to slow down", Err: err}
		if ae != nil {
			f.RetryAfter = ae.RetryAfter
		}
		return f
	case kindRefused, kindInvalid:
		return &platform.Failure{Class: platform.Refused, Words: "TikTok refused the request", Err: err}
	}
	return &platform.Failure{Class: platform.Transient, Words: "TikTok could not be reached or failed", Err: err}
}

// post sends one request and returns TikTok's answer, or an error: an
// *APIError for an answer other than success.
func (p *Platform) post(ctx context.Context, accessToken string, req *Request) (*Answer, json.RawMessage, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, nil, fmt.Errorf("tiktok: request: %w", err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, p.base+TrackPath, bytes.NewReader(body))
	if err != nil {
		return nil, nil, fmt.Errorf("tiktok: request: %w", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Access-Token", accessToken)
	resp, err := p.http.Do(hr)
	if err != nil {
		return nil, nil, fmt.Errorf("tiktok: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, nil, fmt.Errorf("tiktok: read answer: %w", err)
	}
	var a Answer
	jsonErr := json.Unmarshal(raw, &a)
	if !json.Valid(raw) {
		raw = nil
	}
	if resp.StatusCode != http.StatusOK || jsonErr != nil || a.Code != 0 {
		ae := &APIError{HTTPStatus: resp.StatusCode, Body: raw, RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
		if jsonErr == nil {
			ae.Code, ae.Message, ae.RequestID = a.Code, a.Message, a.RequestID
		}
		if ae.Code == 0 && ae.Message == "" {
			ae.Message = http.StatusText(resp.StatusCode)
			if resp.StatusCode == http.StatusOK {
				ae.Message = "an answer that is not TikTok's JSON"
			}
		}
		return nil, raw, ae
	}
	return &a, raw, nil
}

// retryAfter reads a Retry-After header in seconds or as a date.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// Send sends one site's rows, a request per account (the handler hands it
// one account's rows), and says what became of each. TikTok fails a
// request whole for one bad event and names none, so a refused request is
// halved and each half sent again until the bad events stand alone: those
// are dead with TikTok's words, the others go. In dry_run nothing is sent
// and every row is accepted in mode dry_run; in test mode every request
// carries the site's test event code.
func (p *Platform) Send(ctx context.Context, site *model.Site, rows []*model.Delivery) ([]platform.Outcome, error) {
	out := make([]platform.Outcome, len(rows))
	s, _, err := settings(site)
	if err != nil {
		return out, &platform.Failure{Class: platform.Paused, Words: "the site's TikTok settings cannot be read: correct them", Err: err}
	}
	mode := s.mode()
	if mode == model.ModeDryRun {
		for i := range out {
			out[i] = platform.Outcome{Accepted: true, Mode: model.ModeDryRun, Response: json.RawMessage(`{"dry_run":true}`)}
		}
		return out, nil
	}
	tok := token(site)
	if tok == "" {
		return out, &platform.Failure{Class: platform.Paused, Words: "the site has no TikTok access token: generate one in Events Manager and paste it in the site's TikTok settings"}
	}
	if mode == model.ModeTest && s.TestEventCode == "" {
		// Sent without the code, test events would count as real ones.
		return out, &platform.Failure{Class: platform.Paused, Words: "the site's TikTok settings are in test mode without a test event code: give the code from Events Manager's Test events tab, or choose live"}
	}
	var order []string
	byAccount := map[string][]int{}
	for i, d := range rows {
		if !json.Valid(d.Payload) {
			// It would spoil its whole request, and no retry mends it.
			out[i] = platform.Outcome{Err: errors.New("the stored TikTok event is not JSON; it was not sent")}
			continue
		}
		if _, ok := byAccount[d.PixelID]; !ok {
			order = append(order, d.PixelID)
		}
		byAccount[d.PixelID] = append(byAccount[d.PixelID], i)
	}
	for _, account := range order {
		source, id := parseAccount(account)
		base := Request{EventSource: source, EventSourceID: id}
		if mode == model.ModeTest {
			base.TestEventCode = s.TestEventCode
		}
		if err := p.sendSplit(ctx, tok, base, rows, byAccount[account], out, mode); err != nil {
			return out, failure(err)
		}
	}
	return out, nil
}

// sendSplit sends rows idx as one request; a refusal of their data is
// halved down to single events, each refused alone given its outcome. A
// failure that is not about the data stops it and is returned; the rows
// not yet accepted keep an empty outcome.
func (p *Platform) sendSplit(ctx context.Context, tok string, base Request, rows []*model.Delivery, idx []int, out []platform.Outcome, mode string) error {
	req := base
	req.Data = make([]json.RawMessage, len(idx))
	for k, i := range idx {
		req.Data[k] = rows[i].Payload
	}
	_, raw, err := p.post(ctx, tok, &req)
	if err == nil {
		for _, i := range idx {
			out[i] = platform.Outcome{Accepted: true, Mode: mode, Response: raw}
		}
		return nil
	}
	if classify(err) != kindInvalid {
		return err
	}
	if len(idx) == 1 {
		out[idx[0]] = platform.Outcome{Err: fmt.Errorf("TikTok refused the event: %w", err), Response: raw}
		return nil
	}
	p.log.DebugContext(ctx, "refused batch halved", "events", len(idx), "err", err)
	mid := len(idx) / 2
	if err := p.sendSplit(ctx, tok, base, rows, idx[:mid], out, mode); err != nil {
		return err
	}
	return p.sendSplit(ctx, tok, base, rows, idx[mid:], out, mode)
}

// Redact returns the payload without what TikTok takes in clear: the click
// id, the _ttp cookie, the IP and user agent, and a ttclid in the page's
// or referrer's query. The hashes stay.
func (p *Platform) Redact(payload json.RawMessage) json.RawMessage {
	var e map[string]any
	if err := json.Unmarshal(payload, &e); err != nil || e == nil {
		return json.RawMessage(`{}`)
	}
	if u, ok := e["user"].(map[string]any); ok {
		for _, k := range []string{"ttclid", "ttp", "ip", "user_agent"} {
			delete(u, k)
		}
	}
	if pg, ok := e["page"].(map[string]any); ok {
		for _, k := range []string{"url", "referrer"} {
			if s, ok := pg[k].(string); ok {
				pg[k] = withoutClickID(s)
			}
		}
	}
	b, err := json.Marshal(e)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

// Shrink keeps what the owner's view of a finished TikTok event needs: its
// name, time, value and currency, its lead's event source, and the names
// of the user keys it carried (match_keys), not their values. A payload
// that is not an event becomes {}.
func (p *Platform) Shrink(payload json.RawMessage) json.RawMessage {
	var e struct {
		Event
		MatchKeys []string `json:"match_keys"`
	}
	if json.Unmarshal(payload, &e) != nil || e.Event.Event == "" {
		return json.RawMessage(`{}`)
	}
	kept := map[string]any{"event": e.Event.Event, "event_time": e.EventTime}
	if e.Properties != nil && (e.Properties.Value != nil || e.Properties.Currency != "") {
		kept["properties"] = e.Properties
	}
	if e.Lead != nil && e.Lead.LeadEventSource != "" {
		kept["lead"] = map[string]string{"lead_event_source": e.Lead.LeadEventSource}
	}
	keys := e.MatchKeys
	for k, v := range map[string]string{"email": e.User.Email, "phone": e.User.Phone, "external_id": e.User.ExternalID,
		"ttclid": e.User.TTClid, "ttp": e.User.TTP, "ip": e.User.IP, "user_agent": e.User.UserAgent} {
		if v != "" {
			keys = append(keys, k)
		}
	}
	return platform.Shrunk(kept, keys)
}

// withoutClickID drops the ttclid parameter from a URL's query.
func withoutClickID(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	q := u.Query()
	if !q.Has("ttclid") {
		return raw
	}
	q.Del("ttclid")
	u.RawQuery = q.Encode()
	return u.String()
}

// SendTest sends a made-up lead event with the site's test event code, to
// the pixel (or the CRM event set when the site has no pixel): it shows in
// Events Manager's Test events tab and counts nowhere else.
func (p *Platform) SendTest(ctx context.Context, site *model.Site) (*platform.TestResult, error) {
	s, ok, err := settings(site)
	if err != nil {
		return nil, fmt.Errorf("tiktok: %w", err)
	}
	if !ok || (s.PixelCode == "" && s.CRMEventSetID == "") {
		return nil, errors.New("tiktok: give the pixel code or the CRM event set ID first")
	}
	if s.TestEventCode == "" {
		return nil, errors.New("tiktok: give the test event code from Events Manager's Test events tab first")
	}
	tok := token(site)
	if tok == "" {
		return nil, errors.New("tiktok: give the access token first")
	}
	now := p.now()
	e := Event{Event: s.leadEvent(), EventTime: now.Unix(), EventID: "cleanads-test-" + strconv.FormatInt(now.UnixNano(), 36),
		User: User{Email: hashEmail("test@example.com")}}
	req := Request{EventSource: SourceWeb, EventSourceID: s.PixelCode, TestEventCode: s.TestEventCode}
	if s.PixelCode == "" {
		req.EventSource, req.EventSourceID = SourceCRM, s.CRMEventSetID
		e.Lead = &Lead{LeadEventSource: LeadEventSource}
	} else if len(site.Settings.Origins) > 0 {
		e.Page = &Page{URL: site.Settings.Origins[0] + "/"}
	}
	payload, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("tiktok: %w", err)
	}
	req.Data = []json.RawMessage{payload}
	account := req.EventSourceID
	if req.EventSource == SourceCRM {
		account = crmAccount(account)
	}
	res := &platform.TestResult{Account: account, Code: s.TestEventCode, Event: payload}
	_, raw, err := p.post(ctx, tok, &req)
	res.Answer = raw
	if err != nil {
		return res, failure(err)
	}
	return res, nil
}
