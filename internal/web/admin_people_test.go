package web_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"mime/quotedprintable"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/auth"
	"github.com/cleanads/cleanads/internal/model"

	"github.com/cleanads/cleanads/internal/notify"
	"github.com/cleanads/cleanads/internal/notify/smtptest"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
	"github.com/cleanads/cleanads/internal/web"
)

var linkInMail = regexp.MustCompile(`https?://[^\s]+/admin/password\?token=[A-Za-z0-9_%-]+`)

// mailedLink waits for the mail to `to` and returns the password link in it.
func mailedLink(t *testing.T, m *smtptest.Server, to string) string {
	t.Helper()
	var link string
	testkit.WaitFor(t, "the password link to arrive by mail", func() bool {
		for _, msg := range m.Messages() {
			if len(msg.To) == 1 && msg.To[0] == to {
				_, body, _ := strings.Cut(msg.Data, "\r\n\r\n")
				b, err := io.ReadAll(quotedprintable.NewReader(strings.NewReader(body)))
				if err != nil {
					t.Fatal(err)
				}
				link = linkInMail.FindString(string(b))
				return link != ""
			}
		}
		return false
	})
	return link
}

// TestPeopleEndToEnd: an admin adds a member limited to one site; the link
// arrives at a real SMTP server; the member sets a password through it, is
// logged in, sees only their site, cannot open another site's lead or the
// people page; the link does not work twice; removing the member ends their
// session.
func TestPeopleEndToEnd(t *testing.T) {
	e := newAdminEnv(t)
	ctx := context.Background()
	m := smtptest.New(t)
	if err := e.db.NotifySMTPSet(ctx, &store.NotifySMTP{Host: m.Host, Port: m.Port, Username: smtptest.Username,
		Password: smtptest.Password, From: "CleanAds <leads@istanbuldis.example>", TLS: "none"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	admin := e.login()
	// A kitchen lead, so the member has one to see.
	kitchen, _ := e.db.SiteByID(ctx, "kitchen")
	fill := int64(20000)
	kl, _, err := e.svc.Submit(ctx, kitchen, &app.LeadInput{Name: "Kerem Usta", Email: "kerem.usta@gmail.com", Phone: "0532 555 12 34",
		Message: "Mutfak dolabı için fiyat ve randevu istiyorum.", FillMS: &fill, ClientIP: "85.105.1.9", UserAgent: "Mozilla/5.0"})
	if err != nil {
		t.Fatal(err)
	}

	p := admin.post("/admin/people", url.Values{"email": {"Mutfak@Kitchen.example"}, "role": {"member"}, "sites": {"some"}, "site": {"kitchen"}})
	if p.code != http.StatusOK || !strings.Contains(p.body, "sent by e-mail") || strings.Contains(p.body, "password?token=") {
		t.Fatalf("add a user: %d %s", p.code, p.body)
	}
	list := admin.get("/admin/people").body
	if !strings.Contains(list, "mutfak@kitchen.example") || !strings.Contains(list, "Ankara Kitchens") || !strings.Contains(list, "Has not set a password yet.") {
		t.Errorf("the people page lacks the new member: %s", list)
	}
	link := mailedLink(t, m, "mutfak@kitchen.example")
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	path := u.RequestURI()

	member := e.client()
	if p := member.get(path); p.code != 200 || !strings.Contains(p.body, "mutfak@kitchen.example") {
		t.Fatalf("the link's page: %d %s", p.code, p.body)
	}
	token := u.Query().Get("token")
	// Two passwords that differ, or a short one, do not spend the link.
	if p := member.do("POST", "/admin/password", url.Values{"token": {token}, "password": {"kitchen pass 1"}, "password2": {"kitchen pass 2"}}); p.code != http.StatusUnprocessableEntity {
		t.Errorf("different passwords: %d", p.code)
	}
	if p := member.do("POST", "/admin/password", url.Values{"token": {token}, "password": {"short"}, "password2": {"short"}}); p.code != http.StatusUnprocessableEntity || !strings.Contains(p.body, "8 to 72") {
		t.Errorf("short password: %d %s", p.code, p.body)
	}
	p = member.do("POST", "/admin/password", url.Values{"token": {token}, "password": {"kitchen password"}, "password2": {"kitchen password"}})
	if p.code != http.StatusSeeOther || p.hdr.Get("Location") != "/admin/" {
		t.Fatalf("set the password: %d %s", p.code, p.body)
	}
	// Logged in: the inbox shows the kitchen lead and none of dent's.
	inbox := member.get("/admin/")
	if inbox.code != 200 || !strings.Contains(inbox.body, string(kl.ID)) {
		t.Fatalf("the member's inbox: %d", inbox.code)
	}
	for _, l := range e.leads {
		if strings.Contains(inbox.body, string(l.ID)) {
			t.Errorf("the member's inbox shows dent's lead %s", l.ID)
		}
		if p := member.get("/admin/leads/" + string(l.ID)); p.code != http.StatusNotFound {
			t.Errorf("the member opened dent's lead %s: %d", l.ID, p.code)
		}
	}
	if p := member.get("/admin/?site=dent"); strings.Contains(p.body, string(e.leads["clean"].ID)) {
		t.Error("?site=dent shows dent's leads to the member")
	}
	if p := member.get("/admin/leads/" + string(kl.ID)); p.code != 200 {
		t.Errorf("the member's own lead: %d", p.code)
	}
	for _, path := range []string{"/admin/sites/dent", "/admin/sites/dent/readiness", "/admin/deliveries?site=dent"} {
		if p := member.get(path); p.code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, p.code)
		}
	}
	for path, hide := range map[string]string{"/admin/deliveries": "dl_dead1", "/admin/sites": "Istanbul Dental",
		"/admin/dashboard?site=dent": "Istanbul Dental", "/admin/report?site=dent": "Istanbul Dental", "/admin/notifications": "Istanbul Dental"} {
		if p := member.get(path); p.code != 200 || strings.Contains(p.body, hide) {
			t.Errorf("%s: %d, shows %q to the member", path, p.code, hide)
		}
	}
	if p := member.post("/admin/leads/"+string(e.leads["clean"].ID)+"/stages", url.Values{"stage": {"won"}}); p.code != http.StatusNotFound {
		t.Errorf("the member set a stage on dent's lead: %d", p.code)
	}
	if p := member.get("/admin/people"); p.code != http.StatusForbidden {
		t.Errorf("a member opened the people page: %d", p.code)
	}
	if p := member.get("/admin/"); strings.Contains(p.body, `href="/admin/people"`) {
		t.Error("a member's menu offers People")
	}
	// The link works once.
	other := e.client()
	if p := other.get(path); p.code != http.StatusGone || !strings.Contains(p.body, "used already") {
		t.Errorf("the used link's page: %d %s", p.code, p.body)
	}
	if p := other.do("POST", "/admin/password", url.Values{"token": {token}, "password": {"stolen password"}, "password2": {"stolen password"}}); p.code != http.StatusGone {
		t.Errorf("the link used twice: %d", p.code)
	}
	// Logs in with the new password too.
	if p := e.client().do("POST", "/admin/login", url.Values{"email": {"mutfak@kitchen.example"}, "password": {"kitchen password"}}); p.code != http.StatusSeeOther {
		t.Errorf("login with the new password: %d", p.code)
	}
	// The admin gives the member dent instead: it applies at once.
	mu, err := e.db.UserByEmail(ctx, "mutfak@kitchen.example")
	if err != nil {
		t.Fatal(err)
	}
	if p := admin.post("/admin/people/"+string(mu.ID)+"/access", url.Values{"role": {"member"}, "sites": {"some"}, "site": {"dent"}}); p.code != http.StatusSeeOther {
		t.Fatalf("change the member's sites: %d %s", p.code, p.body)
	}
	if p := member.get("/admin/leads/" + string(e.leads["clean"].ID)); p.code != 200 {
		t.Errorf("dent's lead after the change: %d", p.code)
	}
	if p := member.get("/admin/leads/" + string(kl.ID)); p.code != http.StatusNotFound {
		t.Errorf("the kitchen lead after the change: %d", p.code)
	}
	// The last admin stays an admin.
	me, _ := e.db.UserByEmail(ctx, adminEmail)
	if p := admin.post("/admin/people/"+string(me.ID)+"/access", url.Values{"role": {"member"}, "sites": {"all"}}); p.code != http.StatusConflict {
		t.Errorf("demoting the last admin: %d", p.code)
	}
	// The admin cannot remove themself; removing the member logs them out.
	if p := admin.post("/admin/people/"+string(me.ID)+"/remove", nil); p.code != http.StatusConflict {
		t.Errorf("removing oneself: %d", p.code)
	}
	if p := admin.post("/admin/people/"+string(mu.ID)+"/remove", nil); p.code != http.StatusSeeOther {
		t.Fatalf("remove the member: %d %s", p.code, p.body)
	}
	if p := member.get("/admin/"); p.code != http.StatusSeeOther || !strings.HasPrefix(p.hdr.Get("Location"), "/admin/login") {
		t.Errorf("the removed member's session still works: %d", p.code)
	}
	if _, err := e.db.UserByEmail(ctx, "mutfak@kitchen.example"); !errors.Is(err, model.ErrNotFound) {
		t.Errorf("the removed member is still a user: %v", err)
	}
}

