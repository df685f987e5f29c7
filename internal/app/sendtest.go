package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
)

// TestResult is what SendTest sent and what Meta answered.
type TestResult struct {
	PixelID       string          `json:"pixel_id"`
	TestEventCode string          `json:"test_event_code"`
	Event         json.RawMessage `json:"event"`
	// Answer is Meta's answer as received, when it accepted the event.
	Answer json.RawMessage `json:"answer,omitempty"`
}

// ErrNoGraph is returned by SendTest when the service has no Graph client.
var ErrNoGraph = errors.New("app: no Meta client configured")

// SendTest sends one sample lead event for a site to Meta at once, with the
// site's test_event_code, so the advertiser sees it in Events Manager's Test
// Events tab before going live. The sample is realistic (an e-mail on
// example.com, a valid number for the site's country, a browser user
// agent, fbp) and hashed like every event; nothing is stored. An error
// from Meta comes back with the result (what was sent) and is an
// *capi.APIError.
func (s *Service) SendTest(ctx context.Context, siteID model.SiteID) (*TestResult, error) {
	res, err := s.SendTestTo(ctx, siteID, model.DestinationMeta)
	if errors.Is(err, capi.ErrNoSender) {
		return nil, ErrNoGraph
	}
	if res == nil {
		return nil, err
	}
	if err == nil {
		s.log.Info("test event sent", "site", string(siteID), "platform", model.DestinationMeta)
	}
	return &TestResult{PixelID: res.Account, TestEventCode: res.Code, Event: res.Event, Answer: res.Answer}, err
}

// SendTestTo sends one made-up lead event of a site to one platform at
// once, marked as a test as the platform allows (its SendTest), so the
// owner sees it arrive before going live. Nothing is stored.
func (s *Service) SendTestTo(ctx context.Context, siteID model.SiteID, name string) (*platform.TestResult, error) {
	site, err := s.db.SiteByID(ctx, siteID)
	if err != nil {
		return nil, err
	}
	p := s.platformOf(name)
	if p == nil || p.Name() != name {
		return nil, model.Invalid("platform", fmt.Sprintf("no platform %q", name))
	}
	return p.SendTest(ctx, site)
}

// Platforms are the ad platforms the service queues for, in the order
// the owner's pages show them.
func (s *Service) Platforms() []platform.Platform { return s.platforms }
