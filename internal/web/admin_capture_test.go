package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
)

// TestAdminDashboardVisitsAndLostLeads: the dashboard shows a site's visits
// (and those to pages with a lead form, as t.js counted them), and says in
// the admin's language when the site seems to lose leads.
func TestAdminDashboardVisitsAndLostLeads(t *testing.T) {
	e := newAdminEnv(t)
	ctx := context.Background()
	dent, err := e.db.SiteByID(ctx, "dent")
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	for i, lf := range []*int{nil, new(int), func() *int { n := 2; return &n }()} {
		if _, err := e.svc.Collect(ctx, dent, &app.CollectInput{PageURL: origin + "/p" + string(rune('a'+i)), Consent: &yes,
			ClientIP: "85.105.1.2", UserAgent: "Mozilla/5.0", LeadForms: lf}); err != nil {
			t.Fatal(err)
		}
	}
	c := e.login()
	p := c.get("/admin/dashboard?site=dent")
	if !strings.Contains(p.body, `stat-n">3</span><span class="stat-l">visits · 1 to a page with a lead form`) {
		t.Errorf("dent's visits are not shown:\n%s", p.body)
	}
	if strings.Contains(p.body, `class="alert danger"`) {
		t.Errorf("a notice on a site whose leads arrive")
	}

	// The kitchen site: its form pages are visited, no lead comes.
	if err := e.db.CountersAdd(ctx, "kitchen", model.Day(time.Now()), "test",
		model.Count{Name: model.CounterVisits, N: 120}, model.Count{Name: model.CounterFormVisits, N: 70}); err != nil {
		t.Fatal(err)
	}
	p = c.get("/admin/dashboard?site=kitchen")
	if !strings.Contains(p.body, "70 visits to pages with a lead form in the last 3 days, and no lead: the form may not be captured.") ||
		!strings.Contains(p.body, "When leads do not arrive") {
		t.Errorf("no lost-leads notice:\n%s", p.body)
	}
	c.hdr["Accept-Language"] = "tr"
	p = c.get("/admin/dashboard?site=kitchen")
	if !strings.Contains(p.body, "Son 3 günde başvuru formu olan sayfalara 70 ziyaret var ama hiç başvuru yok") {
		t.Errorf("no Turkish notice:\n%s", p.body)
	}
}
