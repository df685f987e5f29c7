package web_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/bcrypt"

	"github.com/cleanads/cleanads/internal/auth"
	"github.com/cleanads/cleanads/internal/browsertest"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/notify"
	"github.com/cleanads/cleanads/internal/notify/smtptest"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
	"github.com/cleanads/cleanads/internal/web"
)

// notifyEnv is the admin UI with the real notifier behind its test button,
// and a real SMTP server run by the test.
type notifyEnv struct {
	db   *store.DB
	srv  *httptest.Server
	smtp *smtptest.Server
	user *model.User
}

func newNotifyEnv(t *testing.T) *notifyEnv {
	t.Helper()
	ctx := context.Background()
	db := storetest.SQLite(t)
	now := time.Now()
	testkit.AddSite(t, db, testkit.Site(), now)
	testkit.AddSite(t, db, testkit.Site(func(s *model.Site) { s.ID, s.Name = "kitchen", "Ankara Mutfak ve Banyo Tasarım" }), now)
	users := auth.New(auth.Options{Store: db, Cost: bcrypt.MinCost})
	u, err := users.AddUser(ctx, adminEmail, adminPass)
	if err != nil {
		t.Fatal(err)
	}
	h := web.New(web.Options{Store: db, Auth: users, Location: time.UTC,
		Notifier: notify.New(notify.Options{Store: db})}).Handler()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &notifyEnv{db: db, srv: srv, smtp: smtptest.New(t), user: u}
}

