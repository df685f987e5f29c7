package web_test

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
)

// TestAdminCTWALead: a Click-to-WhatsApp lead is in the inbox and has its
// page; the owner's "real customer" says it goes to the WhatsApp dataset,
// and queues QualifiedLead there as business messaging.
func TestAdminCTWALead(t *testing.T) {
	e := newAdminEnv(t)
	ctx := context.Background()
	site, _ := e.db.SiteByID(ctx, "dent")
	site.Settings.WhatsApp = model.WhatsAppSettings{PhoneNumberIDs: []string{waNumberID}, BusinessAccountID: wabaID, DatasetID: datasetID,
		Stages: map[string]string{"meeting": "QualifiedLead"}}
	if err := e.db.SiteUpsert(ctx, site, time.Now()); err != nil {
		t.Fatal(err)
	}
	res, err := e.svc.WhatsAppInbound(ctx, app.WhatsAppMessage{ID: "wamid.ADMIN1", PhoneNumberID: waNumberID, FromUserID: bsuid,
		Type: "text", Text: "Fiyat ne kadar?", ProfileName: "Zeynep Kaya", WABAID: wabaID, At: time.Now().Add(-time.Minute),
		Referral: &app.WhatsAppReferral{CTWAClid: ctwaClid, SourceID: "120226305854810726", SourceType: "ad"}})
	if err != nil || res.Outcome != app.OutcomeLead || res.Verdict != model.VerdictReview {
		t.Fatalf("CTWA lead: %+v %v", res, err)
	}
	c := e.login()
	if p := c.get("/admin/?site=dent"); p.code != 200 || !strings.Contains(p.body, "Zeynep Kaya") {
		t.Errorf("inbox: %d, lead not listed", p.code)
	}
	path := "/admin/leads/" + string(res.LeadID)
	p := c.get(path)
	if p.code != 200 || !strings.Contains(html.UnescapeString(p.body), "Sends QualifiedLead to Meta (WhatsApp dataset "+datasetID+")") {
		t.Fatalf("lead page: %d, the action does not say where it sends", p.code)
	}
	// The story starts with the WhatsApp message, the source card names
	// the ad and the WhatsApp ids by their labels, in both languages.
	for lang, want := range map[string][]string{
		"en": {"Wrote on WhatsApp", "WhatsApp · ad 120226305854810726", "WhatsApp click id", "WhatsApp user id", "Ad type",
			// The stage form names the event the WhatsApp dataset gets.
			"meeting → QualifiedLead", "won → Purchase"},
		"tr": {"WhatsApp&#39;tan yazdı", "WhatsApp · reklam 120226305854810726", "WhatsApp tıklama kimliği", "WhatsApp kullanıcı kimliği", "Reklam türü"},
	} {
		c.hdr["Accept-Language"] = lang
		page := c.get(path)
		for _, w := range want {
			if !strings.Contains(page.body, w) {
				t.Errorf("%s lead page lacks %q", lang, w)
			}
		}
		if strings.Contains(page.body, "Sent the form") || strings.Contains(page.body, "Formu gönderdi") ||
			strings.Contains(page.body, "ad source type") {
			t.Errorf("%s lead page tells a WhatsApp lead's story as a web form's", lang)
		}
	}
	c.hdr["Accept-Language"] = "en"
	if p = c.post(path+"/evidence", url.Values{"type": {"customer"}}); p.code != http.StatusSeeOther {
		t.Fatalf("real customer: %d %s", p.code, p.body)
	}
	dels, _ := e.db.DeliveriesByLead(ctx, res.LeadID)
	found := false
	for _, d := range dels {
		var ev map[string]any
		json.Unmarshal(d.Payload, &ev)
		if d.Kind == model.KindQualified {
			found = d.EventName == "QualifiedLead" && d.PixelID == datasetID && ev["action_source"] == "business_messaging"
		}
	}
	if !found {
		t.Errorf("no QualifiedLead for the WhatsApp dataset after the owner's word: %+v", dels)
	}
}
