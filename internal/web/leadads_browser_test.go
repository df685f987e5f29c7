package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/browsertest"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// leadAdsLead stores a Lead Ads lead for site dent as the fetch does: the
// Graph API's answer through LeadAdsIngest.
func leadAdsLead(t *testing.T, e *adminEnv) {
	t.Helper()
	site, err := e.db.SiteByID(context.Background(), "dent")
	if err != nil {
		t.Fatal(err)
	}
	l := &capi.LeadgenLead{ID: "9007199254740993", CreatedTime: "2026-12-03T09:15:00+0000", FormID: "987654321098765",
		AdID: "120210000000000001", AdName: "Implant Aralık video", AdsetID: "120210000000000002", AdsetName: "İstanbul 25-55",
		CampaignID: "120210000000000003", CampaignName: "Implant kış", Platform: "ig",
		FieldData: []capi.FieldData{{Name: "full_name", Values: []string{"Zeynep Kaya"}},
			{Name: "phone_number", Values: []string{"+905354128890"}}, {Name: "email", Values: []string{"zeynep.kaya@gmail.com"}},
			{Name: "hangi_tedavi", Values: []string{"implant"}}}}
	if _, _, err := e.svc.LeadAdsIngest(context.Background(), site, l,
		app.LeadAdsSource{PageID: "104857600123456", FormName: "Implant formu", Via: "webhook"}); err != nil {
		t.Fatal(err)
	}
}

// TestLeadAdsSourceInBrowser: the inbox says a Lead Ads lead's source, form
// and ad; its page shows the source with its form, ad, ad set, campaign and
// platform, and its story says how it came in; so for a Click-to-WhatsApp
// lead, with its ad and click id.
func TestLeadAdsSourceInBrowser(t *testing.T) {
	ctx := browsertest.New(t)
	e := newAdminEnv(t)
	leadAdsLead(t, e)
	base := e.srv.URL
	do := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	do("log in",
		chromedp.Navigate(base+"/admin/"),
		chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), adminEmail),
		chromedp.SendKeys(chromedp.CSS("#password"), adminPass),
		chromedp.Click(chromedp.CSS("button.primary")),
		chromedp.WaitVisible(chromedp.CSS("ul.leads")),
	)
	do("find the Lead Ads lead",
		chromedp.SetValue(chromedp.CSS("#q"), "Zeynep"),
		chromedp.Submit(chromedp.CSS("#q")),
		chromedp.WaitVisible(chromedp.CSS("li.lead-row .source")),
	)
	if got := text("li.lead-row .source"); !strings.Contains(got, "Lead Ads (Instant Form)") ||
		!strings.Contains(got, "form Implant formu") || !strings.Contains(got, "ad Implant Aralık video") {
		t.Errorf("inbox source: %q", got)
	}
	browsertest.Screenshot(t, ctx, "inbox-leadads")
	do("open it",
		chromedp.Click(chromedp.CSS("li.lead-row a.name")),
		chromedp.WaitVisible(chromedp.CSS("#h-source")),
	)
	src := text(`section[aria-labelledby="h-source"]`)
	for _, want := range []string{"Lead Ads (Instant Form)", "Form", "Implant formu", "Form id", "987654321098765",
		"Ad", "Implant Aralık video", "Ad set", "İstanbul 25-55", "Campaign", "Implant kış", "Platform", "Instagram",
		"Organic", "no", "Facebook Page", "104857600123456"} {
		if !strings.Contains(src, want) {
			t.Errorf("the source card lacks %q: %q", want, src)
		}
	}
	if got := text("ol.timeline"); !strings.Contains(got, "Sent the Instant Form") || !strings.Contains(got, "form Implant formu") {
		t.Errorf("story: %q", got)
	}
	if got := text(".grid"); !strings.Contains(got, "hangi_tedavi") || !strings.Contains(got, "implant") {
		t.Errorf("the form's custom answer is not shown: %q", got)
	}
	browsertest.Screenshot(t, ctx, "lead-leadads")

	// A Click-to-WhatsApp lead: its source and ad in the inbox, its story
	// from the WhatsApp message, its click id on its page.
	site, _ := e.db.SiteByID(context.Background(), "dent")
	site.Settings.WhatsApp = model.WhatsAppSettings{PhoneNumberIDs: []string{waNumberID}, BusinessAccountID: wabaID, DatasetID: datasetID}
	if err := e.db.SiteUpsert(context.Background(), site, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.WhatsAppInbound(context.Background(), app.WhatsAppMessage{ID: "wamid.BROWSER1", PhoneNumberID: waNumberID,
		FromUserID: bsuid, Type: "text", Text: "Fiyat ne kadar?", ProfileName: "Deniz Aksoy", WABAID: wabaID, At: time.Now().Add(-time.Minute),
		Referral: &app.WhatsAppReferral{CTWAClid: ctwaClid, SourceID: "120226305854810726", SourceType: "ad", Headline: "İmplant"}}); err != nil {
		t.Fatal(err)
	}
	do("find the WhatsApp lead",
		chromedp.Navigate(base+"/admin/"),
		chromedp.WaitVisible(chromedp.CSS("#q")),
		chromedp.SetValue(chromedp.CSS("#q"), "Deniz"),
		chromedp.Submit(chromedp.CSS("#q")),
		chromedp.WaitVisible(chromedp.CSS("li.lead-row .source")),
	)
	if got := text("li.lead-row .source"); !strings.Contains(got, "WhatsApp") || !strings.Contains(got, "ad İmplant") {
		t.Errorf("inbox source of a WhatsApp lead: %q", got)
	}
	do("open it",
		chromedp.Click(chromedp.CSS("li.lead-row a.name")),
		chromedp.WaitVisible(chromedp.CSS("#h-source")),
	)
	if got := text("ol.timeline"); !strings.Contains(got, "Wrote on WhatsApp") || strings.Contains(got, "Sent the form") {
		t.Errorf("story of a WhatsApp lead: %q", got)
	}
	if src := text(`section[aria-labelledby="h-source"]`); !strings.Contains(src, "WhatsApp click id") || !strings.Contains(src, ctwaClid) ||
		!strings.Contains(src, "Ad headline") {
		t.Errorf("the source card of a WhatsApp lead: %q", src)
	}
	browsertest.Screenshot(t, ctx, "lead-ctwa")
}

