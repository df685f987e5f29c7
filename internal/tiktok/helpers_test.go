package tiktok_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/testkit"
	"github.com/cleanads/cleanads/internal/tiktok"
	"github.com/cleanads/cleanads/internal/tiktok/tiktoktest"
)

// at is when the tests' leads were submitted; the clocks start an hour
// later.
var at = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// tiktokSite is site "dent" with TikTok settings s and the stand-in's
// access token.
func tiktokSite(t testing.TB, s tiktok.Settings) *model.Site {
	t.Helper()
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return testkit.Site(func(site *model.Site) {
		site.Settings.Platforms = map[string]json.RawMessage{tiktok.Name: raw}
		site.Secrets = map[string]string{platform.SecretName(tiktok.Name, tiktok.SecretAccessToken): tiktoktest.AccessToken}
	})
}

// full are settings with a pixel, a CRM event set and two stages.
func full() tiktok.Settings {
	return tiktok.Settings{PixelCode: tiktoktest.PixelCode, CRMEventSetID: tiktoktest.CRMEventSetID,
		Stages: map[string]string{"won": "Purchase", "appointment": "Schedule"}}
}

// newPlatform is the TikTok platform talking to srv, its clock an hour
// after at.
func newPlatform(srv *tiktoktest.Server, clock *testkit.Clock) platform.Platform {
	srv.SetNow(clock.Now)
	return tiktok.New(platform.Deps{Endpoints: map[string]string{tiktok.Name: srv.URL}, Now: clock.Now})
}

// webLead is a website lead with everything TikTok takes.
func webLead(id model.LeadID) *model.Lead {
	return testkit.Lead(testkit.SiteID, id, at, func(l *model.Lead) {
		l.Email, l.Phone, l.ExternalID = " Ayse.Yilmaz@Example.COM ", "0532 412 87 19", "crm-77"
		l.PageURL, l.Referrer = testkit.Origin+"/implant?ttclid=E.C.P.secret", "https://www.tiktok.com/"
		l.ClientIP, l.UserAgent = "203.0.113.9", "Mozilla/5.0 (iPhone)"
	})
}

// build builds one of a lead's events and fails the test on an error.
func build(t testing.TB, p platform.Platform, in platform.Input) *platform.Event {
	t.Helper()
	ev, err := p.Build(context.Background(), in)
	if err != nil {
		t.Fatalf("Build %s: %v", in.Kind, err)
	}
	return ev
}

// row is the outbox row the app layer queues for ev.
func row(site *model.Site, l *model.Lead, kind string, ev *platform.Event) *model.Delivery {
	return &model.Delivery{ID: "dl_" + ev.ID, SiteID: site.ID, LeadID: l.ID, Destination: tiktok.Name, Kind: kind,
		EventName: ev.Name, EventID: ev.ID, PixelID: ev.Account, Payload: ev.Payload, State: model.DeliveryPending,
		NextAt: at, DeadlineAt: ev.Deadline, CreatedAt: at, UpdatedAt: at}
}

// decode reads a payload.
func decode(t testing.TB, raw json.RawMessage) tiktok.Event {
	t.Helper()
	var e tiktok.Event
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("payload %s: %v", raw, err)
	}
	return e
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func isSkip(err error) bool { return errors.Is(err, platform.ErrSkip) }
