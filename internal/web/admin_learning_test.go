package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/qualify"
)

func TestAdminDashboardAgreement(t *testing.T) {
	e := newAdminEnv(t)
	ctx := context.Background()
	site, _ := e.db.SiteByID(ctx, "dent")
	// The owner's word: the price-only lead was a real customer, the junk
	// lead junk.
	for role, typ := range map[string]string{"review": "customer", "junk": "junk"} {
		if _, err := e.svc.AddEvidence(ctx, site, e.leads[role].ID, qualify.Evidence{Type: typ}); err != nil {
			t.Fatal(err)
		}
	}
	c := e.login()
	p := c.get("/admin/dashboard?site=dent")
	for _, want := range []string{"What your word teaches the rules", "Leads you judged in the last 30 days: 2 (1 junk).",
		"PRICE_ONLY: 1 leads, 1 turned out real customers", "FILL_TOO_FAST: 1 leads, overturned 0",
		`<tr class="overturned"><th scope="row"><code>PRICE_ONLY</code>`,
		"The text model has nothing to learn from yet"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("dashboard lacks %q", want)
		}
	}
	if _, err := e.svc.RebuildTextModels(ctx); err != nil {
		t.Fatal(err)
	}
	c.hdr["Accept-Language"] = "tr"
	p = c.get("/admin/dashboard?site=dent")
	for _, want := range []string{"Kararlarınız kurallara ne öğretiyor", "PRICE_ONLY: 1 talep, 1 tanesi gerçek müşteri çıktı",
		"Metin modeli gölge modda: değerlendirdiğiniz 2 talepten öğrendi, 30 talepten sonra sayılır."} {
		if !strings.Contains(p.body, want) {
			t.Errorf("Turkish dashboard lacks %q", want)
		}
	}
}
