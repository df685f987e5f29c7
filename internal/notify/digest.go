package notify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// DigestStore is what the daily digest needs of the database, beyond
// Store.
type DigestStore interface {
	NotifyDigestWanted(ctx context.Context) ([]store.DigestWanted, error)
	NotifyDigestLeads(ctx context.Context, site model.SiteID, from, to time.Time, limit int) ([]store.DigestLead, error)
	NotifyDigestSent(ctx context.Context, u model.UserID, day string) (bool, error)
	NotifyDigestMark(ctx context.Context, u model.UserID, day string, now time.Time) error
}

// digestList is how many leads a digest names per site at most.
const digestList = 30

// Digest sends the daily digests that are due: once the day has reached
// DigestHour in Location, each user who asked for a site's digest gets one
// mail for all their sites, on the day before (its leads by verdict, the
// ones still waiting for evidence named, with links), unless it went
// already. A failed send is tried again at the next run. It returns how
// many went.
func (r *Runner) Digest(ctx context.Context) (int, error) {
	ds, ok := r.db.(DigestStore)
	if !ok {
		return 0, errors.New("notify: the store keeps no digests")
	}
	now := r.now().In(r.loc)
	if now.Hour() < r.digestHour {
		return 0, nil
	}
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, r.loc)
	yesterday := today.AddDate(0, 0, -1)
	day := yesterday.Format(time.DateOnly)
	wanted, err := ds.NotifyDigestWanted(ctx)
	if err != nil {
		return 0, err
	}
	byUser := map[model.UserID][]store.DigestWanted{}
	var order []model.UserID
	for _, w := range wanted {
		if byUser[w.User] == nil {
			order = append(order, w.User)
		}
		byUser[w.User] = append(byUser[w.User], w)
	}
	sent := 0
	var errs []error
	for _, u := range order {
		done, err := ds.NotifyDigestSent(ctx, u, day)
		if err != nil {
			return sent, err
		}
		if done {
			continue
		}
		if err := r.sendDigest(ctx, ds, u, byUser[u], yesterday, today, day); err != nil {
			errs = append(errs, fmt.Errorf("digest for user %s: %w", u, err))
			continue
		}
		if err := ds.NotifyDigestMark(context.WithoutCancel(ctx), u, day, r.now()); err != nil {
			return sent, err
		}
		sent++
	}
	return sent, errors.Join(errs...)
}

func (r *Runner) sendDigest(ctx context.Context, ds DigestStore, u model.UserID, sites []store.DigestWanted, from, to time.Time, day string) error {
	user, err := r.db.UserByID(ctx, u)
	if err != nil {
		return err
	}
	lang := user.Lang
	var b strings.Builder
	b.WriteString(tr(lang, "Your leads of %s", day) + "\n")
	for _, w := range sites {
		site, err := r.db.SiteByID(ctx, w.Site)
		if errors.Is(err, model.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		leads, err := ds.NotifyDigestLeads(ctx, w.Site, from, to, 10000)
		if err != nil {
			return err
		}
		n := map[model.Verdict]int{}
		for _, l := range leads {
			n[l.Verdict]++
		}
		b.WriteString("\n" + site.Name + "\n")
		b.WriteString(tr(lang, "%d leads: %d real, %d waiting for evidence, %d junk", len(leads),
			n[model.VerdictClean], n[model.VerdictReview], n[model.VerdictJunk]) + "\n")
		listed := 0
		for _, l := range leads {
			if l.Verdict == model.VerdictJunk || listed == digestList {
				continue
			}
			name := l.Name
			if name == "" {
				name = tr(lang, "(no name)")
			}
			b.WriteString("- " + name + " (" + verdictWord(lang, l.Verdict) + "): " + r.public + "/admin/leads/" + string(l.ID) + "\n")
			listed++
		}
	}
	b.WriteString("\n" + tr(lang, "You get this because your CleanAds notification settings ask for it.") + "\n")
	set, err := r.db.NotifySMTPGet(ctx)
	if err != nil {
		return fmt.Errorf("the SMTP server: %w", err)
	}
	msg := message{From: set.From, To: sites[0].Email, Subject: tr(lang, "Your leads of %s", day), Body: b.String(),
		Date: r.now(), ID: "digest." + day + "." + string(u)}
	if a := r.mail.send(ctx, set, sites[0].Email, msg.bytes()); !a.OK {
		return answerErr(a)
	}
	return nil
}
