package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/pipedrive"
	"github.com/cleanads/cleanads/internal/platform"
)

// The Pipedrive source's settings are a section of the site's page made
// from its Fields (as every source with settings gets), saved with the
// secrets sealed, its Validate's words next to the field, in Turkish too.
func TestAdminPipedriveSection(t *testing.T) {
	e := newAdminEnv(t)
	c := e.login()
	p := c.get("/admin/sites/dent")
	sec := sectionOf(p.body, "pipedrive")
	for _, want := range []string{`name="pipedrive.api_token"`, `name="pipedrive.webhook_user"`, `name="pipedrive.webhook_password"`,
		`<textarea id="pf-pipedrive-stages" name="pipedrive.stages"`, `name="pipedrive.won_stage"`, "Stage mapping"} {
		if !strings.Contains(sec, want) {
			t.Errorf("the Pipedrive section lacks %s", want)
		}
	}
	form := url.Values{"pipedrive.api_token": {"pd-token-0123456789"}, "pipedrive.webhook_user": {"hook"},
		"pipedrive.webhook_password": {"a-long-password-42"}, "pipedrive.stages": {"meeting = 7"}, "pipedrive.won_stage": {"won"}}
	p = c.post("/admin/sites/dent/platforms/pipedrive", form)
	if got := fieldError(p.body, "pf-pipedrive-stages"); p.code != http.StatusBadRequest || !strings.Contains(got, "id number") {
		t.Errorf("a stage written by name: %d, next to the mapping %q", p.code, got)
	}
	if strings.Contains(p.body, "pd-token-0123456789") || strings.Contains(p.body, "a-long-password-42") {
		t.Error("the page echoes a secret")
	}
	// A stage the site does not have would be refused when a deal
	// reaches it: refused here, at once.
	form.Set("pipedrive.stages", "7 = meeting\n9 = proposal")
	p = c.post("/admin/sites/dent/platforms/pipedrive", form)
	if got := fieldError(p.body, "pf-pipedrive-stages"); p.code != http.StatusBadRequest || !strings.Contains(got, "not one of the site") {
		t.Errorf("a stage the site lacks: %d, next to the mapping %q", p.code, got)
	}
	form.Set("pipedrive.stages", "7 = meeting\n9 = won")
	if p = c.post("/admin/sites/dent/platforms/pipedrive", form); p.code != http.StatusSeeOther {
		t.Fatalf("save: %d %s", p.code, fieldError(p.body, "pf-pipedrive-stages"))
	}
	s, err := e.db.SiteByID(context.Background(), "dent")
	if err != nil {
		t.Fatal(err)
	}
	var st pipedrive.Settings
	if ok, err := platform.Decode(s, pipedrive.Name, &st); !ok || err != nil || st.Stages["7"] != "meeting" ||
		st.Stages["9"] != "won" || st.Won != "won" || st.User != "hook" {
		t.Errorf("stored settings %+v %v", st, err)
	}
	if s.Secrets["pipedrive.api_token"] != "pd-token-0123456789" || s.Secrets["pipedrive.webhook_password"] != "a-long-password-42" {
		t.Errorf("secrets not stored")
	}
	c.hdr["Accept-Language"] = "tr"
	if p := c.get("/admin/sites/dent"); !strings.Contains(sectionOf(p.body, "pipedrive"), "Aşama eşleştirmesi") {
		t.Errorf("the Pipedrive section is not in Turkish")
	}
}
