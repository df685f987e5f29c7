package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// A member who may see a site sees its webhooks and their answers, but
// only an admin chooses where its leads are posted: a member's add is
// refused and stores nothing (an answer from a service on the server's
// own network would otherwise be theirs to read).
func TestWebhookAddIsAnAdmins(t *testing.T) {
	e := newAdminEnv(t)
	ctx := context.Background()
	admin := e.login()
	// The admin becomes a member of the one site.
	u, err := e.db.UserByEmail(ctx, adminEmail)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.db.UserSetAccess(ctx, u.ID, model.RoleMember, false, []model.SiteID{"dent"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	p := admin.get("/admin/sites/dent")
	if p.code != http.StatusOK || !strings.Contains(p.body, `id="h-webhooks"`) {
		t.Fatalf("the member's site page: %d", p.code)
	}
	if strings.Contains(p.body, `action="/admin/sites/dent/webhooks#webhooks"`) || !strings.Contains(p.body, "Only an admin can add or remove a webhook.") {
		t.Error("the member is offered the webhook form")
	}
	p = admin.post("/admin/sites/dent/webhooks", url.Values{"url": {"http://localhost:9/x"}, "event": {"lead.received"}})
	if p.code != http.StatusForbidden {
		t.Errorf("a member's add: %d", p.code)
	}
	if eps, err := e.db.WebhookEndpoints(ctx, "dent", false); err != nil || len(eps) != 0 {
		t.Errorf("endpoints after a member's add: %v %v", eps, err)
	}
}
