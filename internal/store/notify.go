package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/secret"
)

// The channels a notification goes by.
const (
	NotifyEmail = "email"
	NotifyChat  = "chat"
)

// The states of a notification.
const (
	NotifyPending = "pending"
	NotifySent    = "sent"
	NotifyDead    = "dead"
	NotifyDropped = "dropped"
)

// NotifySMTP is the SMTP server notification mails go through.
type NotifySMTP struct {
	Host     string
	Port     int
	Username string
	Password string // in clear here; sealed in the database
	From     string
	TLS      string // starttls, tls or none
	Updated  time.Time
}

// NotifyChannel is one place a user is told: an e-mail address, or a chat
// webhook URL of a kind (slack, telegram, generic).
type NotifyChannel struct {
	User    model.UserID
	Channel string
	Kind    string
	Target  string // in clear here; a chat URL is sealed in the database
	Updated time.Time
}

// NotifyRule says which verdicts of a site's leads notify a user.
type NotifyRule struct {
	User                model.UserID
	Site                model.SiteID
	Clean, Review, Junk bool
	// Digest asks for the site's daily digest by mail.
	Digest bool
}

// Notification is a row of the notifications' outbox.
type Notification struct {
	Lead      model.LeadID
	Verdict   model.Verdict
	User      model.UserID
	Channel   string
	Site      model.SiteID
	State     string
	Attempts  int
	NextAt    time.Time
	LastError string
	Created   time.Time
	Updated   time.Time
	Sent      time.Time
	// LeadName is the lead's name, for the admin page (NotifyList only).
	LeadName string
}

const smtpContext = "notify smtp password"

func chatContext(u model.UserID) string { return "notify chat " + string(u) }

// NotifySMTPSet stores the SMTP server, its password sealed.
func (q Q) NotifySMTPSet(ctx context.Context, s *NotifySMTP, now time.Time) error {
	pw := ""
	if s.Password != "" {
		if q.box == nil {
			return fmt.Errorf("store: no key to encrypt the SMTP password: set secret_key")
		}
		pw = q.box.Seal(smtpContext, s.Password)
	}
	_, err := q.exec(ctx, `/* Store.NotifySMTPSet */ INSERT INTO notify_smtp (id, host, port, username, password, from_addr, tls, updated_at)
		VALUES (1, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET host = excluded.host, port = excluded.port,
		username = excluded.username, password = excluded.password, from_addr = excluded.from_addr, tls = excluded.tls,
		updated_at = excluded.updated_at`, s.Host, s.Port, s.Username, pw, s.From, s.TLS, now.UnixMilli())
	if err != nil {
		return fmt.Errorf("store: set the SMTP server: %w", err)
	}
	return nil
}

// NotifySMTPGet returns the SMTP server with its password opened, or
// model.ErrNotFound when none is set.
func (q Q) NotifySMTPGet(ctx context.Context) (*NotifySMTP, error) {
	var s NotifySMTP
	var at int64
	err := q.queryRow(ctx, `/* Store.NotifySMTPGet */ SELECT host, port, username, password, from_addr, tls, updated_at
		FROM notify_smtp WHERE id = 1`).Scan(&s.Host, &s.Port, &s.Username, &s.Password, &s.From, &s.TLS, &at)
	if err != nil {
		return nil, notFound(err, "SMTP server")
	}
	s.Updated = time.UnixMilli(at).UTC()
	if s.Password, err = q.openSecret(smtpContext, s.Password); err != nil {
		return nil, fmt.Errorf("store: SMTP password: %w", err)
	}
	return &s, nil
}

// openSecret opens a sealed value; "" stays "".
func (q Q) openSecret(context, stored string) (string, error) {
	if !secret.IsSealed(stored) {
		return stored, nil
	}
	if q.box == nil {
		return "", fmt.Errorf("it is encrypted and no secret_key is set")
	}
	return q.box.Open(context, stored)
}

