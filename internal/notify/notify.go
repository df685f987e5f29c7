// Package notify owns the owner's notifications ("know at once"): the runner
// that sends the rows app queued in the lead's own transaction (store's
// notifications outbox) by e-mail through the owner's SMTP server and by
// chat webhooks (Slack-style, Telegram, Teams, generic JSON), retries them
// with backoff, and records each one's last error for the admin page; and
// the test send behind the page's "send me a test" button. It reaches the
// database only through its Store interface, and never blocks intake.
package notify

import (
	"context"
	"crypto/x509"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// Store is what the runner needs of the database.
type Store interface {
	NotifyClaim(ctx context.Context, now, leaseUntil time.Time, limit int) ([]*store.Notification, error)
	NotifyRecord(ctx context.Context, n *store.Notification, now time.Time) error
	NotifySMTPGet(ctx context.Context) (*store.NotifySMTP, error)
	NotifyChannels(ctx context.Context, u model.UserID) ([]store.NotifyChannel, error)
	LeadByID(ctx context.Context, id model.LeadID) (*model.Lead, error)
	SiteByID(ctx context.Context, id model.SiteID) (*model.Site, error)
	UserByID(ctx context.Context, id model.UserID) (*model.User, error)
}

// Options are the dependencies of a Runner.
type Options struct {
	Store  Store
	Logger *slog.Logger
	Now    func() time.Time
	// PublicURL is the server's address as browsers see it, for the link
	// to a lead's admin page.
	PublicURL string
	// Poll is how often the runner looks for due notifications (default
	// 5s); Wake makes it look at once.
	Poll time.Duration
	// Lease is how long a claimed notification is the runner's before
	// another may send it (default 2m: longer than a send may take).
	Lease time.Duration
	// GiveUpAfter is how long after it was queued a notification is
	// retried (default 72h); then it is dead, with its last error.
	GiveUpAfter time.Duration
	// HTTP posts to the chat webhooks (default: a client with a timeout).
	HTTP *http.Client
	// RootCAs check the SMTP server's certificate (nil: the system's).
	RootCAs *x509.CertPool
	// Location is the time zone of the daily digest's days (default
	// Local); DigestHour the hour it goes from (default 8).
	Location   *time.Location
	DigestHour int
}

// Runner sends the queued notifications until stopped.
type Runner struct {
	db         Store
	log        *slog.Logger
	now        func() time.Time
	public     string
	poll       time.Duration
	lease      time.Duration
	giveUp     time.Duration
	http       *http.Client
	mail       mailer
	wakeCh     chan struct{}
	loc        *time.Location
	digestHour int
	mu         sync.Mutex
	cancel     context.CancelFunc
	done       chan struct{}
	batchOf    int
}

// New returns a Runner; nothing runs until Start.
func New(o Options) *Runner {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Poll <= 0 {
		o.Poll = 5 * time.Second
	}
	if o.Lease <= 0 {
		o.Lease = 2 * time.Minute
	}
	if o.GiveUpAfter <= 0 {
		o.GiveUpAfter = 72 * time.Hour
	}
	if o.HTTP == nil {
		o.HTTP = &http.Client{Timeout: sendTimeout}
	}
	if o.Location == nil {
		o.Location = time.Local
	}
	if o.DigestHour <= 0 || o.DigestHour > 23 {
		o.DigestHour = 8
	}
	return &Runner{db: o.Store, log: o.Logger, now: o.Now, public: strings.TrimRight(o.PublicURL, "/"), poll: o.Poll,
		lease: o.Lease, giveUp: o.GiveUpAfter, http: o.HTTP, mail: mailer{roots: o.RootCAs},
		wakeCh: make(chan struct{}, 1), batchOf: 50, loc: o.Location, digestHour: o.DigestHour}
}

// Start sends due notifications in the background until Stop. Starting a
// running Runner does nothing.
func (r *Runner) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		return nil
	}
	ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
	r.done = make(chan struct{})
	go r.loop(ctx, r.done)
	return nil
}

