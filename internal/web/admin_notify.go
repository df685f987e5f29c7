package web

import (
	"context"
	"errors"
	"net/http"
	"net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// Notifier checks the notification settings and sends the settings page's
// tests at once; notify.Runner is one (wired in cli, since web never
// imports the workers). Nil: the page saves settings without checking
// them against the sender and offers no test.
type Notifier interface {
	CheckSMTP(s *store.NotifySMTP) map[string]string
	CheckChat(kind, target string) string
	TestMail(ctx context.Context, s *store.NotifySMTP, to, lang string) model.SendAnswer
	TestChat(ctx context.Context, kind, target, lang string) model.SendAnswer
	SendMail(ctx context.Context, s *store.NotifySMTP, to, subject, body string) model.SendAnswer
}

// chatKinds are the chat webhook kinds the page offers, with their labels.
var chatKinds = []struct{ Kind, Label string }{
	{"slack", "Slack-style, a text (Slack, Mattermost, Rocket.Chat, Google Chat)"},
	{"telegram", "Telegram bot (sendMessage?chat_id=…)"},
	{"teams", "Microsoft Teams (Workflows)"},
	{"generic", "Generic JSON (see the manual)"},
}

// notifyData is the notifications page: the user's own settings, the mail
// server everyone's mail goes through, a test's answer, and the user's
// latest notifications.
type notifyData struct {
	Mine     notifyForm
	SMTP     smtpForm
	Sites    []notifySite
	Kinds    []struct{ Kind, Label string }
	Test     *notifyTest
	Recent   []notifyRow
	CanTest  bool
	SMTPSet  bool
	ChatSet  bool
	MailAddr string
}

// notifyForm is the user's channels as typed.
type notifyForm struct {
	Email, ChatKind, ChatURL string
	ChatRemove               bool
	Problems                 map[string]string
}

// smtpForm is the mail server's settings as typed; an empty password keeps
// the one stored.
type smtpForm struct {
	Host, Port, Username, Password, From, TLS string
	PasswordSet                               bool
	Problems                                  map[string]string
}

// notifySite is one site's verdicts that notify the user.
type notifySite struct {
	ID, Name                    string
	Clean, Review, Junk, Digest bool
}

// notifyTest is a test send's outcome in plain words, with the server's own
// answer.
type notifyTest struct {
	OK     bool
	Words  string
	Answer string
}

// notifyRow is one of the user's notifications.
type notifyRow struct {
	LeadID, LeadName, Verdict, Channel, State, LastError string
	StateWords                                           string
	When, NextAt                                         string
	Attempts                                             int
}

// adminNotify shows the notification settings.
func (s *Server) adminNotify(w http.ResponseWriter, r *http.Request) {
	p := s.newPage(r, "notify", "Notifications")
	switch r.URL.Query().Get("saved") {
	case "mine":
		p.Notice = tr(p.Lang, "Your notification settings are saved.")
	case "smtp":
		p.Notice = tr(p.Lang, "The mail server is saved. Send yourself a test to check it.")
	}
	s.renderNotify(w, r, p, http.StatusOK, nil, nil, nil)
}

func (s *Server) renderNotify(w http.ResponseWriter, r *http.Request, p *page, status int, mine *notifyForm, sf *smtpForm, test *notifyTest) {
	ctx := r.Context()
	a := adminFrom(ctx)
	d := notifyData{Kinds: chatKinds, Test: test, CanTest: s.notifier != nil, MailAddr: a.user.Email}
	chans, err := s.db.NotifyChannels(ctx, a.user.ID)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	for _, c := range chans {
		switch c.Channel {
		case store.NotifyEmail:
			d.Mine.Email, d.MailAddr = c.Target, c.Target
		case store.NotifyChat:
			d.Mine.ChatKind, d.ChatSet = c.Kind, true
		}
	}
	if mine != nil {
		d.Mine = *mine
	} else if len(chans) == 0 {
		d.Mine.Email = a.user.Email // a suggestion: nothing is sent until saved
	}
	stored, err := s.db.NotifySMTPGet(ctx)
	switch {
	case err == nil:
		d.SMTPSet = true
		d.SMTP = smtpForm{Host: stored.Host, Port: strconv.Itoa(stored.Port), Username: stored.Username, From: stored.From,
			TLS: stored.TLS, PasswordSet: stored.Password != ""}
	case errors.Is(err, model.ErrNotFound):
		d.SMTP = smtpForm{Port: "587", TLS: "starttls"}
	default:
		s.adminFail(w, r, err)
		return
	}
	if sf != nil {
		sf.PasswordSet = d.SMTP.PasswordSet
		d.SMTP = *sf
	}
	sites, err := s.siteList(r)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	rules, err := s.db.NotifyRules(ctx, a.user.ID)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	for _, site := range sites {
		row := notifySite{ID: string(site.ID), Name: site.Name}
		if rule, ok := rules[site.ID]; ok {
			row.Clean, row.Review, row.Junk, row.Digest = rule.Clean, rule.Review, rule.Junk, rule.Digest
		} else if len(chans) == 0 {
			row.Clean = true // the suggestion for a first set-up: real leads only
		}
		d.Sites = append(d.Sites, row)
	}
	list, err := s.db.NotifyList(ctx, a.user.ID, 20)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	for _, n := range list {
		row := notifyRow{LeadID: string(n.Lead), LeadName: n.LeadName, Verdict: string(n.Verdict), Channel: n.Channel,
			State: n.State, StateWords: notifyState(p.Lang, n.State), LastError: n.LastError, Attempts: n.Attempts,
			When: s.when(n.Created)}
		row.Channel = tr(p.Lang, "E-mail")
		if n.Channel == store.NotifyChat {
			row.Channel = tr(p.Lang, "Chat")
		}
		if n.State == store.NotifyPending && n.Attempts > 0 {
			row.NextAt = s.when(n.NextAt)
		}
		d.Recent = append(d.Recent, row)
	}
	p.D = d
	s.render(w, r, status, "notify", p)
}

// adminNotifySave saves the user's channels and which verdicts of each
// site notify them.
func (s *Server) adminNotifySave(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	a := adminFrom(ctx)
	p := s.newPage(r, "notify", "Notifications")
	form := notifyForm{Email: strings.TrimSpace(r.PostFormValue("email")), ChatKind: r.PostFormValue("chat_kind"),
		ChatURL: strings.TrimSpace(r.PostFormValue("chat_url")), ChatRemove: r.PostFormValue("chat_remove") != ""}
	problems := map[string]string{}
	if form.Email != "" {
		if addr, err := mail.ParseAddress(form.Email); err != nil || addr.Address != form.Email {
			problems["email"] = tr(p.Lang, "Write one e-mail address, e.g. you@example.com.")
		}
	}
	if form.ChatURL != "" && s.notifier != nil {
		if msg := s.notifier.CheckChat(form.ChatKind, form.ChatURL); msg != "" {
			problems["chat_url"] = tr(p.Lang, msg)
		}
	}
	if len(problems) > 0 {
		form.Problems = problems
		p.Problem = tr(p.Lang, "Some settings need a fix; see below.")
		s.renderNotify(w, r, p, http.StatusUnprocessableEntity, &form, nil, nil)
		return
	}
	now := s.now()
	err := s.db.NotifyChannelSet(ctx, &store.NotifyChannel{User: a.user.ID, Channel: store.NotifyEmail, Kind: "smtp", Target: form.Email}, now)
	if err == nil && (form.ChatURL != "" || form.ChatRemove) {
		target := form.ChatURL
		if form.ChatRemove {
			target = ""
		}
		err = s.db.NotifyChannelSet(ctx, &store.NotifyChannel{User: a.user.ID, Channel: store.NotifyChat, Kind: form.ChatKind, Target: target}, now)
	} else if err == nil && form.ChatKind != "" {
		err = s.chatKindSet(ctx, a.user.ID, form.ChatKind, now)
	}
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	sites, err := s.siteList(r)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	for _, site := range sites {
		id := string(site.ID)
		rule := store.NotifyRule{User: a.user.ID, Site: site.ID, Clean: r.PostFormValue("clean_"+id) != "",
			Review: r.PostFormValue("review_"+id) != "", Junk: r.PostFormValue("junk_"+id) != "",
			Digest: r.PostFormValue("digest_"+id) != ""}
		if err := s.db.NotifyRuleSet(ctx, rule); err != nil {
			s.adminFail(w, r, err)
			return
		}
	}
	http.Redirect(w, r, "/admin/notifications?saved=mine", http.StatusSeeOther)
}

// chatKindSet changes the kind of the user's chat webhook, its address
// kept.
func (s *Server) chatKindSet(ctx context.Context, u model.UserID, kind string, now time.Time) error {
	chans, err := s.db.NotifyChannels(ctx, u)
	if err != nil {
		return err
	}
	for _, c := range chans {
		if c.Channel == store.NotifyChat && c.Kind != kind {
			c.Kind = kind
			return s.db.NotifyChannelSet(ctx, &c, now)
		}
	}
	return nil
}

// adminNotifySMTP saves the mail server; an empty password keeps the one
// stored.
func (s *Server) adminNotifySMTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := s.newPage(r, "notify", "Notifications")
	form := smtpForm{Host: strings.TrimSpace(r.PostFormValue("smtp_host")), Port: strings.TrimSpace(r.PostFormValue("smtp_port")),
		Username: strings.TrimSpace(r.PostFormValue("smtp_username")), Password: r.PostFormValue("smtp_password"),
		From: strings.TrimSpace(r.PostFormValue("smtp_from")), TLS: r.PostFormValue("smtp_tls")}
	port, _ := strconv.Atoi(form.Port)
	set := &store.NotifySMTP{Host: form.Host, Port: port, Username: form.Username, Password: form.Password, From: form.From, TLS: form.TLS}
	if set.Password == "" && r.PostFormValue("smtp_password_clear") == "" {
		if old, err := s.db.NotifySMTPGet(ctx); err == nil {
			set.Password = old.Password
		}
	}
	var problems map[string]string
	if s.notifier != nil {
		problems = s.notifier.CheckSMTP(set)
	}
	if len(problems) > 0 {
		form.Problems = map[string]string{}
		for k, v := range problems {
			form.Problems[k] = tr(p.Lang, v)
		}
		form.Password = ""
		p.Problem = tr(p.Lang, "Some settings need a fix; see below.")
		s.renderNotify(w, r, p, http.StatusUnprocessableEntity, nil, &form, nil)
		return
	}
	if err := s.db.NotifySMTPSet(ctx, set, s.now()); err != nil {
		s.adminFail(w, r, err)
		return
	}
	http.Redirect(w, r, "/admin/notifications?saved=smtp#h-test", http.StatusSeeOther)
}

