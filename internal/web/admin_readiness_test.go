package web_test

import (
	"context"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/model"
)

// readyEnv is the admin environment with the dent site's clean lead at a
// meeting (built in dry run), then the site live, and Meta's Dataset
// Quality API answering for its pixel.
func readyEnv(t *testing.T) *adminEnv {
	t.Helper()
	e := newAdminEnv(t)
	ctx := context.Background()
	site, err := e.db.SiteByID(ctx, "dent")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.AddLeadEvent(ctx, site, e.leads["clean"].ID, &app.LeadEventInput{Type: "stage", Stage: "meeting"}); err != nil {
		t.Fatal(err)
	}
	// Meta accepts every queued event, as the delivery runner would have it.
	now := time.Now()
	claimed, err := e.db.DeliveryClaim(ctx, "readiness-test", now, now.Add(time.Minute), 100, nil)
	if err != nil || len(claimed) == 0 {
		t.Fatalf("claim: %d, %v", len(claimed), err)
	}
	for _, d := range claimed {
		d.State, d.SentAt = model.DeliverySent, &now
	}
	if _, err := e.db.DeliveryRecord(ctx, "readiness-test", claimed, now); err != nil {
		t.Fatal(err)
	}
	site.Settings.Meta.Mode = model.ModeLive
	if err := e.db.SiteUpsert(ctx, site, now); err != nil {
		t.Fatal(err)
	}
	e.graph.SetDatasetQuality("123456789012345", graphtest.QualityEvent{EventName: "Lead", Score: 6.4,
		Keys: map[string]float64{"email": 92.5, "phone": 80, "fbc": 41}, EventIDShare: 100})
	return e
}

// TestReadinessPage renders the readiness page in both languages: each
// requirement with where the site stands and what to do, the stages that
// reached Meta, our coverage with external_id and lead_id, and Meta's own
// figures; then Meta's refusal of the token, and a dry-run site, each said
// plainly.
func TestReadinessPage(t *testing.T) {
	e := readyEnv(t)
	c := e.login()
	for lang, want := range map[string][]string{
		"en": {"What Meta asks", "About 200 leads a month or more", "0 of 4 leads came from Instant Forms.",
			"Connect Lead Ads to this site", "Schedule", "CRM stage meeting", "Lead Ads id (lead_id)", "Your id (external_id)",
			"Event Match Quality 6.4 of 10", "email</code> 92.5%", "event_id on 100.0% of server events",
			"100.0% of 4 events sent."},
		"tr": {"istedikleri", "Ayda yaklaşık 200 başvuru", "4 başvurudan 0 tanesi Anında Formlardan geldi.",
			"Lead Ads'i bu siteye bağlayın", "CRM aşaması meeting", "Lead Ads kimliği (lead_id)",
			"Olay Eşleşme Kalitesi 10 üzerinden 6.4", "sunucu olaylarının 100.0% kadarında event_id"},
	} {
		c.hdr["Accept-Language"] = lang
		p := c.get("/admin/sites/dent/readiness")
		body := html.UnescapeString(p.body)
		if p.code != 200 {
			t.Fatalf("%s: %d", lang, p.code)
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: the page lacks %q", lang, w)
			}
		}
		if n := strings.Count(body, `class="ready-item"`); n != 8 {
			t.Errorf("%s: %d requirements shown, want 8", lang, n)
		}
	}
	c.hdr["Accept-Language"] = "en"
	if p := c.get("/admin/sites/dent"); !strings.Contains(p.body, `href="/admin/sites/dent/readiness"`) {
		t.Error("the site page does not link to the readiness page")
	}

	// Meta refuses the token: the page says so with Meta's message. Meta's
	// answer above is kept ten minutes for the same token, so this is
	// another one.
	e.graph.SetTokens("another-token")
	ctx := context.Background()
	site, _ := e.db.SiteByID(ctx, "dent")
	site.AccessToken = "refused-token"
	if err := e.db.SiteUpsert(ctx, site, time.Now()); err != nil {
		t.Fatal(err)
	}
	body := html.UnescapeString(c.get("/admin/sites/dent/readiness").body)
	if !strings.Contains(body, "Meta's figures could not be read.") || !strings.Contains(body, "Meta's message: Invalid OAuth access token") {
		t.Errorf("a refused token is not said plainly: %s", section(body, `id="h-meta"`))
	}
	if strings.Contains(body, "6.4 of 10") {
		t.Error("Meta's figures of the old token are still shown")
	}

	// The other site is in dry run and has no token.
	body = html.UnescapeString(c.get("/admin/sites/kitchen/readiness").body)
	if !strings.Contains(body, "The site has no pixel id, so Meta's figures cannot be read.") {
		t.Errorf("a site without a pixel: %s", section(body, `id="h-meta"`))
	}
	if p := c.get("/admin/sites/nope/readiness"); p.code != 404 {
		t.Errorf("an unknown site: %d, want 404", p.code)
	}
}

// section is body from marker on, a few hundred characters, for messages.
func section(body, marker string) string {
	i := strings.Index(body, marker)
	if i < 0 {
		return "(no " + marker + ")"
	}
	return body[i:min(len(body), i+600)]
}
