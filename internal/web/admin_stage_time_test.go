package web_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The admin's stage form: the stage's real time (in the past, within the
// site's platforms' window), the first stage not yet recorded as the
// default, and the site's currency filled in.
func TestAdminStageAtItsTime(t *testing.T) {
	e := newAdminEnv(t)
	c := e.login()
	l := e.leads["clean"]
	lead := "/admin/leads/" + string(l.ID)
	p := c.get(lead)
	selected := regexp.MustCompile(`<option value="(\w+)" selected>`)
	if m := selected.FindStringSubmatch(p.body); m == nil || m[1] != "meeting" {
		t.Fatalf("default stage: %v", m)
	}
	if !strings.Contains(p.body, `id="currency" name="currency" maxlength="3" placeholder="TRY" value="TRY"`) {
		t.Errorf("the site's currency is not the default")
	}
	if !regexp.MustCompile(`type="datetime-local" value="[0-9T:-]+" min="[0-9T:-]+" max="[0-9T:-]+"`).MatchString(p.body) ||
		!strings.Contains(p.body, "Up to 7 days back") {
		t.Errorf("no time field bounded by the site's window")
	}

	// A meeting three days ago is recorded at its time.
	at := time.Now().UTC().Add(-72 * time.Hour).Truncate(time.Minute)
	p = c.post(lead+"/stages", url.Values{"stage": {"meeting"}, "at": {at.Format("2006-01-02T15:04")}})
	if p.code != http.StatusSeeOther {
		t.Fatalf("add stage: %d %s", p.code, p.body)
	}
	stages, err := e.db.LeadStagesByLead(context.Background(), l.ID)
	if err != nil || len(stages) != 1 || !stages[0].At.Equal(at) {
		t.Fatalf("stage recorded at %+v (%v), want %s", stages, err, at)
	}
	p = c.get(lead)
	if m := selected.FindStringSubmatch(p.body); m == nil || m[1] != "won" {
		t.Errorf("default stage once meeting is recorded: %v", m)
	}
	if !strings.Contains(html.UnescapeString(p.body), "meeting → Schedule (already recorded)") {
		t.Errorf("the recorded stage is not marked")
	}

	// Too far back, in the future, or no time at all: refused plainly.
	for _, c2 := range []struct{ at, says string }{
		{time.Now().UTC().Add(-8 * 24 * time.Hour).Format("2006-01-02T15:04"), "older than 7 days"},
		{time.Now().UTC().Add(24 * time.Hour).Format("2006-01-02T15:04"), "in the future"},
		{"yesterday", "want a date and time"},
	} {
		p := c.post(lead+"/stages", url.Values{"stage": {"won"}, "at": {c2.at}})
		if p.code != http.StatusBadRequest || !strings.Contains(html.UnescapeString(p.body), c2.says) {
			t.Errorf("at %s: %d, want 400 saying %q", c2.at, p.code, c2.says)
		}
	}
	if stages, _ := e.db.LeadStagesByLead(context.Background(), l.ID); len(stages) != 1 {
		t.Errorf("a refused stage was recorded: %+v", stages)
	}
}
