package notify_test

import (
	"context"
	"encoding/json"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/notify"
	"github.com/cleanads/cleanads/internal/notify/smtptest"
	"github.com/cleanads/cleanads/internal/qualify"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// fixture is a site with its owner, who wants clean leads by mail (through
// a real SMTP server run here) and in a Slack-style chat (a local
// receiver), an app.Service that takes leads, and a notify.Runner.
type fixture struct {
	t    *testing.T
	db   *store.DB
	clk  *testkit.Clock
	svc  *app.Service
	site *model.Site
	smtp *smtptest.Server
	chat *chatReceiver
	r    *notify.Runner
}

const publicURL = "https://t.example.com"

func newFixture(t *testing.T, rule store.NotifyRule) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{t: t, db: storetest.New(t), clk: testkit.NewClock(time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)),
		smtp: smtptest.New(t), chat: newChatReceiver(t)}
	testkit.AddSite(t, f.db, testkit.Site(), f.clk.Now())
	f.site, _ = f.db.SiteByID(ctx, "dent")
	now := f.clk.Now()
	must(t, f.db.UserInsert(ctx, &model.User{ID: "u1", Email: "owner@dent.example", PasswordHash: "x", CreatedAt: now, UpdatedAt: now}))
	must(t, f.db.NotifySMTPSet(ctx, &store.NotifySMTP{Host: f.smtp.Host, Port: f.smtp.Port, Username: smtptest.Username,
		Password: smtptest.Password, From: "CleanAds <leads@dent.example>", TLS: notify.TLSNone}, now))
	must(t, f.db.NotifyChannelSet(ctx, &store.NotifyChannel{User: "u1", Channel: store.NotifyEmail, Kind: "smtp", Target: "owner@dent.example"}, now))
	must(t, f.db.NotifyChannelSet(ctx, &store.NotifyChannel{User: "u1", Channel: store.NotifyChat, Kind: notify.ChatSlack, Target: f.chat.URL}, now))
	rule.User, rule.Site = "u1", "dent"
	must(t, f.db.NotifyRuleSet(ctx, rule))
	f.svc = app.New(app.Options{Store: f.db, Now: f.clk.Now})
	f.r = notify.New(notify.Options{Store: f.db, Now: f.clk.Now, PublicURL: publicURL, Poll: 20 * time.Millisecond})
	return f
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func i64(v int64) *int64 { return &v }

// lead is an ordinary enquiry; edits make it another person, or junk.
func (f *fixture) lead(name, phone string, edits ...func(*app.LeadInput)) *model.Lead {
	f.t.Helper()
	in := &app.LeadInput{Email: strings.ToLower(strings.Fields(name)[0]) + "@gmail.com", Phone: phone, Name: name,
		Message: "Merhaba, implant tedavisi için randevu almak istiyorum. Hafta içi öğleden sonra uygundur.",
		FillMS:  i64(24000), PageURL: "https://www.dent.example/implant", ClientIP: "85.105.1.2", UserAgent: "Mozilla/5.0"}
	for _, e := range edits {
		e(in)
	}
	l, _, err := f.svc.Submit(context.Background(), f.site, in)
	if err != nil {
		f.t.Fatal(err)
	}
	return l
}

func grey(in *app.LeadInput) { in.Email, in.Message, in.FillMS = "", "fiyat?", i64(9000) }
func junk(in *app.LeadInput) { in.Honeypot = "http://spam.example" }