// TestNotifySettingsInBrowser sets the mail server and the owner's
// notifications in real Chromium, presses "send me a test" against the
// test's SMTP server, and reads the server's answer in plain words, on a
// desktop and a phone, in English and Turkish; nothing on the page is wider
// than the screen. Screenshots go to testoutput/.
func TestNotifySettingsInBrowser(t *testing.T) {
	ctx := browsertest.New(t)
	e := newNotifyEnv(t)
	base := e.srv.URL
	do, text := browserSteps(t, ctx)
	overflow := func() float64 {
		t.Helper()
		over, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`(function () {
			var w = document.documentElement.clientWidth, worst = 0;
			document.querySelectorAll("body, body *").forEach(function (e) {
				var r = e.getBoundingClientRect();
				if (r.width > 0 && r.right > w + 1) { worst = Math.max(worst, r.right - w); }
			});
			return Math.max(worst, document.documentElement.scrollWidth - w);
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		return over
	}
	browserLogIn(t, ctx, base, "#main")

	// The first set-up, on a desktop in English: the mail server (no
	// encryption: it runs on this machine), the address, and review leads
	// of one site too.
	do("the page", chromedp.Navigate(base+"/admin/notifications"), chromedp.WaitVisible(chromedp.CSS("#h-smtp")))
	do("the mail server",
		chromedp.SendKeys(chromedp.CSS("#smtp_host"), e.smtp.Host),
		chromedp.SetValue(chromedp.CSS("#smtp_port"), strconv.Itoa(e.smtp.Port)),
		chromedp.SetValue(chromedp.CSS("#smtp_tls"), "none"),
		chromedp.SendKeys(chromedp.CSS("#smtp_username"), smtptest.Username),
		chromedp.SendKeys(chromedp.CSS("#smtp_password"), smtptest.Password),
		chromedp.SendKeys(chromedp.CSS("#smtp_from"), "CleanAds <leads@istanbuldis.example>"),
		chromedp.Click(chromedp.CSS(`form[action="/admin/notifications/smtp"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(".alert.ok")),
	)
	do("my notifications",
		chromedp.Navigate(base+"/admin/notifications"), chromedp.WaitVisible(chromedp.CSS("#h-smtp")),
		chromedp.Click(chromedp.CSS(`input[name="review_dent"]`)),
		chromedp.Click(chromedp.CSS(`form[action="/admin/notifications"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(".alert.ok")),
	)
	rules, err := e.db.NotifyRules(context.Background(), e.user.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r := rules["dent"]; !r.Clean || !r.Review || r.Junk {
		t.Errorf("dent's rule as saved: %+v", r)
	}
	if r := rules["kitchen"]; !r.Clean || r.Review || r.Junk {
		t.Errorf("kitchen's rule as saved: %+v", r)
	}
	if s, err := e.db.NotifySMTPGet(context.Background()); err != nil || s.Password != smtptest.Password || s.TLS != "none" {
		t.Fatalf("the mail server as saved: %+v %v", s, err)
	}

	// A notification the mail server refused waits for its retry, its
	// error shown.
	now := time.Now()
	if err := e.db.InTx(context.Background(), func(tx *store.Tx) error {
		return tx.NotifyQueue(context.Background(), "dent", "ld_waiting", model.VerdictClean, now)
	}); err != nil {
		t.Fatal(err)
	}
	claimed, err := e.db.NotifyClaim(context.Background(), now, now.Add(time.Minute), 10)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claimed %d (%v)", len(claimed), err)
	}
	n := claimed[0]
	n.Attempts, n.LastError, n.NextAt = 3, "data: 552 5.3.4 Message size exceeds fixed limit", now.Add(4*time.Minute)
	if err := e.db.NotifyRecord(context.Background(), n, now); err != nil {
		t.Fatal(err)
	}

	sent := 0
	for _, view := range []struct {
		name string
		w, h int64
	}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
		for _, lang := range []string{"en", "tr"} {
			name := view.name + "-" + lang
			if err := e.db.UserSetLang(context.Background(), e.user.ID, lang, time.Now()); err != nil {
				t.Fatal(err)
			}
			opts := []chromedp.EmulateViewportOption{}
			if view.w < 500 {
				opts = append(opts, chromedp.EmulateMobile)
			}
			do(name+": screen", chromedp.EmulateViewport(view.w, view.h, opts...))
			do(name+": the page", chromedp.Navigate(base+"/admin/notifications"), chromedp.WaitVisible(chromedp.CSS("#test-mail")))
			do(name+": send me a test", chromedp.Click(chromedp.CSS("#test-mail")), chromedp.WaitVisible(chromedp.CSS("#test-result")))
			sent++
			got := text("#test-result")
			want := map[string]string{"en": "Your mail server took the test message for " + adminEmail,
				"tr": "Posta sunucunuz " + adminEmail + " için deneme iletisini aldı"}[lang]
			if !strings.Contains(got, want) || !strings.Contains(got, "250") {
				t.Errorf("%s: the test's answer: %q", name, got)
			}
			if got := text(".notify-list"); !strings.Contains(got, "552 5.3.4 Message size exceeds fixed limit") ||
				!strings.Contains(got, map[string]string{"en": "waiting to be sent", "tr": "gönderilmeyi bekliyor"}[lang]) {
				t.Errorf("%s: the latest notifications: %q", name, got)
			}
			if n := len(e.smtp.Messages()); n != sent {
				t.Errorf("%s: the SMTP server took %d mails, want %d", name, n, sent)
			}
			if over := overflow(); over > 0 {
				t.Errorf("%s: the page reaches %.0f px past the screen's edge", name, over)
			}
			browsertest.Screenshot(t, ctx, "notify-"+name)
		}
	}

	// The mail server down: the answer says so, in plain words.
	e.smtp.Stop()
	do("send with the server down", chromedp.Navigate(base+"/admin/notifications"), chromedp.WaitVisible(chromedp.CSS("#test-mail")),
		chromedp.Click(chromedp.CSS("#test-mail")), chromedp.WaitVisible(chromedp.CSS("#test-result")))
	if got := text("#test-result"); !strings.Contains(got, "sunucusuna ulaşılamadı") || !strings.Contains(got, fmt.Sprint(e.smtp.Port)) {
		t.Errorf("the answer with the server down: %q", got)
	}
	if over := overflow(); over > 0 {
		t.Errorf("the page with an error reaches %.0f px past the phone's edge", over)
	}
	browsertest.Screenshot(t, ctx, "notify-phone-tr-down")
}
