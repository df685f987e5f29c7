package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/store/storetest"
)

// TestReportPlans: the campaign report's queries read the period's leads
// through the (site_id, received_at) index, their stages by key and their
// visitors' visits through (site_id, visitor_id, at): none scans the
// leads, stages or visits of the whole site.
func TestReportPlans(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	plans, err := db.TestReportPlans(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("plans:\n%s", strings.Join(plans, "\n--\n"))
	for i, want := range [][]string{
		{"leads_site_received"},
		{"leads_site_received", "lead_stages"},
		{"visits_visitor", "leads_site_received"},
	} {
		p := plans[i]
		for _, w := range want {
			if !strings.Contains(p, w) {
				t.Errorf("query %d does not use %s:\n%s", i, w, p)
			}
		}
		for _, line := range strings.Split(p, "\n") {
			if strings.HasPrefix(line, "SCAN ") && !strings.Contains(line, "USING") {
				t.Errorf("query %d scans a table:\n%s", i, p)
			}
		}
	}
}
