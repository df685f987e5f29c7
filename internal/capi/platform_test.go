package capi

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
)

// TestMetaCheck: what Meta says of a stored row before it is sent, as
// deliver.PlatformHandler reads it: nil for a good event, ErrTooOld for
// one older than Meta takes (the row expires), and otherwise a failure
// whose response names the rule (the row is dead).
func TestMetaCheck(t *testing.T) {
	site := testSite()
	ev, err := BuildLeadEvent(BuildParams{Site: site, Lead: testLead()})
	if err != nil {
		t.Fatal(err)
	}
	row := func(edit func(e *Event)) *model.Delivery {
		e := ev
		if edit != nil {
			edit(&e)
		}
		b, _ := json.Marshal(e)
		return &model.Delivery{Payload: b}
	}
	m := NewMeta(nil, platform.Deps{})
	now := submitted.Add(time.Hour)
	if err := m.Check(site, row(nil), now); err != nil {
		t.Errorf("good event: %v", err)
	}
	old := m.Check(site, row(nil), submitted.Add(8*24*time.Hour))
	if !errors.Is(old, platform.ErrTooOld) || !strings.Contains(old.Error(), RuleEventTimeOld) {
		t.Errorf("old event: %v", old)
	}
	for name, d := range map[string]*model.Delivery{
		RuleUserAgent: row(func(e *Event) { e.UserData.ClientUserAgent = "" }),
		"payload":     {Payload: []byte(`[1]`)},
	} {
		err := m.Check(site, d, now)
		var rule struct {
			Precheck struct{ Rule string } `json:"precheck"`
		}
		json.Unmarshal(platform.Classify(err).Response, &rule)
		if err == nil || errors.Is(err, platform.ErrTooOld) || rule.Precheck.Rule != name {
			t.Errorf("%s: %v, response %s", name, err, platform.Classify(err).Response)
		}
	}
}

// TestMetaModeAndCredentials: a site without a mode is in dry run, and a
// new access token is new credentials.
func TestMetaModeAndCredentials(t *testing.T) {
	m := NewMeta(nil, platform.Deps{})
	site := testSite()
	if got := m.Mode(site); got != model.ModeDryRun {
		t.Errorf("mode %q", got)
	}
	site.Settings.Meta.Mode = model.ModeLive
	if got := m.Mode(site); got != model.ModeLive {
		t.Errorf("mode %q", got)
	}
	other := *site
	if m.NewCredentials(site, &other) {
		t.Error("the same token is new credentials")
	}
	other.AccessToken = "fresh"
	if !m.NewCredentials(site, &other) {
		t.Error("a new token is not new credentials")
	}
}