// TestPeopleLinkWithoutMailServer: without a mail server the link is shown
// once on the page, and it works.
func TestPeopleLinkWithoutMailServer(t *testing.T) {
	e := newAdminEnv(t)
	admin := e.login()
	p := admin.post("/admin/people", url.Values{"email": {"second@istanbuldis.example"}, "role": {"admin"}, "sites": {"all"}})
	link := linkInMail.FindString(p.body)
	if p.code != 200 || link == "" || !strings.Contains(p.body, "No mail server is set") {
		t.Fatalf("add without a mail server: %d %s", p.code, p.body)
	}
	if again := admin.get("/admin/people"); strings.Contains(again.body, "password?token=") {
		t.Error("the link is shown again")
	}
	u, _ := url.Parse(link)
	c := e.client()
	p = c.do("POST", "/admin/password", url.Values{"token": {u.Query().Get("token")}, "password": {"second admin pw"}, "password2": {"second admin pw"}})
	if p.code != http.StatusSeeOther {
		t.Fatalf("set the password: %d %s", p.code, p.body)
	}
	if p := c.get("/admin/people"); p.code != 200 {
		t.Errorf("a second admin opens people: %d", p.code)
	}
	// Two admins: the first may be removed by the second, then the second is
	// the last and stays.
	c.get("/admin/people")
	first, _ := e.db.UserByEmail(context.Background(), adminEmail)
	if p := c.post("/admin/people/"+string(first.ID)+"/remove", nil); p.code != http.StatusSeeOther {
		t.Errorf("remove the first admin: %d", p.code)
	}
	// An unknown link's token guessed many times is throttled like logins.
	g := e.client()
	var last int
	for range 25 {
		last = g.do("POST", "/admin/password", url.Values{"token": {"guess"}, "password": {"whatever pw"}, "password2": {"whatever pw"}}).code
	}
	if last != http.StatusTooManyRequests {
		t.Errorf("guessing links: %d, want 429", last)
	}
}

