package hubspot

import (
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

	"github.com/cleanads/cleanads/internal/platform"
)

// defaultRetryAfter is the wait after a 429 that names none: HubSpot's
// limits are per 10 seconds.
const defaultRetryAfter = 10 * time.Second

// errNotFound is HubSpot's 404 for an object: the deal or contact was
// deleted, or the id is not of this account.
var errNotFound = errors.New("not found at HubSpot")

// apiError is HubSpot's error body.
type apiError struct {
	Status        string `json:"status"`
	Message       string `json:"message"`
	Category      string `json:"category"`
	CorrelationID string `json:"correlationId"`
}

// object is a CRM object as API v3 answers it.
type object struct {
	ID           string                     `json:"id"`
	Properties   map[string]*string         `json:"properties"`
	Associations map[string]associationList `json:"associations"`
}

type associationList struct {
	Results []struct {
		ID string `json:"id"`
	} `json:"results"`
}

// prop returns a property's value, "" when absent or null.
func (o *object) prop(name string) string {
	if v := o.Properties[name]; v != nil {
		return strings.TrimSpace(*v)
	}
	return ""
}

// deal reads a deal with its associated contacts.
func (s *Source) deal(ctx context.Context, token, id string) (*object, error) {
	var o object
	path := "/crm/v3/objects/deals/" + url.PathEscape(id) +
		"?properties=amount,closedate,dealstage,deal_currency_code&associations=contacts"
	if err := s.get(ctx, token, path, &o); err != nil {
		return nil, err
	}
	return &o, nil
}

// contact reads a contact's e-mail, phones and the lead id property.
func (s *Source) contact(ctx context.Context, token, id, leadIDProperty string) (*object, error) {
	props := "email,phone,mobilephone"
	if leadIDProperty != "" {
		props += "," + leadIDProperty
	}
	var o object
	if err := s.get(ctx, token, "/crm/v3/objects/contacts/"+url.PathEscape(id)+"?properties="+props, &o); err != nil {
		return nil, err
	}
	return &o, nil
}

// get reads path of HubSpot's API into v, sorting HubSpot's refusals into
// the failure classes: 401 and 403 pause the site's HubSpot work until
// the owner mends the token, 429 and 5xx are retried, 404 is errNotFound.
func (s *Source) get(ctx context.Context, token, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	resp, err := s.http.Do(req)
	if err != nil {
		return &platform.Failure{Class: platform.Transient, Words: "HubSpot could not be reached", Err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return &platform.Failure{Class: platform.Transient, Words: "HubSpot's answer was cut off", Err: err}
	}
	if resp.StatusCode/100 == 2 {
		if err := json.Unmarshal(body, v); err != nil {
			return &platform.Failure{Class: platform.Transient, Words: "HubSpot's answer is not the JSON it documents", Err: err}
		}
		return nil
	}
	var e apiError
	_ = json.Unmarshal(body, &e)
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return &platform.Failure{Class: platform.Paused,
			Words: "HubSpot refused the access token: " + msg + ". Make a new one in the private app (Auth tab) and paste it in the site's HubSpot section"}
	case resp.StatusCode == http.StatusForbidden:
		return &platform.Failure{Class: platform.Paused,
			Words: "HubSpot refused the access token: " + msg + ". Give the private app the scopes crm.objects.deals.read and crm.objects.contacts.read"}
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%w: %s", errNotFound, msg)
	case resp.StatusCode == http.StatusTooManyRequests:
		wait := defaultRetryAfter
		if n, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); err == nil && n > 0 {
			wait = time.Duration(n) * time.Second
		}
		return &platform.Failure{Class: platform.Throttled, Words: "HubSpot asked to slow down: " + msg, RetryAfter: wait}
	case resp.StatusCode >= 500:
		return &platform.Failure{Class: platform.Transient, Words: fmt.Sprintf("HubSpot failed (%d): %s", resp.StatusCode, msg)}
	}
	return &platform.Failure{Class: platform.Refused, Words: fmt.Sprintf("HubSpot refused the read (%d): %s", resp.StatusCode, msg)}
}
