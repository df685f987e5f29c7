package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
)

// TestRetentionClick: past ClickDays a lead loses its click identity (IP,
// user agent, fbc, fbp, its platform cookies) and keeps its device family,
// its click id, page, contact details and verdict; a recent lead keeps it
// all; a second run has nothing to do; erasure then takes the device
// family too.
func TestRetentionClick(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	in := realLead()
	in.Cookies = map[string]string{"_ttp": "ttp-click-cookie"}
	in.FBP = "fb.1.1700000000000.123456789"
	in.FBC = "fb.1.1700000000000.IwAR_click"
	in.FBClid = "IwAR_click"
	in.GClid = "Cj0-gclid-click"
	old := f.submit(in)
	if old.ClientIP == "" || old.UserAgent == "" || old.FBC == "" || old.FBP == "" || old.SourceDetail["cookie._ttp"] == "" {
		t.Fatalf("the fixture lead lacks a click identity: the test would prove nothing: %+v", old)
	}
	f.clk.Add(91 * 24 * time.Hour)
	fresh := f.submit(in)

	if res, err := f.svc.Retain(ctx, app.RetentionPolicy{}); err != nil || res.Clicks != 0 {
		t.Fatalf("keep forever cleared %+v %v", res, err)
	}
	res, err := f.svc.Retain(ctx, app.RetentionPolicy{ClickDays: 90})
	if err != nil {
		t.Fatal(err)
	}
	if res.Clicks != 1 {
		t.Errorf("cleared the click of %d leads, want 1", res.Clicks)
	}
	l, err := f.db.LeadByID(ctx, old.ID)
	if err != nil {
		t.Fatal(err)
	}
	if l.ClientIP != "" || l.UserAgent != "" || l.FBC != "" || l.FBP != "" || l.SourceDetail["cookie._ttp"] != "" {
		t.Errorf("click identity kept past ClickDays: %+v", l)
	}
	if got := l.SourceDetail[model.DetailDevice]; got != "iPhone" {
		t.Errorf("device family %q, want iPhone", got)
	}
	if l.FBClid != old.FBClid || l.GClid != old.GClid || l.PageURL != old.PageURL || l.Email != old.Email ||
		l.Phone != old.Phone || l.Message != old.Message || l.Verdict != old.Verdict || l.Score != old.Score {
		t.Errorf("more than the click identity went:\n%+v\nwas\n%+v", l, old)
	}
	if l, _ := f.db.LeadByID(ctx, fresh.ID); l.UserAgent != fresh.UserAgent || l.ClientIP != fresh.ClientIP ||
		l.FBC != fresh.FBC || l.FBP != fresh.FBP || l.SourceDetail["cookie._ttp"] == "" || l.SourceDetail[model.DetailDevice] != "" {
		t.Errorf("the recent lead lost its click identity: %+v", l)
	}
	if res, err := f.svc.Retain(ctx, app.RetentionPolicy{ClickDays: 90}); err != nil || res.Total() != 0 {
		t.Errorf("second run: %+v %v", res, err)
	}

	if _, err := f.svc.Forget(ctx, app.ForgetInput{Email: in.Email}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []model.LeadID{old.ID, fresh.ID} {
		text := f.leadText(id)
		for _, p := range []string{"iPhone", "85.105.1.2", "ttp-click-cookie", "fb.1.1700000000000"} {
			if strings.Contains(text, p) {
				t.Errorf("%q is still stored for lead %s after erasure", p, id)
			}
		}
	}
}
