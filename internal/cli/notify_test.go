package cli_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/notify"
	"github.com/cleanads/cleanads/internal/notify/smtptest"
	"github.com/cleanads/cleanads/internal/secret"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// serve runs the notifier: a clean lead posted to the running server
// reaches the owner's mailbox on the SMTP server the test runs, with the
// link to its page under public_url, woken by the lead rather than left
// to a poll.
func TestServeNotifiesOwner(t *testing.T) {
	dsn := storetest.MigratedDSN(t)
	mail := smtptest.New(t)
	base, _, _, stop := startServe(t, t.TempDir(), testkit.Config{Database: dsn, SecretKey: true,
		Top: `public_url: "https://t.example.com"`}.YAML(), nil)

	box, err := secret.NewBox(testkit.SecretKey)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, dsn, store.Options{Secrets: box})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now()
	for _, err := range []error{
		db.UserInsert(ctx, &model.User{ID: "u1", Email: "owner@dent.example", PasswordHash: "x", CreatedAt: now, UpdatedAt: now}),
		db.NotifySMTPSet(ctx, &store.NotifySMTP{Host: mail.Host, Port: mail.Port, Username: smtptest.Username,
			Password: smtptest.Password, From: "leads@dent.example", TLS: notify.TLSNone}, now),
		db.NotifyChannelSet(ctx, &store.NotifyChannel{User: "u1", Channel: store.NotifyEmail, Kind: "smtp", Target: "owner@dent.example"}, now),
		db.NotifyRuleSet(ctx, store.NotifyRule{User: "u1", Site: "dent", Clean: true}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	req, _ := http.NewRequest("POST", base+"/v1/leads", strings.NewReader(
		`{"site":"dent","email":"ayse.yilmaz@gmail.com","phone":"05324128719","name":"Ayşe Yılmaz","fill_ms":8400,`+
			`"message":"Implant tedavisi için randevu almak istiyorum, hafta içi akşam uygunum.",`+
			`"page_url":"https://www.istanbuldis.example/x","user_agent":"Mozilla/5.0","client_ip":"203.0.113.1"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testkit.SiteKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 202 {
		t.Fatalf("post: %d %s", resp.StatusCode, body)
	}
	testkit.WaitFor(t, "the owner's mail", func() bool { return len(mail.Messages()) > 0 })
	m := mail.Messages()[0]
	if len(m.To) != 1 || m.To[0] != "owner@dent.example" || !strings.Contains(m.Data, "https://t.example.com/admin/leads/ld_") {
		t.Errorf("the mail: %+v", m)
	}
	if code := stop(); code != 0 {
		t.Errorf("serve exited %d", code)
	}
}