// syncBuf is a log sink the server's goroutines write to.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestPasswordLinkNotLogged: making, opening, failing and using a link logs
// neither its token nor the user's e-mail.
func TestPasswordLinkNotLogged(t *testing.T) {
	ctx := context.Background()
	db := storetest.New(t)
	now := time.Now()
	testkit.AddSite(t, db, testkit.Site(), now)
	var logs syncBuf
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	users := auth.New(auth.Options{Store: db, Cost: bcrypt.MinCost, Logger: log})
	if _, err := users.AddUser(ctx, adminEmail, adminPass); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(web.New(web.Options{Store: db, Auth: users, Location: time.UTC, Logger: log,
		Notifier: notify.New(notify.Options{Store: db, Logger: log})}).Handler())
	t.Cleanup(srv.Close)
	e := &adminEnv{t: t, db: db, srv: srv}
	admin := e.login()
	p := admin.post("/admin/people", url.Values{"email": {"secret.person@dent.example"}, "role": {"member"}, "sites": {"all"}})
	link := linkInMail.FindString(p.body)
	if link == "" {
		t.Fatalf("no link: %d %s", p.code, p.body)
	}
	u, _ := url.Parse(link)
	token := u.Query().Get("token")
	c := e.client()
	c.get(u.RequestURI())
	c.do("POST", "/admin/password", url.Values{"token": {token}, "password": {"short"}, "password2": {"short"}})
	c.do("POST", "/admin/password", url.Values{"token": {token}, "password": {"long enough pw"}, "password2": {"long enough pw"}})
	c.do("POST", "/admin/password", url.Values{"token": {token}, "password": {"long enough pw"}, "password2": {"long enough pw"}})
	c.get(u.RequestURI())
	got := logs.String()
	if !strings.Contains(got, "password set by link") {
		t.Fatalf("the logs lack the link's use, so they were not captured: %s", got)
	}
	for _, secret := range []string{token, url.QueryEscape(token), "secret.person"} {
		if strings.Contains(got, secret) {
			t.Errorf("the logs hold %q:\n%s", secret, got)
		}
	}
}
