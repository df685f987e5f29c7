package capi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Pixel is what the Graph API says about a pixel (dataset).
type Pixel struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Pixel reads a pixel's id and name with token (GET /{version}/{pixel}
// ?fields=id,name): a call that sends no event, to learn whether the token
// is valid and reaches the pixel. An error answer is an *APIError (Classify
// tells an invalid token, ClassAuth); the token never appears in an error.
func (c *Client) Pixel(ctx context.Context, pixelID, token string) (*Pixel, error) {
	switch {
	case pixelID == "" || strings.ContainsAny(pixelID, "/?#"):
		return nil, fmt.Errorf("capi pixel: pixel id %q: %w", pixelID, ErrInvalidRequest)
	case token == "":
		return nil, fmt.Errorf("capi pixel: no access token: %w", ErrInvalidRequest)
	}
	endpoint := c.base + "/" + c.version + "/" + url.PathEscape(pixelID)
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"?fields=id,name", nil)
	if err != nil {
		return nil, fmt.Errorf("capi pixel %s: %v: %w", endpoint, err, ErrInvalidRequest)
	}
	// In a header, not the query: proxies log URLs.
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	resp, raw, err := c.roundTrip(req, endpoint, token)
	if err != nil {
		return nil, err
	}
	var p Pixel
	if err := json.Unmarshal(raw, &p); err != nil || p.ID == "" {
		return nil, &APIError{Status: resp.StatusCode, Message: "unreadable answer: " + snippet(raw), IsTransient: true}
	}
	return &p, nil
}
