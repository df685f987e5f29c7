package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/cleanads/cleanads/internal/browsertest"
	"github.com/cleanads/cleanads/internal/model"
)

// TestAdminInBrowser drives the admin UI in headless Chromium the way the
// owner uses it: log in, find a lead, open it, mark it a real customer and
// see the qualified event in its story, add a stage, replay a dead letter,
// switch a site to test mode. Screenshots go to testoutput/.
func TestAdminInBrowser(t *testing.T) {
	ctx := browsertest.New(t)
	e := newAdminEnv(t)
	base := e.srv.URL
	do, text := browserSteps(t, ctx)

	browserLogIn(t, ctx, base, "ul.leads")
	browsertest.Screenshot(t, ctx, "inbox")

	do("find the lead",
		chromedp.SetValue(chromedp.CSS("#q"), "Mehmet"),
		chromedp.Submit(chromedp.CSS("#q")),
		chromedp.WaitVisible(chromedp.CSS(`a.name[href="/admin/leads/`+string(e.leads["review"].ID)+`"]`)),
	)
	if got := text("ul.leads"); strings.Contains(got, "Ayşe") || !strings.Contains(got, "Mehmet Demir") {
		t.Errorf("search result: %q", got)
	}
	do("open it",
		chromedp.Click(chromedp.CSS("a.name")),
		chromedp.WaitVisible(chromedp.CSS("#h-story")),
	)
	if got := text(".lead-head"); !strings.Contains(got, "Mehmet Demir") || !strings.Contains(got, "review") {
		t.Errorf("lead header: %q", got)
	}
	browsertest.Screenshot(t, ctx, "lead-review")

	do("mark it a real customer",
		chromedp.Click(chromedp.CSS(`form.action input[value="customer"] ~ button`)),
		chromedp.WaitVisible(chromedp.CSS(".alert.ok")),
	)
	if got := text("ol.timeline"); !strings.Contains(got, "Event QualifiedLead for Meta") || !strings.Contains(got, "by you") {
		t.Errorf("the qualified event is not in the story: %q", got)
	}
	if got := text(".lead-head"); !strings.Contains(got, "clean") {
		t.Errorf("verdict after the owner's word: %q", got)
	}

	do("add a stage",
		// The page still shows the last action's notice: remove it, so
		// the wait below is for the next page's.
		chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('.alert.ok').forEach(function (e) { e.remove() })`),
		chromedp.SetValue(chromedp.CSS("#stage"), "won"),
		chromedp.SendKeys(chromedp.CSS("#value"), "7000"),
		chromedp.Click(chromedp.CSS(`form[action$="/stages"] button`)),
		chromedp.WaitVisible(chromedp.CSS(".alert.ok")),
	)
	if got := text("ol.timeline"); !strings.Contains(got, "Stage: won") || !strings.Contains(got, "Event Purchase for Meta") {
		t.Errorf("the stage is not in the story: %q", got)
	}
	browsertest.Screenshot(t, ctx, "lead-customer")

	do("replay a dead letter",
		chromedp.Navigate(base+"/admin/deliveries?state=dead"),
		chromedp.WaitVisible(chromedp.CSS(`form[action="/admin/deliveries/`+e.dead.ID+`/replay"] button`)),
		chromedp.Click(chromedp.CSS(`form[action="/admin/deliveries/`+e.dead.ID+`/replay"] button`)),
		chromedp.WaitVisible(chromedp.CSS(".alert.ok")),
	)
	if d, _ := e.db.DeliveryByID(context.Background(), e.dead.ID); d.State != model.DeliveryPending {
		t.Errorf("dead letter after replay: %s", d.State)
	}

	do("switch the site to test mode",
		chromedp.Navigate(base+"/admin/sites/dent"),
		chromedp.WaitVisible(chromedp.CSS(`input[name="mode"][value="test"]`)),
		chromedp.Click(chromedp.CSS(`input[name="mode"][value="test"]`)),
		chromedp.SendKeys(chromedp.CSS("#test_event_code"), "TEST777"),
		chromedp.Click(chromedp.CSS(`form[action="/admin/sites/dent"] button.primary`)),
		chromedp.WaitVisible(chromedp.CSS(".alert.ok")),
	)
	if s, _ := e.db.SiteByID(context.Background(), "dent"); s.Settings.Meta.Mode != model.ModeTest ||
		s.Settings.Meta.TestEventCode != "TEST777" || s.AccessToken != dentToken {
		t.Errorf("site after switching to test: %+v", s.Settings.Meta)
	}
	browsertest.Screenshot(t, ctx, "site")

	do("dashboard", chromedp.Navigate(base+"/admin/dashboard?site=dent"), chromedp.WaitVisible(chromedp.CSS("svg.chart")))
	browsertest.Screenshot(t, ctx, "dashboard")

	do("on a phone",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Navigate(base+"/admin/"),
		chromedp.WaitVisible(chromedp.CSS("ul.leads")),
	)
	browsertest.Screenshot(t, ctx, "inbox-phone")
	do("lead on a phone",
		chromedp.Navigate(base+"/admin/leads/"+string(e.leads["clean"].ID)),
		chromedp.WaitVisible(chromedp.CSS("#h-story")),
	)
	browsertest.Screenshot(t, ctx, "lead-phone")
}
