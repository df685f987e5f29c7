package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// LinkTTL is how long a password link works.
const LinkTTL = 24 * time.Hour

// linkFailKey is the e-mail under which failed uses of password links are
// counted, so guessing links is throttled per IP like logins.
const linkFailKey = "(password link)"

// noPassword is the hash of a user who has not set a password yet: no
// bcrypt hash, so no password matches it.
const noPassword = "!"

// ErrLastAdmin refuses to remove or demote the last admin.
var ErrLastAdmin = errors.New("the last admin cannot be removed")

// ErrSelf refuses to remove oneself.
var ErrSelf = errors.New("you cannot remove yourself")

// Access is who a user is in the admin UI: their role and the sites they see.
type Access struct {
	Role     model.Role
	AllSites bool
	Sites    []model.SiteID
}

func (ac Access) check() error {
	if ac.Role != model.RoleAdmin && ac.Role != model.RoleMember {
		return model.Invalid("role", "want admin or member")
	}
	return nil
}

// HasPassword tells whether a user has set a password.
func HasPassword(u *model.User) bool { return u.PasswordHash != noPassword }

// Invite adds a user without a password: they set one through a password
// link. An e-mail already taken fails with model.ErrConflict.
func (a *Service) Invite(ctx context.Context, email string, ac Access) (*model.User, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return nil, err
	}
	if err := ac.check(); err != nil {
		return nil, err
	}
	now := a.now().UTC()
	u := &model.User{ID: model.UserID(model.NewID("u_", now)), Email: email, PasswordHash: noPassword,
		Role: ac.Role, AllSites: ac.AllSites, CreatedAt: now, UpdatedAt: now}
	if !ac.AllSites {
		u.Sites = ac.Sites
	}
	if err := a.db.UserInsert(ctx, u); err != nil {
		return nil, err
	}
	return u, nil
}

// SetAccess changes a user's role and sites; the last admin stays an admin.
func (a *Service) SetAccess(ctx context.Context, id model.UserID, ac Access) error {
	if err := ac.check(); err != nil {
		return err
	}
	if ac.AllSites {
		ac.Sites = nil
	}
	return a.db.InTx(ctx, func(tx *store.Tx) error {
		u, err := tx.UserByID(ctx, id)
		if err != nil {
			return err
		}
		if u.IsAdmin() && ac.Role != model.RoleAdmin {
			if n, err := tx.UserAdminCount(ctx); err != nil {
				return err
			} else if n <= 1 {
				return ErrLastAdmin
			}
		}
		return tx.UserSetAccess(ctx, id, ac.Role, ac.AllSites, ac.Sites, a.now())
	})
}

// RemoveUser removes a user, who is logged out at once; by may not remove
// themself, and the last admin stays.
func (a *Service) RemoveUser(ctx context.Context, by, id model.UserID) error {
	if by == id {
		return ErrSelf
	}
	return a.db.InTx(ctx, func(tx *store.Tx) error {
		u, err := tx.UserByID(ctx, id)
		if err != nil {
			return err
		}
		if u.IsAdmin() {
			if n, err := tx.UserAdminCount(ctx); err != nil {
				return err
			} else if n <= 1 {
				return ErrLastAdmin
			}
		}
		// The sessions go with the user (ON DELETE CASCADE); deleting them
		// first says so here too.
		if err := tx.SessionDeleteUser(ctx, id); err != nil {
			return err
		}
		return tx.UserDelete(ctx, id)
	})
}

// PasswordLink makes a one-time link token for a user, working for LinkTTL;
// only its hash is stored. The token goes into the link and nowhere else:
// never log it.
func (a *Service) PasswordLink(ctx context.Context, id model.UserID) (string, time.Time, error) {
	now := a.now().UTC()
	token := randomToken()
	l := &model.PasswordLink{TokenHash: hashToken(token), UserID: id, CreatedAt: now, ExpiresAt: now.Add(LinkTTL)}
	if err := a.db.PasswordLinkInsert(ctx, l); err != nil {
		return "", time.Time{}, err
	}
	a.log.InfoContext(ctx, "password link made", "user", string(id))
	return token, l.ExpiresAt, nil
}

// LinkUser returns the user a live link is for, without using it:
// model.ErrLinkUsed, model.ErrLinkExpired or model.ErrNotFound otherwise.
func (a *Service) LinkUser(ctx context.Context, token string) (*model.User, error) {
	l, err := a.db.PasswordLinkByHash(ctx, hashToken(token))
	switch {
	case err != nil:
		return nil, err
	case !l.UsedAt.IsZero():
		return nil, model.ErrLinkUsed
	case !a.now().Before(l.ExpiresAt):
		return nil, model.ErrLinkExpired
	}
	return a.db.UserByID(ctx, l.UserID)
}

// UseLink sets the password of a link's user, uses the link up, ends the
// user's other sessions and starts one: it returns the session's token. A
// link that does not exist counts as a failed login from ip, so guessing
// is throttled as logins are (ErrThrottled).
func (a *Service) UseLink(ctx context.Context, token, password, ip string) (string, *model.Session, error) {
	now := a.now().UTC()
	byIP, _, err := a.db.LoginFailures(ctx, ip, linkFailKey, now.Add(-Window))
	if err != nil {
		return "", nil, err
	}
	if byIP >= MaxFailsPerIP {
		a.log.WarnContext(ctx, "password link throttled", "ip", ip, "fails_ip", byIP)
		return "", nil, ErrThrottled
	}
	// The password is checked before the link is used, so a short one
	// does not spend the link.
	h, err := a.hash(password)
	if err != nil {
		return "", nil, err
	}
	var (
		sessToken string
		sess      *model.Session
	)
	err = a.db.InTx(ctx, func(tx *store.Tx) error {
		l, err := tx.PasswordLinkUse(ctx, hashToken(token), now)
		if err != nil {
			return err
		}
		if err := tx.UserSetPassword(ctx, l.UserID, h, now); err != nil {
			return err
		}
		if err := tx.SessionDeleteUser(ctx, l.UserID); err != nil {
			return err
		}
		sessToken, sess, err = a.startSession(ctx, tx.Q, l.UserID, now)
		return err
	})
	if errors.Is(err, model.ErrNotFound) {
		if err := a.db.LoginAttemptInsert(ctx, model.LoginAttempt{At: now, IP: ip, Email: linkFailKey}); err != nil {
			return "", nil, err
		}
		a.log.InfoContext(ctx, "unknown password link", "ip", ip)
		return "", nil, fmt.Errorf("password link: %w", model.ErrNotFound)
	}
	if err != nil {
		return "", nil, err
	}
	a.log.InfoContext(ctx, "password set by link", "user", string(sess.UserID), "ip", ip)
	return sessToken, sess, nil
}
