package web_test

import (
	"context"
	"html"
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
	// row is a code's line as the page writes it: the reason in words
	// (the code in its title, for support), then its figures.
	row := func(code, figures string) string {
		lang := "en"
		if strings.ContainsAny(figures, "ığüşç") || strings.Contains(figures, "talep") {
			lang = "tr"
		}
		return `title="` + code + `">` + qualify.Label(code, lang) + `<span class="small muted">: ` + figures + "</span>"
	}
	c := e.login()
	p := c.get("/admin/dashboard?site=dent")
	for _, want := range []string{"What your word teaches the rules", "Leads you judged in the last 30 days: 2 (1 junk).",
		row("PRICE_ONLY", "1 lead, it turned out a real customer"), row("FILL_TOO_FAST", "1 lead, overturned 0"),
		`<tr class="overturned"><th scope="row" title="PRICE_ONLY">`,
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
		`<tr class="overturned"><th scope="row" title="FILL_TOO_FAST">`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("dashboard after the CRM's stage lacks %q", want)
		}
	}
}

// TestInboxExplainsTheLastWord: a price-only lead the CRM then moved to a
// stage, or the owner called a real customer, is clean, and its inbox row
// says who made it so, not "held until the person answers".
func TestInboxExplainsTheLastWord(t *testing.T) {
	e := newAdminEnv(t)
	ctx := context.Background()
	site, _ := e.db.SiteByID(ctx, "dent")
	if _, err := e.svc.AddLeadEvent(ctx, site, e.leads["review"].ID, &app.LeadEventInput{Type: app.TypeStage, Stage: "meeting"}); err != nil {
		t.Fatal(err)
	}
	fast := e.crmWonFastFill()
	if _, err := e.svc.AddEvidence(ctx, site, fast.ID, qualify.Evidence{Type: qualify.EvidenceCustomer}); err != nil {
		t.Fatal(err)
	}
	c := e.login()
	p := c.get("/admin/")
	for _, tt := range []struct{ who, want string }{
		{"Mehmet Demir", qualify.Message(qualify.CodeCRMQualified, "en", map[string]any{"stage": "meeting"})},
		{"Zeynep Ak", qualify.Message(qualify.CodeOwnerCustomer, "en", nil)},
	} {
		i := strings.Index(p.body, tt.who)
		if i < 0 {
			t.Fatalf("no row of %s", tt.who)
		}
		row := p.body[i:min(len(p.body), i+1500)]
		row = row[:strings.Index(row, "</li>")]
		if !strings.Contains(row, html.EscapeString(tt.want)) || strings.Contains(row, "held until") {
			t.Errorf("%s's row does not say the last word %q: %s", tt.who, tt.want, row)
		}
	}
	// The rules' own verdicts keep their weightiest reason.
	if i := strings.Index(p.body, `href="/admin/leads/`+string(e.leads["junk"].ID)+`"`); i < 0 ||
		!strings.Contains(p.body[i:min(len(p.body), i+1500)], "The form was filled in") {
		t.Errorf("the junk lead's row lost its rules' reason")
	}
}