// NotifyChannelSet stores one of a user's channels; an empty target
// removes it.
func (q Q) NotifyChannelSet(ctx context.Context, c *NotifyChannel, now time.Time) error {
	if c.Target == "" {
		_, err := q.exec(ctx, `/* Store.NotifyChannelSet */ DELETE FROM notify_channels WHERE user_id = ? AND channel = ?`,
			string(c.User), c.Channel)
		if err != nil {
			return fmt.Errorf("store: remove %s channel: %w", c.Channel, err)
		}
		return nil
	}
	target := c.Target
	if c.Channel == NotifyChat {
		if q.box == nil {
			return fmt.Errorf("store: no key to encrypt the webhook URL: set secret_key")
		}
		target = q.box.Seal(chatContext(c.User), c.Target)
	}
	_, err := q.exec(ctx, `/* Store.NotifyChannelSet */ INSERT INTO notify_channels (user_id, channel, kind, target, updated_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (user_id, channel) DO UPDATE SET kind = excluded.kind, target = excluded.target,
		updated_at = excluded.updated_at`, string(c.User), c.Channel, c.Kind, target, now.UnixMilli())
	if err != nil {
		return fmt.Errorf("store: set %s channel: %w", c.Channel, err)
	}
	return nil
}

// NotifyChannels returns a user's channels, their targets opened.
func (q Q) NotifyChannels(ctx context.Context, u model.UserID) ([]NotifyChannel, error) {
	var list []NotifyChannel
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		c := NotifyChannel{User: u}
		var at int64
		if err := r.Scan(&c.Channel, &c.Kind, &c.Target, &at); err != nil {
			return err
		}
		c.Updated = time.UnixMilli(at).UTC()
		list = append(list, c)
		return nil
	}, `/* Store.NotifyChannels */ SELECT channel, kind, target, updated_at FROM notify_channels
		WHERE user_id = ? ORDER BY channel`, string(u))
	if err != nil {
		return nil, fmt.Errorf("store: notification channels: %w", err)
	}
	for i := range list {
		if list[i].Channel != NotifyChat {
			continue
		}
		if list[i].Target, err = q.openSecret(chatContext(u), list[i].Target); err != nil {
			return nil, fmt.Errorf("store: webhook URL of user %s: %w", u, err)
		}
	}
	return list, nil
}

// NotifyRuleSet stores which verdicts of a site notify a user.
func (q Q) NotifyRuleSet(ctx context.Context, r NotifyRule) error {
	_, err := q.exec(ctx, `/* Store.NotifyRuleSet */ INSERT INTO notify_rules (user_id, site_id, clean, review, junk, digest)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (user_id, site_id) DO UPDATE SET clean = excluded.clean,
		review = excluded.review, junk = excluded.junk, digest = excluded.digest`,
		string(r.User), string(r.Site), b2i(r.Clean), b2i(r.Review), b2i(r.Junk), b2i(r.Digest))
	if err != nil {
		return fmt.Errorf("store: set notification rule: %w", err)
	}
	return nil
}

// NotifyRules returns a user's rules by site.
func (q Q) NotifyRules(ctx context.Context, u model.UserID) (map[model.SiteID]NotifyRule, error) {
	m := map[model.SiteID]NotifyRule{}
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		var site string
		var c, rv, j, d int
		if err := r.Scan(&site, &c, &rv, &j, &d); err != nil {
			return err
		}
		m[model.SiteID(site)] = NotifyRule{User: u, Site: model.SiteID(site), Clean: c == 1, Review: rv == 1, Junk: j == 1, Digest: d == 1}
		return nil
	}, `/* Store.NotifyRules */ SELECT site_id, clean, review, junk, digest FROM notify_rules WHERE user_id = ?`, string(u))
	if err != nil {
		return nil, fmt.Errorf("store: notification rules: %w", err)
	}
	return m, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// NotifyQueue queues, in the caller's transaction, a notification of a
