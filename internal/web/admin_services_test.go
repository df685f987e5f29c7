package web_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestAdminSiteServices: the site page edits the services the site sells
// (qualify.services), one a line, shows them back, and marks a bad one on
// its field with nothing saved.
func TestAdminSiteServices(t *testing.T) {
	e := newAdminEnv(t)
	c := e.login()
	ctx := context.Background()
	form := url.Values{"name": {"Istanbul Dental"}, "origins": {origin}, "country": {"TR"}, "consent": {"implied"},
		"pixel_id": {"123456789012345"}, "mode": {"test"}, "test_event_code": {"TEST123"},
		"services": {"İmplant\r\n\r\n  diş beyazlatma \n"}}
	p := c.post("/admin/sites/dent", form)
	if p.code != http.StatusSeeOther {
		t.Fatalf("save: %d %s", p.code, p.body)
	}
	s, _ := e.db.SiteByID(ctx, "dent")
	if want := []string{"İmplant", "diş beyazlatma"}; !slices.Equal(s.Settings.Qualify.Services, want) {
		t.Errorf("services %q, want %q", s.Settings.Qualify.Services, want)
	}
	p = c.get("/admin/sites/dent")
	if !strings.Contains(p.body, "Services you sell") || !strings.Contains(p.body, "İmplant\ndiş beyazlatma</textarea>") {
		t.Errorf("the page does not show the services")
	}
	form.Set("services", "implant\n"+strings.Repeat("çok uzun bir hizmet ", 6))
	p = c.post("/admin/sites/dent", form)
	if p.code != http.StatusBadRequest || !strings.Contains(p.body, `id="services-err"`) {
		t.Errorf("a bad service: %d", p.code)
	}
	if s, _ := e.db.SiteByID(ctx, "dent"); len(s.Settings.Qualify.Services) != 2 {
		t.Errorf("a form with mistakes was saved: %q", s.Settings.Qualify.Services)
	}
	// In Turkish.
	c.hdr["Accept-Language"] = "tr"
	p = c.get("/admin/sites/dent")
	if !strings.Contains(p.body, "Sattığınız hizmetler") {
		t.Errorf("no Turkish label")
	}
}