func (f *fixture) runOnce() int {
	f.t.Helper()
	n, err := f.r.RunOnce(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// mailOf is a mail as the owner reads it: its subject and decoded body.
type mailOf struct{ To, Subject, Body string }

func (f *fixture) mails() []mailOf {
	f.t.Helper()
	var out []mailOf
	for _, m := range f.smtp.Messages() {
		msg, err := mail.ReadMessage(strings.NewReader(m.Data))
		if err != nil {
			f.t.Fatal(err)
		}
		subject, _ := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
		body, _ := io.ReadAll(quotedprintable.NewReader(msg.Body))
		out = append(out, mailOf{To: strings.Join(m.To, ","), Subject: subject, Body: string(body)})
	}
	return out
}

// chatReceiver is a chat webhook that keeps what it is posted.
type chatReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
	status int
}

func newChatReceiver(t *testing.T) *chatReceiver {
	c := &chatReceiver{status: http.StatusOK}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.status != http.StatusOK {
			http.Error(w, "invalid_token", c.status)
			return
		}
		c.bodies = append(c.bodies, string(b))
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *chatReceiver) got() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.bodies...)
}

// A clean lead reaches the owner by mail, through the real SMTP server,
// with its name, its verdict and the link to its admin page, and in the
// chat as {"text": ...}, from the running runner that the lead's commit
// does not wait for; a junk lead reaches no one.
func TestCleanLeadNotifiesJunkDoesNot(t *testing.T) {
	t.Parallel()
	f := newFixture(t, store.NotifyRule{Clean: true})
	must(t, f.r.Start(context.Background()))
	t.Cleanup(func() { _ = f.r.Stop(context.Background()) })

	bad := f.lead("Spam Bot", "0542 318 22 70", junk)
	if bad.Verdict != model.VerdictJunk {
		t.Fatalf("the junk lead was judged %s", bad.Verdict)
	}
	good := f.lead("Ayşe Yılmaz", "0532 412 87 19")
	if good.Verdict != model.VerdictClean {
		t.Fatalf("the real lead was judged %s", good.Verdict)
	}
	f.r.Wake()
	// Received is not yet recorded: stopped between the two, the runner
	// would leave a notification pending (to be sent again at the next
	// start), so the test waits for both to be recorded sent too.
	testkit.WaitFor(t, "the mail and the chat message, recorded sent", func() bool {
		if len(f.smtp.Messages()) < 1 || len(f.chat.got()) < 1 {
			return false
		}
		list, err := f.db.NotifyList(context.Background(), "u1", 10)
		if err != nil || len(list) < 2 {
			return false
		}
		return !slices.ContainsFunc(list, func(n *store.Notification) bool { return n.State != store.NotifySent })
	})
	must(t, f.r.Stop(context.Background()))

	mails := f.mails()
	if len(mails) != 1 {
		t.Fatalf("%d mails, want 1 (the clean lead's): %+v", len(mails), mails)
	}
	m := mails[0]
	link := publicURL + "/admin/leads/" + string(good.ID)
	if m.To != "owner@dent.example" || !strings.Contains(m.Subject, "New real lead") || !strings.Contains(m.Subject, "Ayşe Yılmaz") ||
		!strings.Contains(m.Body, link) || !strings.Contains(m.Body, "+90 532 412 87 19") && !strings.Contains(m.Body, "0532 412 87 19") {
		t.Errorf("the mail:\nto %s\nsubject %s\n%s", m.To, m.Subject, m.Body)
	}
	if strings.Contains(m.Body, "Spam Bot") {
		t.Errorf("the junk lead is in the mail")
	}
	chats := f.chat.got()
	var slack struct{ Text string }
	if len(chats) != 1 || json.Unmarshal([]byte(chats[0]), &slack) != nil || !strings.Contains(slack.Text, "Ayşe Yılmaz") ||
		!strings.Contains(slack.Text, link) {
		t.Errorf("the chat got %q", chats)
	}
	list, err := f.db.NotifyList(context.Background(), "u1", 10)
	must(t, err)
	for _, n := range list {
		if n.Lead == bad.ID {
			t.Errorf("a notification was queued for the junk lead: %+v", n)
		}
		if n.State != store.NotifySent {
			t.Errorf("notification %s/%s is %s (%s)", n.Lead, n.Channel, n.State, n.LastError)
		}
	}
}