// lead's verdict for every user whose rule for the lead's site asks for
// that verdict, on each of their channels: one statement, so a lead costs
// the writer one more. A lead already queued for that verdict, user and
// channel is not queued again: each verdict notifies once per lead.
func (q Q) NotifyQueue(ctx context.Context, site model.SiteID, lead model.LeadID, v model.Verdict, now time.Time) error {
	col := notifyColumn(v)
	if col == "" {
		return nil
	}
	_, err := q.exec(ctx, q.notifyInsert(col),
		string(lead), string(v), now.UnixMilli(), now.UnixMilli(), now.UnixMilli(), string(site))
	if err != nil {
		return fmt.Errorf("store: queue notifications of lead %s: %w", lead, err)
	}
	return nil
}

// notifyColumn is the notify_rules column that asks for a verdict's
// notifications, "" for a verdict none asks for.
func notifyColumn(v model.Verdict) string {
	switch v {
	case model.VerdictClean:
		return "r.clean"
	case model.VerdictReview:
		return "r.review"
	case model.VerdictJunk:
		return "r.junk"
	}
	return ""
}

// notifyInsert is NotifyQueue's statement for col (notifyColumn); its
// arguments are the lead, the verdict, the time three times and the site.
func (q Q) notifyInsert(col string) string {
	return `/* Store.NotifyQueue */ INSERT INTO notifications (lead_id, verdict, user_id, channel, site_id, state,
		attempts, next_at, last_error, created_at, updated_at)
		SELECT ` + q.idParam() + `, ` + q.textParam() + `, r.user_id, c.channel, r.site_id, 'pending', 0, CAST(? AS BIGINT), '',
		CAST(? AS BIGINT), CAST(? AS BIGINT)
		FROM notify_rules r JOIN notify_channels c ON c.user_id = r.user_id
		WHERE r.site_id = ? AND ` + col + ` = 1
		ON CONFLICT (lead_id, verdict, user_id, channel) DO NOTHING`
}

const notifyCols = `lead_id, verdict, user_id, channel, site_id, state, attempts, next_at, last_error, created_at, updated_at, sent_at`

func scanNotification(r interface{ Scan(...any) error }, extra ...any) (*Notification, error) {
	var n Notification
	var lead, verdict, user, site string
	var next, created, updated int64
	var sent sql.NullInt64
	dest := append([]any{&lead, &verdict, &user, &n.Channel, &site, &n.State, &n.Attempts, &next, &n.LastError,
		&created, &updated, &sent}, extra...)
	if err := r.Scan(dest...); err != nil {
		return nil, err
	}
	n.Lead, n.Verdict, n.User, n.Site = model.LeadID(lead), model.Verdict(verdict), model.UserID(user), model.SiteID(site)
	n.NextAt, n.Created, n.Updated = time.UnixMilli(next).UTC(), time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	n.Sent = fromMS(sent)
	return &n, nil
}

// NotifyClaim claims up to limit pending notifications due at now: each
// one's next_at moves to leaseUntil, so another worker or node does not
// send it while this one does; one left unrecorded (a crash) is due again
// then. A row another worker claimed first is left out.
func (q Q) NotifyClaim(ctx context.Context, now, leaseUntil time.Time, limit int) ([]*Notification, error) {
	var due []*Notification
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		n, err := scanNotification(r)
		if err == nil {
			due = append(due, n)
		}
		return err
	}, `/* Store.NotifyClaim */ SELECT `+notifyCols+` FROM notifications WHERE state = 'pending' AND next_at <= ?
		ORDER BY next_at LIMIT ?`, now.UnixMilli(), limit)
	if err != nil {
		return nil, fmt.Errorf("store: due notifications: %w", err)
	}
	claimed := due[:0]
	for _, n := range due {
		res, err := q.exec(ctx, `/* Store.NotifyClaim */ UPDATE notifications SET next_at = ?
			WHERE lead_id = ? AND verdict = ? AND user_id = ? AND channel = ? AND state = 'pending' AND next_at = ?`,
			leaseUntil.UnixMilli(), string(n.Lead), string(n.Verdict), string(n.User), n.Channel, n.NextAt.UnixMilli())
		if err != nil {
			return nil, fmt.Errorf("store: claim notification: %w", err)
		}
		if k, err := res.RowsAffected(); err == nil && k == 1 {
			n.NextAt = leaseUntil
			claimed = append(claimed, n)
		}
	}
	return claimed, nil
}

