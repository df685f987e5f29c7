package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// DigestWanted is a user's wish for a site's daily digest, with the address
// it goes to.
type DigestWanted struct {
	User  model.UserID
	Site  model.SiteID
	Email string
}

// NotifyDigestWanted returns every site's digest a user asked for and has
// an e-mail address for, by user and site.
func (q Q) NotifyDigestWanted(ctx context.Context) ([]DigestWanted, error) {
	var list []DigestWanted
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		var d DigestWanted
		var u, s string
		if err := r.Scan(&u, &s, &d.Email); err != nil {
			return err
		}
		d.User, d.Site = model.UserID(u), model.SiteID(s)
		list = append(list, d)
		return nil
	}, `/* Store.NotifyDigestWanted */ SELECT r.user_id, r.site_id, c.target FROM notify_rules r
		JOIN notify_channels c ON c.user_id = r.user_id AND c.channel = 'email'
		WHERE r.digest = 1 ORDER BY r.user_id, r.site_id`)
	if err != nil {
		return nil, fmt.Errorf("store: digests wanted: %w", err)
	}
	return list, nil
}

// DigestLead is a lead as a digest lists it.
type DigestLead struct {
	ID      model.LeadID
	Name    string
	Verdict model.Verdict
}

// NotifyDigestLeads returns up to limit of a site's leads received in
// [from, to), oldest first.
func (q Q) NotifyDigestLeads(ctx context.Context, site model.SiteID, from, to time.Time, limit int) ([]DigestLead, error) {
	var list []DigestLead
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		var l DigestLead
		var id, name, first, last, v string
		if err := r.Scan(&id, &name, &first, &last, &v); err != nil {
			return err
		}
		l.ID, l.Verdict, l.Name = model.LeadID(id), model.Verdict(v), name
		if l.Name == "" && (first != "" || last != "") {
			l.Name = first + " " + last
		}
		list = append(list, l)
		return nil
	}, `/* Store.NotifyDigestLeads */ SELECT id, name, first_name, last_name, verdict FROM leads
		WHERE site_id = ? AND received_at >= ? AND received_at < ? ORDER BY received_at, id LIMIT ?`,
		string(site), from.UnixMilli(), to.UnixMilli(), limit)
	if err != nil {
		return nil, fmt.Errorf("store: leads of site %s for a digest: %w", site, err)
	}
	return list, nil
}

// NotifyDigestSent says whether a user's digest of day went.
func (q Q) NotifyDigestSent(ctx context.Context, u model.UserID, day string) (bool, error) {
	var n int
	err := q.queryRow(ctx, `/* Store.NotifyDigestSent */ SELECT COUNT(*) FROM notify_digests WHERE user_id = ? AND day = ?`,
		string(u), day).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: digest of %s: %w", day, err)
	}
	return n > 0, nil
}

// NotifyDigestMark records that a user's digest of day went.
func (q Q) NotifyDigestMark(ctx context.Context, u model.UserID, day string, now time.Time) error {
	_, err := q.exec(ctx, `/* Store.NotifyDigestMark */ INSERT INTO notify_digests (user_id, day, sent_at) VALUES (?, ?, ?)
		ON CONFLICT (user_id, day) DO NOTHING`, string(u), day, now.UnixMilli())
	if err != nil {
		return fmt.Errorf("store: mark digest of %s: %w", day, err)
	}
	return nil
}