// adminNotifyTest sends the user a test at once, by mail or to their chat,
// and shows the server's answer in plain words.
func (s *Server) adminNotifyTest(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	a := adminFrom(ctx)
	p := s.newPage(r, "notify", "Notifications")
	if s.notifier == nil {
		s.adminFail(w, r, model.ErrNotFound)
		return
	}
	var test notifyTest
	chans, err := s.db.NotifyChannels(ctx, a.user.ID)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	if r.PostFormValue("to") == "chat" {
		test = notifyTest{Words: tr(p.Lang, "Set your chat webhook first, then try again.")}
		for _, c := range chans {
			if c.Channel == store.NotifyChat {
				test = chatWords(p.Lang, s.notifier.TestChat(ctx, c.Kind, c.Target, p.Lang))
			}
		}
	} else {
		to := a.user.Email
		for _, c := range chans {
			if c.Channel == store.NotifyEmail {
				to = c.Target
			}
		}
		set, err := s.db.NotifySMTPGet(ctx)
		switch {
		case errors.Is(err, model.ErrNotFound):
			test = notifyTest{Words: tr(p.Lang, "Set the mail server first, then try again.")}
		case err != nil:
			s.adminFail(w, r, err)
			return
		default:
			test = mailWords(p.Lang, set, to, s.notifier.TestMail(ctx, set, to, p.Lang))
		}
	}
	s.renderNotify(w, r, p, http.StatusOK, nil, nil, &test)
}