// NotifyRecord stores a notification's outcome: its state, attempts,
// next_at, last_error and sent time.
func (q Q) NotifyRecord(ctx context.Context, n *Notification, now time.Time) error {
	_, err := q.exec(ctx, `/* Store.NotifyRecord */ UPDATE notifications SET state = ?, attempts = ?, next_at = ?,
		last_error = ?, updated_at = ?, sent_at = ?
		WHERE lead_id = ? AND verdict = ? AND user_id = ? AND channel = ?`,
		n.State, n.Attempts, n.NextAt.UnixMilli(), n.LastError, now.UnixMilli(), ms(n.Sent),
		string(n.Lead), string(n.Verdict), string(n.User), n.Channel)
	if err != nil {
		return fmt.Errorf("store: record notification of lead %s: %w", n.Lead, err)
	}
	return nil
}

// NotifyList returns a user's latest notifications, newest first, with the
// lead's name.
func (q Q) NotifyList(ctx context.Context, u model.UserID, limit int) ([]*Notification, error) {
	var list []*Notification
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		var name sql.NullString
		n, err := scanNotification(r, &name)
		if err == nil {
			n.LeadName = name.String
			list = append(list, n)
		}
		return err
	}, `/* Store.NotifyList */ SELECT n.lead_id, n.verdict, n.user_id, n.channel, n.site_id, n.state, n.attempts, n.next_at,
		n.last_error, n.created_at, n.updated_at, n.sent_at, l.name
		FROM notifications n LEFT JOIN leads l ON l.id = n.lead_id
		WHERE n.user_id = ? ORDER BY n.created_at DESC, n.lead_id, n.channel LIMIT ?`, string(u), limit)
	if err != nil {
		return nil, fmt.Errorf("store: notifications: %w", err)
	}
	return list, nil
}

// NotifyDropByLead drops a lead's notifications not sent yet, saying why.
func (q Q) NotifyDropByLead(ctx context.Context, lead model.LeadID, why string, now time.Time) error {
	_, err := q.exec(ctx, `/* Store.NotifyDropByLead */ UPDATE notifications SET state = 'dropped', last_error = ?, updated_at = ?
		WHERE lead_id = ? AND state = 'pending'`, why, now.UnixMilli(), string(lead))
	if err != nil {
		return fmt.Errorf("store: drop notifications of lead %s: %w", lead, err)
	}
	return nil
}

// NotifyPrune deletes up to limit finished notifications (sent, dead,
// dropped) last changed before before, and the digests' records of days
// sent before it; it returns how many notifications went.
func (q Q) NotifyPrune(ctx context.Context, before time.Time, limit int) (int, error) {
	res, err := q.exec(ctx, `/* Store.NotifyPrune */ DELETE FROM notifications WHERE (lead_id, verdict, user_id, channel) IN
		(SELECT lead_id, verdict, user_id, channel FROM notifications WHERE state <> 'pending' AND updated_at < ?
		ORDER BY updated_at LIMIT ?)`, before.UnixMilli(), limit)
	if err != nil {
		return 0, fmt.Errorf("store: prune notifications: %w", err)
	}
	n, _ := res.RowsAffected()
	if _, err := q.exec(ctx, `/* Store.NotifyPrune */ DELETE FROM notify_digests WHERE sent_at < ?`, before.UnixMilli()); err != nil {
		return int(n), fmt.Errorf("store: prune digests: %w", err)
	}
	return int(n), nil
}