// With the SMTP server down, the notifications wait with their error
// recorded and are retried with backoff; when it is back, each is sent
// once, none lost. The chat, which stayed up, went at once.
func TestSMTPOutageLosesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, store.NotifyRule{Clean: true})
	f.smtp.Stop()
	var leads []*model.Lead
	for i, name := range []string{"Ayşe Yılmaz", "Mehmet Demir", "Zeynep Kaya"} {
		leads = append(leads, f.lead(name, []string{"0532 412 87 19", "0533 218 44 91", "0535 671 20 48"}[i]))
	}
	if n := f.runOnce(); n != 3 {
		t.Errorf("with the SMTP server down %d went, want the 3 chat messages", n)
	}
	list, err := f.db.NotifyList(context.Background(), "u1", 10)
	must(t, err)
	for _, n := range list {
		if n.Channel == store.NotifyEmail && (n.State != store.NotifyPending || n.Attempts != 1 ||
			!strings.Contains(n.LastError, "connect") || !n.NextAt.Equal(f.clk.Now().Add(notify.Backoff(1)))) {
			t.Errorf("mail of %s: %s, attempts %d, next %v, error %q", n.Lead, n.State, n.Attempts, n.NextAt, n.LastError)
		}
	}
	if n := f.runOnce(); n != 0 {
		t.Errorf("%d went before their backoff ended", n)
	}
	f.clk.Add(notify.Backoff(1))
	if n := f.runOnce(); n != 0 {
		t.Errorf("%d went with the server still down", n)
	}
	f.smtp.Start()
	f.clk.Add(notify.Backoff(2))
	if n := f.runOnce(); n != 3 {
		t.Errorf("%d went once the server was back, want 3", n)
	}
	f.clk.Add(time.Hour)
	if n := f.runOnce(); n != 0 {
		t.Errorf("%d went again", n)
	}
	mails := f.mails()
	if len(mails) != 3 {
		t.Fatalf("%d mails, want 3", len(mails))
	}
	for _, l := range leads {
		k := 0
		for _, m := range mails {
			if strings.Contains(m.Body, "/admin/leads/"+string(l.ID)+"\r\n") || strings.HasSuffix(strings.TrimSpace(m.Body), string(l.ID)) {
				k++
			}
		}
		if k != 1 {
			t.Errorf("lead %s (%s) was mailed %d times", l.ID, l.Name, k)
		}
	}
	if got := len(f.chat.got()); got != 3 {
		t.Errorf("%d chat messages, want 3", got)
	}
}