// Stop ends the runner and waits for the send in flight, or for ctx. A
// notification cut short is sent again when its lease ends.
func (r *Runner) Stop(ctx context.Context) error {
	r.mu.Lock()
	cancel, done := r.cancel, r.done
	r.cancel = nil
	r.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Wake makes the runner look for due notifications now (a lead was just
// stored); it never blocks.
func (r *Runner) Wake() {
	select {
	case r.wakeCh <- struct{}{}:
	default:
	}
}

func (r *Runner) loop(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(r.poll)
	defer t.Stop()
	for {
		if _, err := r.RunOnce(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("notifications", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.wakeCh:
		}
	}
}

// RunOnce sends the notifications due now, batch after batch, and returns
// how many went.
func (r *Runner) RunOnce(ctx context.Context) (int, error) {
	sent := 0
	for ctx.Err() == nil {
		now := r.now().UTC()
		due, err := r.db.NotifyClaim(ctx, now, now.Add(r.lease), r.batchOf)
		if err != nil {
			return sent, err
		}
		for _, n := range due {
			if ctx.Err() != nil {
				// Stopped: the rest are due again when their lease ends.
				return sent, nil
			}
			r.send(ctx, n)
			// Recorded even when Stop cut ctx meanwhile: a message that went
			// must not go again when its lease ends.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			err := r.db.NotifyRecord(rctx, n, r.now().UTC())
			cancel()
			if err != nil {
				return sent, err
			}
			if n.State == store.NotifySent {
				sent++
			}
		}
		if len(due) < r.batchOf {
			break
		}
	}
	return sent, nil
}

// errDrop ends a notification that must not go: its channel was removed,
// or the lead is gone or has another verdict now.
type errDrop struct{ why string }

func (e errDrop) Error() string { return e.why }

// send sends one notification and sets its outcome on n.
func (r *Runner) send(ctx context.Context, n *store.Notification) {
	now := r.now().UTC()
	n.Attempts++
	err := r.deliver(ctx, n)
	var drop errDrop
	switch {
	case err == nil:
		n.State, n.Sent, n.LastError = store.NotifySent, now, ""
	case errors.As(err, &drop):
		n.State, n.LastError = store.NotifyDropped, drop.why
	case now.Sub(n.Created) >= r.giveUp:
		n.State, n.LastError = store.NotifyDead, err.Error()
		r.log.Warn("notification given up", "lead", n.Lead, "channel", n.Channel, "attempts", n.Attempts, "err", err)
	default:
		n.State, n.LastError, n.NextAt = store.NotifyPending, err.Error(), now.Add(Backoff(n.Attempts))
		r.log.Info("notification to retry", "lead", n.Lead, "channel", n.Channel, "attempts", n.Attempts,
			"next_at", n.NextAt, "err", err)
	}
}

// Backoff is how long a notification waits after its nth failed attempt:
// 30 s, doubling, at most an hour.
func Backoff(n int) time.Duration {
	d := 30 * time.Second
	for i := 1; i < n && d < time.Hour; i++ {
		d *= 2
	}
	return min(d, time.Hour)
}

// deliver sends n by its channel; it returns errDrop for one that must not
// go.
func (r *Runner) deliver(ctx context.Context, n *store.Notification) error {
	lead, err := r.db.LeadByID(ctx, n.Lead)
	if errors.Is(err, model.ErrNotFound) {
		return errDrop{"the lead was removed"}
	}
	if err != nil {
		return err
	}
	if lead.Verdict != n.Verdict {
		return errDrop{"the lead's verdict changed to " + string(lead.Verdict) + " before this went"}
	}
	site, err := r.db.SiteByID(ctx, n.Site)
	if err != nil {
		return err
	}
	user, err := r.db.UserByID(ctx, n.User)
	if errors.Is(err, model.ErrNotFound) {
		return errDrop{"the user was removed"}
	}
	if err != nil {
		return err
	}
	chans, err := r.db.NotifyChannels(ctx, n.User)
	if err != nil {
		return err
	}
	var ch *store.NotifyChannel
	for i := range chans {
		if chans[i].Channel == n.Channel {
			ch = &chans[i]
		}
	}
	if ch == nil {
		// Only to a place the owner set, and still sets.
		return errDrop{"the " + n.Channel + " channel was removed"}
	}
	link := r.public + "/admin/leads/" + string(lead.ID)
	lang := user.Lang
	if n.Channel == store.NotifyChat {
		a := postChat(ctx, r.http, ch.Kind, ch.Target, generic(lang, site, lead, n.Verdict, link))
		if !a.OK {
			return chatError(a)
		}
		return nil
	}
	smtpSet, err := r.db.NotifySMTPGet(ctx)
	if errors.Is(err, model.ErrNotFound) {
		return errors.New("no SMTP server is set")
	}
	if err != nil {
		return err
	}
	subject, body := leadText(lang, site, lead, n.Verdict, link)
	msg := message{From: smtpSet.From, To: ch.Target, Subject: subject, Body: body, Date: r.now(),
		ID: string(n.Lead) + "." + string(n.Verdict) + "." + string(n.User)}
	if a := r.mail.send(ctx, smtpSet, ch.Target, msg.bytes()); !a.OK {
		return answerErr(a)
	}
	return nil
}

// TestMail sends a test message through s to the address to, at once, and
// returns the server's answer; lang is the reader's language.
func (r *Runner) TestMail(ctx context.Context, s *store.NotifySMTP, to, lang string) model.SendAnswer {
	if p := CheckSMTP(s); p != nil {
		return model.SendAnswer{Stage: "setup", Text: "the SMTP settings are incomplete"}
	}
	subject, body := testText(lang)
	msg := message{From: s.From, To: to, Subject: subject, Body: body, Date: r.now(), ID: "test." + r.now().Format("20060102T150405.000000000")}
	return r.mail.send(ctx, s, to, msg.bytes())
}

// SendMail sends one plain-text mail through the installation's SMTP
// server at once (a password link), and returns the server's answer.
func (r *Runner) SendMail(ctx context.Context, s *store.NotifySMTP, to, subject, body string) model.SendAnswer {
	if p := CheckSMTP(s); p != nil {
		return model.SendAnswer{Stage: "setup", Text: "the SMTP settings are incomplete"}
	}
	msg := message{From: s.From, To: to, Subject: subject, Body: body, Date: r.now(), ID: "link." + r.now().Format("20060102T150405.000000000")}
	return r.mail.send(ctx, s, to, msg.bytes())
}

// TestChat posts a test message to a chat webhook, at once, and returns its
// answer.
func (r *Runner) TestChat(ctx context.Context, kind, target, lang string) model.SendAnswer {
	_, body := testText(lang)
	return postChat(ctx, r.http, kind, target, Generic{Event: "test", Text: body})
}

// CheckSMTP is the package's CheckSMTP, for the admin page.
func (r *Runner) CheckSMTP(s *store.NotifySMTP) map[string]string { return CheckSMTP(s) }

// CheckChat is the package's CheckChat, for the admin page.
func (r *Runner) CheckChat(kind, target string) string { return CheckChat(kind, target) }
