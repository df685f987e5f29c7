package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
)

// ownerWords gives the owner's word as the dashboard tests need it: the
// price-only lead was a real customer, the junk lead junk.
func (e *adminEnv) ownerWords() {
	e.t.Helper()
	ctx := context.Background()
	site, _ := e.db.SiteByID(ctx, "dent")
	for role, typ := range map[string]string{"review": "customer", "junk": "junk"} {
		if _, err := e.svc.AddEvidence(ctx, site, e.leads[role].ID, qualify.Evidence{Type: typ}); err != nil {
			e.t.Fatal(err)
		}
	}
}

// crmWonFastFill submits a fast fill the rules judge junk and posts the
// CRM's won stage on it: the CRM met the person, so FILL_TOO_FAST held a
// real customer, as the owner's word would have shown.
func (e *adminEnv) crmWonFastFill() *model.Lead {
	e.t.Helper()
	ctx := context.Background()
	site, _ := e.db.SiteByID(ctx, "dent")
	fast, _, err := e.svc.Submit(ctx, site, &app.LeadInput{Phone: "0542 318 77 20", Name: "Zeynep Ak", FillMS: &[]int64{700}[0],
		Message: "İmplant için muayene randevusu almak istiyorum, hafta içi uygunum.", ClientIP: "85.105.1.9", UserAgent: "Mozilla/5.0"})
	if err != nil || fast.Verdict != model.VerdictJunk {
		e.t.Fatalf("the fast fill: %v %v", fast, err)
	}
	l, err := e.svc.AddLeadEvent(ctx, site, fast.ID, &app.LeadEventInput{Type: app.TypeStage, Stage: "won"})
	if err != nil || l.DecidedBy != model.DecidedByCRM {
		e.t.Fatalf("the stage: %v %v", l, err)
	}
	return l
}

func TestAdminDashboardAgreement(t *testing.T) {
	e := newAdminEnv(t)
	ctx := context.Background()
	e.ownerWords()
	// row is a code's line as the page writes it: "CODE: figures".
	row := func(code, figures string) string {
		return "<code>" + code + `</code><span class="small muted">: ` + figures + "</span>"
	}
	c := e.login()
	p := c.get("/admin/dashboard?site=dent")
	for _, want := range []string{"What your word teaches the rules", "Leads you judged in the last 30 days: 2 (1 junk).",
		row("PRICE_ONLY", "1 lead, it turned out a real customer"), row("FILL_TOO_FAST", "1 lead, overturned 0"),
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
	for _, want := range []string{"Kararlarınız kurallara ne öğretiyor", row("PRICE_ONLY", "1 talep, gerçek müşteri çıktı"),
		"Metin modeli gölge modda: değerlendirdiğiniz 2 talepten öğrendi, 30 talepten sonra sayılır."} {
		if !strings.Contains(p.body, want) {
			t.Errorf("Turkish dashboard lacks %q", want)
		}
	}

	e.crmWonFastFill()
	delete(c.hdr, "Accept-Language")
	p = c.get("/admin/dashboard?site=dent")
	for _, want := range []string{row("FILL_TOO_FAST", "2 leads, 1 turned out a real customer (1 shown by the CRM)"),
		"A CRM stage showed 1 more lead the rules held to be real.",
		`<tr class="overturned"><th scope="row"><code>FILL_TOO_FAST</code>`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("dashboard after the CRM's stage lacks %q", want)
		}
	}
}