// A lead waiting for evidence notifies only when the owner asked for it;
// when evidence makes a lead clean it notifies as clean, once, whatever
// else happens to it.
func TestReviewNotifiesOnlyWhenEnabled(t *testing.T) {
	t.Parallel()
	f := newFixture(t, store.NotifyRule{Clean: true})
	ctx := context.Background()
	first := f.lead("Mehmet Demir", "0533 218 44 90", grey)
	if first.Verdict != model.VerdictReview {
		t.Fatalf("the grey lead was judged %s", first.Verdict)
	}
	if n := f.runOnce(); n != 0 || len(f.smtp.Messages()) != 0 {
		t.Fatalf("a review lead notified (%d) though only clean is asked for", n)
	}
	must(t, f.db.NotifyRuleSet(ctx, store.NotifyRule{User: "u1", Site: "dent", Clean: true, Review: true}))
	second := f.lead("Hakan Şahin", "0536 902 13 57", grey)
	if n := f.runOnce(); n != 2 {
		t.Fatalf("the review lead sent %d, want a mail and a chat message", n)
	}
	if m := f.mails(); len(m) != 1 || !strings.Contains(m[0].Subject, "waiting for evidence") || !strings.Contains(m[0].Subject, "Hakan Şahin") {
		t.Errorf("the review mail: %+v", m)
	}
	// Evidence: the first lead answered on WhatsApp, so it is clean now.
	if _, err := f.svc.AddEvidence(ctx, f.site, first.ID, qualify.Evidence{Type: qualify.EvidenceWhatsAppReply}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.AddEvidence(ctx, f.site, first.ID, qualify.Evidence{Type: qualify.EvidenceCustomer}); err != nil {
		t.Fatal(err)
	}
	if n := f.runOnce(); n != 2 {
		t.Fatalf("the lead moved to clean sent %d, want 2", n)
	}
	m := f.mails()
	if len(m) != 2 || !strings.Contains(m[1].Subject, "New real lead") || !strings.Contains(m[1].Subject, "Mehmet Demir") {
		t.Errorf("the mail of the lead moved to clean: %+v", m)
	}
	_ = second
}

// A notification whose channel the owner removed before it went is dropped,
// never sent elsewhere; a failing webhook's answer is the recorded error.
func TestRemovedChannelDropsAndWebhookErrorIsRecorded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, store.NotifyRule{Clean: true})
	ctx := context.Background()
	f.chat.mu.Lock()
	f.chat.status = http.StatusForbidden
	f.chat.mu.Unlock()
	l := f.lead("Ayşe Yılmaz", "0532 412 87 19")
	must(t, f.db.NotifyChannelSet(ctx, &store.NotifyChannel{User: "u1", Channel: store.NotifyEmail}, f.clk.Now()))
	f.runOnce()
	list, err := f.db.NotifyList(ctx, "u1", 10)
	must(t, err)
	states := map[string]*store.Notification{}
	for _, n := range list {
		states[n.Channel] = n
	}
	if e := states[store.NotifyEmail]; e == nil || e.State != store.NotifyDropped {
		t.Errorf("the mail to a removed address: %+v", e)
	}
	if c := states[store.NotifyChat]; c == nil || c.State != store.NotifyPending || !strings.Contains(c.LastError, "403") ||
		!strings.Contains(c.LastError, "invalid_token") {
		t.Errorf("the refused chat message: %+v", c)
	}
	if len(f.smtp.Messages()) != 0 {
		t.Errorf("a mail went to a removed address")
	}
	_ = l
}

// The test button's send shows the server's own answer: its queue id when
// it took the mail, its refusal (535) with a wrong password, and the
// network's error when nothing listens.
func TestTestMailAnswers(t *testing.T) {
	t.Parallel()
	srv := smtptest.New(t)
	r := notify.New(notify.Options{})
	s := &store.NotifySMTP{Host: srv.Host, Port: srv.Port, Username: smtptest.Username, Password: smtptest.Password,
		From: "leads@dent.example", TLS: notify.TLSNone}
	ctx := context.Background()
	if a := r.TestMail(ctx, s, "owner@dent.example", "tr"); !a.OK || a.Code != 250 {
		t.Errorf("a good send answered %+v", a)
	}
	if m := srv.Messages(); len(m) != 1 || !strings.Contains(m[0].Data, "CleanAds") {
		t.Errorf("the test mail: %+v", m)
	}
	bad := *s
	bad.Password = "wrong"
	if a := r.TestMail(ctx, &bad, "owner@dent.example", "en"); a.OK || a.Stage != "auth" || a.Code != 535 ||
		!strings.Contains(a.Text, "Authentication credentials invalid") {
		t.Errorf("a wrong password answered %+v", a)
	}
	srv.Stop()
	if a := r.TestMail(ctx, s, "owner@dent.example", "en"); a.OK || a.Stage != "connect" || !strings.Contains(a.Text, "refused") {
		t.Errorf("a server down answered %+v", a)
	}
	remote := *s
	remote.Host = "mail.example.com"
	if a := r.TestMail(ctx, &remote, "owner@dent.example", "en"); a.OK || a.Stage != "setup" {
		t.Errorf("no encryption to another machine answered %+v", a)
	}
}