// mailWords says an SMTP server's answer in plain words.
func mailWords(lang string, set *store.NotifySMTP, to string, a model.SendAnswer) notifyTest {
	t := notifyTest{OK: a.OK, Answer: answerText(a)}
	switch {
	case a.OK:
		t.Words = tr(lang, "Your mail server took the test message for %s. If it does not arrive within a few minutes, look in the spam folder.", to)
	case a.Stage == "connect" && a.Code == 0:
		t.Words = tr(lang, "Could not reach the mail server at %s. Check the server's name and port, and that it accepts connections from this machine.", set.Host+":"+strconv.Itoa(set.Port))
	case a.Stage == "tls" || a.Stage == "connect":
		t.Words = tr(lang, "The secure connection with the mail server failed. Check the encryption: STARTTLS usually on port 587, TLS on port 465.")
	case a.Stage == "auth":
		t.Words = tr(lang, "The mail server refused the username or password.")
	case a.Stage == "from":
		t.Words = tr(lang, "The mail server refused the sender address %s. Many servers accept only their own account's address.", set.From)
	case a.Stage == "to":
		t.Words = tr(lang, "The mail server refused the address %s.", to)
	case a.Stage == "setup":
		t.Words = tr(lang, "Set the mail server first, then try again.")
	default:
		t.Words = tr(lang, "The mail server refused the message.")
	}
	return t
}

// chatWords says a chat webhook's answer in plain words.
func chatWords(lang string, a model.SendAnswer) notifyTest {
	t := notifyTest{OK: a.OK, Answer: answerText(a)}
	switch {
	case a.OK:
		t.Words = tr(lang, "The chat service took the test message.")
	case a.Stage == "http":
		t.Words = tr(lang, "The chat service refused the message. Check the webhook's address and its kind.")
	default:
		t.Words = tr(lang, "Could not reach the chat service. Check the webhook's address.")
	}
	return t
}

func answerText(a model.SendAnswer) string {
	if a.Code != 0 {
		return strconv.Itoa(a.Code) + " " + a.Text
	}
	return a.Text
}

// notifyState is a notification's state in the page's words.
func notifyState(lang, state string) string {
	switch state {
	case store.NotifyPending:
		return tr(lang, "waiting to be sent")
	case store.NotifySent:
		return tr(lang, "sent")
	case store.NotifyDead:
		return tr(lang, "given up")
	case store.NotifyDropped:
		return tr(lang, "not sent")
	}
	return state
}
