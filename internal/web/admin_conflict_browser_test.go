package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/cleanads/cleanads/internal/browsertest"
	"github.com/cleanads/cleanads/internal/model"
)

// TestCRMConflictInBrowser: a lead the owner called junk and the CRM then
// moved to won shows the conflict in the inbox and on its page; one click
// in the inbox changes the word, and the held events are queued.
func TestCRMConflictInBrowser(t *testing.T) {
	ctx := browsertest.New(t)
	e := newAdminEnv(t)
	l := e.conflictLead()
	base := e.srv.URL
	do, text := browserSteps(t, ctx)
	row := `li.lead-row:has(a.name[href="/admin/leads/` + string(l.ID) + `"])`

	browserLogIn(t, ctx, base, row+" .conflict")
	if got := text(row + " .conflict"); !strings.Contains(got, "The CRM says won; you said junk.") || !strings.Contains(got, "Change to real customer") {
		t.Errorf("the inbox row's conflict: %q", got)
	}
	browsertest.Screenshot(t, ctx, "conflict-inbox")

	do("open the lead",
		chromedp.Click(chromedp.CSS(row+" a.name")),
		chromedp.WaitVisible(chromedp.CSS("#h-conflict")),
	)
	if got := text("section.conflict"); !strings.Contains(got, "The CRM says won; you said junk.") || !strings.Contains(got, "Purchase (won)") {
		t.Errorf("the lead page's conflict: %q", got)
	}
	if got := text("ol.timeline"); !strings.Contains(got, "Stage: won") || !strings.Contains(got, "Held back from Meta") ||
		strings.Contains(got, "Event Purchase for Meta") {
		t.Errorf("the story before the change: %q", got)
	}
	browsertest.Screenshot(t, ctx, "conflict-lead")

	do("change the word with one click in the inbox",
		chromedp.Navigate(base+"/admin/"),
		chromedp.WaitVisible(chromedp.CSS(row+" .conflict button")),
		chromedp.Click(chromedp.CSS(row+" .conflict button")),
		chromedp.WaitVisible(chromedp.CSS(".alert.ok")),
	)
	if got := text(".lead-head"); !strings.Contains(got, "clean") {
		t.Errorf("verdict after the click: %q", got)
	}
	if got := text("ol.timeline"); !strings.Contains(got, "Event QualifiedLead for Meta") || !strings.Contains(got, "Event Purchase for Meta") ||
		!strings.Contains(got, "Event Schedule for Meta") || !strings.Contains(got, "by you") {
		t.Errorf("the story after the change: %q", got)
	}
	ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById('h-conflict') === null`))
	if err != nil || !ok {
		t.Errorf("the conflict is still shown: %v", err)
	}
	browsertest.Screenshot(t, ctx, "conflict-resolved")
	got := e.pending(l.ID)
	for _, kind := range []string{model.KindLead, model.KindQualified, "stage:meeting", "stage:won"} {
		if !got[kind] {
			t.Errorf("%s is not queued after the click: %v", kind, got)
		}
	}
}

// browserSteps returns a browser test's two tools: do runs a named step's
// actions and fails the test if one fails; text is the text of the first
// element sel matches.
func browserSteps(t *testing.T, ctx context.Context) (do func(step string, actions ...chromedp.Action[chromedp.Void]), text func(sel string) string) {
	do = func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	text = func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	return do, text
}

// browserLogIn logs the admin user in at base and waits for the inbox to
// show sel.
func browserLogIn(t *testing.T, ctx context.Context, base, sel string) {
	t.Helper()
	do, _ := browserSteps(t, ctx)
	do("log in",
		chromedp.Navigate(base+"/admin/"),
		chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), adminEmail),
		chromedp.SendKeys(chromedp.CSS("#password"), adminPass),
		chromedp.Click(chromedp.CSS("button.primary")),
		// Every page has a <main>: the login form's going is what says
		// the next page is here, not sel alone.
		chromedp.WaitNotPresent(chromedp.CSS("#password")),
		chromedp.WaitVisible(chromedp.CSS(sel)),
	)
}