// TestLeadAdsOnAdminPages: the sites page says why a site's Lead Ads
// fetches are paused, and a Lead Ads lead's page shows its source, in
// both languages.
func TestLeadAdsOnAdminPages(t *testing.T) {
	e := newAdminEnv(t)
	leadAdsLead(t, e)
	why := "the Lead Ads token lacks leads_retrieval: grant it to the app"
	if err := e.db.DestinationPauseSet(context.Background(), model.Share{Site: "dent", Destination: model.DestinationMetaLeadgen},
		why, time.Now()); err != nil {
		t.Fatal(err)
	}
	c := e.login()
	for lang, want := range map[string][]string{"en": {"Lead Ads fetches: " + why}, "tr": {"Lead Ads çekimleri: " + why}} {
		c.hdr["Accept-Language"] = lang
		if p := c.get("/admin/sites"); p.code != 200 || !strings.Contains(p.body, want[0]) {
			t.Errorf("%s sites page: %d, lacks %q", lang, p.code, want[0])
		}
	}
	// A fetch job Meta refused shows among the deliveries, as a dead
	// letter that can be replayed.
	now := time.Now()
	if _, err := e.db.DeliveryInsert(context.Background(), &model.Delivery{ID: "dl_fetch1", SiteID: "dent",
		Destination: model.DestinationMetaLeadgen, Kind: app.KindLeadgen, EventName: app.KindLeadgen, EventID: "1200000000000888",
		Payload: []byte(`{"leadgen_id":"1200000000000888","page_id":"104857600123456","via":"webhook"}`),
		State:   model.DeliveryDead, LastError: "Meta refused to read the lead", NextAt: now, DeadlineAt: now.Add(90 * 24 * time.Hour),
		CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	c.hdr["Accept-Language"] = "en"
	if p := c.get("/admin/deliveries?state=dead"); p.code != 200 || !strings.Contains(p.body, "1200000000000888") ||
		!strings.Contains(p.body, "Meta refused to read the lead") {
		t.Errorf("deliveries page: %d\n%s", p.code, p.body)
	}
	l, err := e.db.LeadFind(context.Background(), "dent", store.LeadLookup{LeadAdsID: "9007199254740993"})
	if err != nil {
		t.Fatal(err)
	}
	c.hdr["Accept-Language"] = "tr"
	p := c.get("/admin/leads/" + string(l.ID))
	for _, want := range []string{"Kaynak", "Lead Ads (Anında Form)", "Reklam seti", "İstanbul 25-55", "Instagram", "Anında Formu gönderdi"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("Turkish lead page lacks %q", want)
		}
	}
}