// STARTTLS and TLS from the first byte both carry the mail, the server's
// certificate checked; the wrong one of the two fails at the secure
// connection, not later.
func TestTestMailOverTLS(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name     string
		implicit bool
		mode     string
		ok       bool
	}{
		{"starttls", false, notify.TLSStart, true},
		{"tls", true, notify.TLSWrap, true},
		{"tls against starttls", false, notify.TLSWrap, false},
		{"starttls against tls", true, notify.TLSStart, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := smtptest.NewTLS(t, c.implicit)
			r := notify.New(notify.Options{RootCAs: srv.RootCAs})
			s := &store.NotifySMTP{Host: srv.Host, Port: srv.Port, Username: smtptest.Username, Password: smtptest.Password,
				From: "leads@dent.example", TLS: c.mode}
			a := r.TestMail(ctx, s, "owner@dent.example", "en")
			if a.OK != c.ok || !c.ok && a.Stage != "tls" && a.Stage != "connect" {
				t.Errorf("answered %+v", a)
			}
			if got := len(srv.Messages()); got != map[bool]int{true: 1, false: 0}[c.ok] {
				t.Errorf("the server took %d mails", got)
			}
			if c.ok {
				// Without the test's CA, the certificate is refused.
				a := notify.New(notify.Options{}).TestMail(ctx, s, "owner@dent.example", "en")
				if a.OK || a.Stage != "tls" {
					t.Errorf("an untrusted certificate answered %+v", a)
				}
			}
		})
	}
}

// The daily digest goes once a day from 8 in the admin's zone: the day
// before's leads by verdict, the real and waiting ones named with links,
// junk only counted; not before 8, not twice, again the next day; an SMTP
// outage only delays it.
func TestDailyDigest(t *testing.T) {
	t.Parallel()
	f := newFixture(t, store.NotifyRule{Digest: true})
	ctx := context.Background()
	ist, err := time.LoadLocation("Europe/Istanbul")
	must(t, err)
	r := notify.New(notify.Options{Store: f.db, Now: f.clk.Now, PublicURL: publicURL, Location: ist})
	// 2026-12-05 08:00 UTC is 11:00 in Istanbul: the leads are of the 5th.
	good := f.lead("Ayşe Yılmaz", "0532 412 87 19")
	wait := f.lead("Mehmet Demir", "0533 218 44 90", grey)
	bad := f.lead("Spam Bot", "0542 318 22 70", junk)
	if n := f.runOnce(); n != 0 {
		t.Errorf("%d sent at once, with only the digest asked for", n)
	}
	digest := func() int {
		t.Helper()
		n, err := r.Digest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	f.clk.Set(time.Date(2026, 12, 6, 4, 59, 0, 0, time.UTC)) // 07:59 in Istanbul
	if n := digest(); n != 0 {
		t.Errorf("%d digests before 8", n)
	}
	f.smtp.Stop()
	f.clk.Set(time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC))
	if n, err := r.Digest(ctx); n != 0 || err == nil || !strings.Contains(err.Error(), "connect") {
		t.Errorf("with the SMTP server down: %d, %v", n, err)
	}
	f.smtp.Start()
	f.clk.Add(10 * time.Minute)
	if n := digest(); n != 1 {
		t.Fatalf("%d digests at 8:10, want 1", n)
	}
	if n := digest(); n != 0 {
		t.Errorf("the digest went twice")
	}
	m := f.mails()
	if len(m) != 1 {
		t.Fatalf("%d mails", len(m))
	}
	body := m[0].Body
	if !strings.Contains(m[0].Subject, "2026-12-05") || !strings.Contains(body, "3 leads: 1 real, 1 waiting for evidence, 1 junk") ||
		!strings.Contains(body, publicURL+"/admin/leads/"+string(good.ID)) || !strings.Contains(body, "/admin/leads/"+string(wait.ID)) ||
		strings.Contains(body, string(bad.ID)) || strings.Contains(body, "Spam Bot") {
		t.Errorf("the digest:\n%s\n%s", m[0].Subject, body)
	}
	f.clk.Add(24 * time.Hour)
	if n := digest(); n != 1 {
		t.Errorf("%d digests the next day, want 1", n)
	}
	if m := f.mails(); len(m) != 2 || !strings.Contains(m[1].Body, "0 leads") {
		t.Errorf("the next day's digest: %+v", m[len(m)-1])
	}
}
