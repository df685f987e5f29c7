package web_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/store"
)

// The settings page refuses what cannot work and says why by field; a saved
// webhook address and SMTP password are never shown again, and an empty
// password field keeps the stored one.
func TestNotifySettingsSave(t *testing.T) {
	e := newAdminEnv(t)
	c := e.login()
	ctx := context.Background()

	bad := c.post("/admin/notifications", url.Values{"email": {"not an address"}, "chat_kind": {"telegram"},
		"chat_url": {"https://api.telegram.org/bot123:ABC/sendMessage"}})
	if bad.code != 422 || !strings.Contains(bad.body, "Write one e-mail address") || !strings.Contains(bad.body, "?chat_id=") {
		t.Errorf("bad settings: %d %s", bad.code, bad.body)
	}
	bad = c.post("/admin/notifications/smtp", url.Values{"smtp_host": {"mail.example.com"}, "smtp_port": {"25"},
		"smtp_tls": {"none"}, "smtp_from": {"leads@example.com"}})
	if bad.code != 422 || !strings.Contains(bad.body, "only a server on this machine may go without") {
		t.Errorf("no encryption to another machine: %d", bad.code)
	}

	hook := "https://hooks.slack.com/services/T000/B000/SECRETTOKEN"
	ok := c.post("/admin/notifications", url.Values{"email": {"owner@istanbuldis.example"}, "chat_kind": {"slack"},
		"chat_url": {hook}, "clean_dent": {"1"}, "review_dent": {"1"}})
	if ok.code != 303 {
		t.Fatalf("save: %d %s", ok.code, ok.body)
	}
	ok = c.post("/admin/notifications/smtp", url.Values{"smtp_host": {"smtp.example.com"}, "smtp_port": {"587"},
		"smtp_tls": {"starttls"}, "smtp_username": {"leads@example.com"}, "smtp_password": {"hunter2-pass"},
		"smtp_from": {"CleanAds <leads@example.com>"}})
	if ok.code != 303 {
		t.Fatalf("save the mail server: %d %s", ok.code, ok.body)
	}
	p := c.get("/admin/notifications")
	if strings.Contains(p.body, "SECRETTOKEN") || strings.Contains(p.body, "hunter2") {
		t.Errorf("the page shows a secret")
	}
	// Saved again with the password left empty: the stored one stays;
	// the chat webhook, left empty, stays too.
	c.post("/admin/notifications/smtp", url.Values{"smtp_host": {"smtp.example.com"}, "smtp_port": {"465"},
		"smtp_tls": {"tls"}, "smtp_username": {"leads@example.com"}, "smtp_from": {"leads@example.com"}})
	c.post("/admin/notifications", url.Values{"email": {"owner@istanbuldis.example"}, "chat_kind": {"generic"}, "clean_dent": {"1"}})
	s, err := e.db.NotifySMTPGet(ctx)
	if err != nil || s.Password != "hunter2-pass" || s.Port != 465 || s.TLS != "tls" {
		t.Errorf("the mail server after a save without password: %+v %v", s, err)
	}
	u, _ := e.db.UserByEmail(ctx, adminEmail)
	chans, err := e.db.NotifyChannels(ctx, u.ID)
	if err != nil || len(chans) != 2 || chans[0].Channel != store.NotifyChat || chans[0].Target != hook || chans[0].Kind != "generic" {
		t.Errorf("channels: %+v %v", chans, err)
	}
	rules, _ := e.db.NotifyRules(ctx, u.ID)
	if r := rules["dent"]; !r.Clean || r.Review || r.Junk {
		t.Errorf("dent's rule after the second save: %+v", r)
	}
	if r := rules["kitchen"]; r.Clean || r.Review || r.Junk {
		t.Errorf("kitchen's rule: %+v", r)
	}
	// Removing the webhook removes it.
	c.post("/admin/notifications", url.Values{"email": {""}, "chat_remove": {"1"}})
	if chans, _ := e.db.NotifyChannels(ctx, u.ID); len(chans) != 0 {
		t.Errorf("channels after removing both: %+v", chans)
	}
}
