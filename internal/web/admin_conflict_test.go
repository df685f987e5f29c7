package web_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
)

// conflictLead adds a lead the owner called junk that the CRM then moved
// to a meeting and a sale: the owner's word holds both back.
func (e *adminEnv) conflictLead() *model.Lead {
	e.t.Helper()
	ctx := context.Background()
	site, err := e.db.SiteByID(ctx, "dent")
	if err != nil {
		e.t.Fatal(err)
	}
	fill := int64(18000)
	l, _, err := e.svc.Submit(ctx, site, &app.LeadInput{Name: "Zeynep Kaya", Email: "zeynep.kaya@gmail.com", Phone: "0542 318 22 70",
		Message: "Diş beyazlatma için randevu almak istiyorum, cumartesi sabah uygun mu?", FillMS: &fill,
		PageURL: origin + "/beyazlatma", ClientIP: "85.105.1.6", UserAgent: "Mozilla/5.0"})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.svc.AddEvidence(ctx, site, l.ID, qualify.Evidence{Type: qualify.EvidenceJunk}); err != nil {
		e.t.Fatal(err)
	}
	for _, stage := range []string{"meeting", "won"} {
		if _, err := e.svc.AddLeadEvent(ctx, site, l.ID, &app.LeadEventInput{Type: app.TypeStage, Stage: stage}); err != nil {
			e.t.Fatal(err)
		}
	}
	if l, err = e.db.LeadByID(ctx, l.ID); err != nil || !l.OwnerSaidJunk() {
		e.t.Fatalf("the conflict lead: %+v %v", l, err)
	}
	return l
}

// pending returns the kinds of a lead's events waiting to go to Meta.
func (e *adminEnv) pending(id model.LeadID) map[string]bool {
	e.t.Helper()
	dels, err := e.db.DeliveriesByLead(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]bool{}
	for _, d := range dels {
		if d.State == model.DeliveryPending {
			out[d.Kind] = true
		}
	}
	return out
}

func TestAdminShowsTheCRMConflict(t *testing.T) {
	e := newAdminEnv(t)
	l := e.conflictLead()
	c := e.login()
	action := `action="/admin/leads/` + string(l.ID) + `/evidence"`

	inbox := html.UnescapeString(c.get("/admin/").body)
	if n := strings.Count(inbox, "The CRM says won; you said junk."); n != 1 {
		t.Errorf("the inbox shows the conflict %d times, want once", n)
	}
	if !strings.Contains(inbox, action) || !strings.Contains(inbox, "Change to real customer") {
		t.Errorf("the inbox has no one-click change for the conflict")
	}
	// The rules' junk lead has no stage: no conflict there.
	if strings.Contains(inbox, `action="/admin/leads/`+string(e.leads["junk"].ID)+`/evidence"`) {
		t.Errorf("a lead without stages shows a conflict")
	}

	p := c.get("/admin/leads/" + string(l.ID))
	body := html.UnescapeString(p.body)
	for _, want := range []string{`id="h-conflict"`, "The CRM says won; you said junk.", "Change to real customer",
		"The stages held back are sent too: Schedule (meeting), Purchase (won).",
		"Held back from Meta: you said junk."} {
		if !strings.Contains(body, want) {
			t.Errorf("the lead page lacks %q", want)
		}
	}
	if got := e.pending(l.ID); len(got) != 0 {
		t.Fatalf("queued before the owner changed the word: %v", got)
	}

	// In Turkish.
	c.post("/admin/lang", url.Values{"lang": {"tr"}, "back": {"/admin/"}})
	if tr := html.UnescapeString(c.get("/admin/").body); !strings.Contains(tr, "CRM won diyor; siz çöp dediniz.") ||
		!strings.Contains(tr, "Gerçek müşteri olarak değiştir") {
		t.Errorf("the Turkish inbox lacks the conflict")
	}
	c.post("/admin/lang", url.Values{"lang": {"en"}, "back": {"/admin/"}})

	// One click: the word changes and what the evidence allows is queued.
	if p := c.post("/admin/leads/"+string(l.ID)+"/evidence", url.Values{"type": {"customer"}}); p.code != http.StatusSeeOther {
		t.Fatalf("change the word: %d %s", p.code, p.body)
	}
	got := e.pending(l.ID)
	for _, kind := range []string{model.KindLead, model.KindQualified, "stage:meeting", "stage:won"} {
		if !got[kind] {
			t.Errorf("%s is not queued after the change: %v", kind, got)
		}
	}
	after := html.UnescapeString(c.get("/admin/leads/" + string(l.ID)).body)
	if strings.Contains(after, `id="h-conflict"`) || !strings.Contains(after, "events held back are queued") {
		t.Errorf("the lead page after the change still shows the conflict, or not what was released")
	}
	if strings.Contains(html.UnescapeString(c.get("/admin/").body), "you said junk") {
		t.Errorf("the inbox still shows the conflict")
	}
}

// Over the API the same: a stage on a lead the owner called junk answers
// 200 with the lead still junk and the stage held in its history; the
// owner's "customer" then sends it.
func TestStageOnOwnerJunkOverHTTP(t *testing.T) {
	e := newStageEnv(t)
	id := e.greyLead()
	post := func(path, body string) string {
		t.Helper()
		code, _, out := e.do("POST", path, "application/json", body, withKey)
		if code != http.StatusOK {
			t.Fatalf("%s %s: %d %s", path, body, code, out)
		}
		return out
	}
	post("/v1/leads/"+id+"/events", `{"type":"junk"}`)
	out := post("/v1/events", `{"lead":{"phone":"0533 218 44 90"},"type":"stage","stage":"won"}`)
	if !strings.Contains(out, `"verdict":"junk"`) || !strings.Contains(out, `"held":"owner_junk"`) {
		t.Errorf("answer: %s", out)
	}
	if _, ok := e.deliveriesOf(id)["stage:won"]; ok {
		t.Errorf("a stage of an owner-junk lead was queued")
	}
	post("/v1/leads/"+id+"/events", `{"type":"customer"}`)
	d := e.deliveriesOf(id)
	if d["stage:won"] == nil || d[model.KindQualified] == nil {
		t.Errorf("after customer: %v", d)
	}
}
