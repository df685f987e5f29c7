package capi

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/capi/graphtest"
)

func TestClientPixel(t *testing.T) {
	g := graphtest.New(t)
	c := NewClient(ClientOptions{BaseURL: g.URL, APIVersion: "v25.0", HTTP: g.Client()})
	ctx := context.Background()
	p, err := c.Pixel(ctx, "123456", graphtest.Token)
	if err != nil || p.ID != "123456" || p.Name != graphtest.PixelName("123456") {
		t.Fatalf("Pixel with a valid token: %+v %v", p, err)
	}
	_, err = c.Pixel(ctx, "123456", "expired-token-value")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 190 || Classify(err) != ClassAuth {
		t.Errorf("Pixel with a bad token: %v, want code 190 classed auth", err)
	}
	if strings.Contains(err.Error(), "expired-token-value") {
		t.Errorf("the error shows the token: %v", err)
	}
	g.FailNext(1, graphtest.FaultServerError)
	if _, err := c.Pixel(ctx, "123456", graphtest.Token); Classify(err) != ClassTransient {
		t.Errorf("Pixel on a 500: %v, want transient", err)
	}
	if len(g.Events()) != 0 {
		t.Errorf("reading a pixel sent events: %v", g.Events())
	}
}
