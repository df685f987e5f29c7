package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// TestAdminGoogleDeliveries: Google's rows are on the deliveries page and
// the lead's story with Google's words, replay within Google's 90 days,
// count apart from Meta's on the dashboard, and a Google pause is named
// on the sites page.
func TestAdminGoogleDeliveries(t *testing.T) {
	e := newAdminEnv(t)
	ctx := context.Background()
	now := time.Now()
	site, _ := e.db.SiteByID(ctx, "dent")
	site.Settings.Google = &model.GoogleSettings{OperatingAccountID: "1234567890", QualifiedConversionAction: "555"}
	if err := e.db.SiteUpsert(ctx, site, now); err != nil {
		t.Fatal(err)
	}
	lead := e.leads["clean"].ID
	dead := &model.Delivery{ID: "dl_gdead", SiteID: "dent", LeadID: lead, Destination: model.DestinationGoogle,
		Kind: model.KindQualified, EventName: "QualifiedLead", EventID: "0123456789abcdef0123456789abcdef", PixelID: "1234567890",
		Payload: json.RawMessage(`{"transactionId":"0123456789abcdef0123456789abcdef","destinationReferences":["555"]}`),
		State:   model.DeliveryDead, Attempts: 1, NextAt: now, DeadlineAt: now.Add(80 * 24 * time.Hour),
		LastError: "google: events[0].user_data.user_identifiers[0]: SHA256 encoded value is malformed. [INVALID_SHA256_FORMAT]",
		CreatedAt: now, UpdatedAt: now}
	sent := &model.Delivery{ID: "dl_gsent", SiteID: "dent", LeadID: lead, Destination: model.DestinationGoogle,
		Kind: model.KindQualified, EventName: "QualifiedLead", EventID: "fedcba9876543210fedcba9876543210", PixelID: "1234567890",
		Payload: json.RawMessage(`{}`), State: model.DeliverySent, NextAt: now, DeadlineAt: now.Add(80 * 24 * time.Hour),
		Response: json.RawMessage(`{"requestId":"r1","status":{"requestStatus":"PARTIAL_SUCCESS"}}`), CreatedAt: now, UpdatedAt: now,
		LastError: "Google took the request for conversion action 555 only in part: 1 of 3 events failed: INVALID_EMAIL_FORMAT (1)."}
	for _, d := range []*model.Delivery{dead, sent} {
		if _, err := e.db.DeliveryInsert(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.db.DestinationPauseSet(ctx, model.Share{Site: "dent", Destination: model.DestinationGoogle},
		"the Google Ads account has not accepted the customer data terms", now); err != nil {
		t.Fatal(err)
	}
	c := e.login()
	p := c.get("/admin/deliveries?state=dead")
	if !strings.Contains(p.body, "Google&#39;s message: events[0]") || !strings.Contains(p.body, "to Google Ads") ||
		!strings.Contains(p.body, "/admin/deliveries/dl_gdead/replay") {
		t.Errorf("deliveries page lacks the Google dead letter:\n%s", p.body)
	}
	if p := c.get("/admin/leads/" + string(lead)); !strings.Contains(p.body, "Google&#39;s answer") ||
		!strings.Contains(p.body, "only in part: 1 of 3 events failed: INVALID_EMAIL_FORMAT (1)") {
		t.Errorf("the lead's story lacks Google's answer or its partial success")
	}
	if p := c.get("/admin/deliveries?state=sent"); !strings.Contains(p.body, "Google&#39;s message: Google took the request for conversion action 555 only in part") {
		t.Errorf("deliveries page lacks Google's partial success")
	}
	if p := c.get("/admin/sites"); !strings.Contains(p.body, "Google Ads deliveries: the Google Ads account has not accepted") {
		t.Errorf("sites page lacks the Google pause")
	}
	p = c.get("/admin/dashboard?site=dent")
	if !regexp.MustCompile(`stat-n">1</span><span class="stat-l">qualified events sent to Google Ads · 1 refused`).MatchString(p.body) {
		t.Errorf("dashboard lacks Google's count")
	}
	// The refused event is said once, in a banner naming Google Ads.
	if !strings.Contains(p.body, "<strong>Google Ads refused the event.</strong>") ||
		!strings.Contains(p.body, "1 event was refused; it can be replayed until") {
		t.Errorf("dashboard lacks the banner for Google's refused event")
	}
	if p := c.post("/admin/deliveries/dl_gdead/replay", url.Values{"back": {"/admin/deliveries"}}); p.code != http.StatusSeeOther {
		t.Errorf("replay of a Google dead letter 10 days old: %d", p.code)
	}
}

// TestAdminGoogleResume: a Google pause is shown with a resume button;
// resuming lifts it and makes the parked rows due; the sites page says
// plainly that a site added in the admin UI cannot send to Google.
func TestAdminGoogleResume(t *testing.T) {
	e := newAdminEnv(t)
	ctx := context.Background()
	now := time.Now()
	site, _ := e.db.SiteByID(ctx, "dent")
	site.Pinned = true
	site.Settings.Google = &model.GoogleSettings{OperatingAccountID: "1234567890", QualifiedConversionAction: "555"}
	if err := e.db.SiteUpsert(ctx, site, now); err != nil {
		t.Fatal(err)
	}
	sh := model.Share{Site: "dent", Destination: model.DestinationGoogle}
	if err := e.db.DestinationPauseSet(ctx, sh, "enhanced conversions for leads are off", now); err != nil {
		t.Fatal(err)
	}
	parked := &model.Delivery{ID: "dl_gpark", SiteID: "dent", LeadID: e.leads["clean"].ID, Destination: model.DestinationGoogle,
		Kind: model.KindQualified, EventName: "QualifiedLead", EventID: "0123456789abcdef0123456789abcdef", PixelID: "1234567890",
		Payload: json.RawMessage(`{}`), State: model.DeliveryPaused, LastError: "enhanced conversions for leads are off",
		NextAt: now, DeadlineAt: now.Add(80 * 24 * time.Hour), CreatedAt: now, UpdatedAt: now}
	if _, err := e.db.DeliveryInsert(ctx, parked); err != nil {
		t.Fatal(err)
	}
	c := e.login()
	p := c.get("/admin/sites")
	if !strings.Contains(p.body, `action="/admin/sites/dent/google/resume"`) || !strings.Contains(p.body, "Google Ads: account 1234567890") {
		t.Fatalf("sites page lacks the Google state and resume button:\n%s", p.body)
	}
	if p := c.post("/admin/sites/dent/google/resume", url.Values{}); p.code != http.StatusSeeOther {
		t.Fatalf("resume: %d %s", p.code, p.body)
	}
	if r, _ := e.db.DestinationPauseReason(ctx, sh); r != "" {
		t.Errorf("still paused: %q", r)
	}
	if d, _ := e.db.DeliveryByID(ctx, "dl_gpark"); d.State != model.DeliveryPending {
		t.Errorf("the parked row is %s", d.State)
	}
	p = c.get("/admin/sites?google_resumed=dent")
	if strings.Contains(p.body, `/google/resume"`) || !strings.Contains(p.body, "Google Ads deliveries resumed") {
		t.Errorf("after resume:\n%s", p.body)
	}
	if p := c.post("/admin/sites/dent/google/resume", url.Values{}); p.code != http.StatusConflict {
		t.Errorf("resume of a site not paused: %d", p.code)
	}

	// A site added here: no Google, said plainly.
	c.post("/admin/sites", url.Values{"id": {"salon"}, "name": {"Salon"}, "origins": {"https://salon.example"}, "country": {"TR"}})
	if p := c.get("/admin/sites"); !strings.Contains(p.body, "Google Ads: not available for a site added here") {
		t.Errorf("sites page does not say an admin-made site cannot send to Google:\n%s", p.body)
	}
}
