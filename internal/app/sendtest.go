package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nyaruka/phonenumbers"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
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
	if s.graph == nil {
		return nil, ErrNoGraph
	}
	site, err := s.db.SiteByID(ctx, siteID)
	if err != nil {
		return nil, err
	}
	m := site.Settings.Meta
	switch {
	case m.TestEventCode == "":
		return nil, model.Invalid("test_event_code", "the site has none: copy it from Events Manager's Test Events tab into meta.test_event_code")
	case m.PixelID == "":
		return nil, model.Invalid("pixel_id", "the site has no pixel id")
	case site.AccessToken == "":
		return nil, model.Invalid("access_token", "the site has no Meta access token")
	}
	now := s.now().UTC()
	lead := &model.Lead{
		ID:          model.LeadID(model.NewID("ld_test_", now)),
		SiteID:      site.ID,
		EventID:     "cleanads-test-" + model.NewUUID(),
		Email:       "cleanads.test@example.com",
		Phone:       samplePhone(site.Settings.Country),
		FirstName:   "Test",
		LastName:    "Lead",
		ExternalID:  "cleanads-test",
		PageURL:     samplePage(site),
		FBP:         fmt.Sprintf("fb.1.%d.%d", now.UnixMilli(), now.UnixNano()%1e10),
		ClientIP:    "203.0.113.7",
		UserAgent:   "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36",
		SubmittedAt: now,
	}
	ev, err := capi.BuildLeadEvent(capi.BuildParams{Site: site, Lead: lead, Kind: model.KindLead,
		CustomData: map[string]any{"lead_event_source": "CleanAds send-test"}})
	if err != nil {
		return nil, err
	}
	if err := capi.Precheck(&ev, now); err != nil {
		return nil, err
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("app: encode test event: %w", err)
	}
	res := &TestResult{PixelID: m.PixelID, TestEventCode: m.TestEventCode, Event: payload}
	resp, err := s.graph.Send(ctx, capi.SendRequest{PixelID: m.PixelID, AccessToken: site.AccessToken,
		TestEventCode: m.TestEventCode, Events: []json.RawMessage{payload}})
	if err != nil {
		return res, err
	}
	res.Answer = resp.Raw
	s.log.Info("test event sent", "site", string(site.ID), "events_received", resp.EventsReceived,
		"fbtrace_id", resp.FBTraceID)
	return res, nil
}

// samplePhone is a valid mobile number of the country, in national form,
// so it is normalised the way a visitor's would be.
func samplePhone(country string) string {
	if n := phonenumbers.GetExampleNumberForType(country, phonenumbers.MOBILE); n != nil {
		return phonenumbers.Format(n, phonenumbers.NATIONAL)
	}
	return "+1 202 555 0143"
}

func samplePage(site *model.Site) string {
	if len(site.Settings.Origins) > 0 {
		return site.Settings.Origins[0] + "/cleanads-test"
	}
	return "https://www.example.com/cleanads-test"
}
