package store

import (
	"context"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

const userColumns = `id, email, password_hash, lang, role, all_sites, last_login_at, created_at, updated_at`

// UserInsert stores a new admin user with its sites; an e-mail already
// taken fails with model.ErrConflict. An empty role is an admin.
func (q Q) UserInsert(ctx context.Context, u *model.User) error {
	if u.Role == "" {
		u.Role = model.RoleAdmin
	}
	_, err := q.exec(ctx, `/* Store.UserInsert */ INSERT INTO users (`+userColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		string(u.ID), u.Email, u.PasswordHash, u.Lang, string(u.Role), boolInt(u.AllSites), timeMs(u.LastLogin),
		u.CreatedAt.UnixMilli(), u.UpdatedAt.UnixMilli())
	if isUniqueViolation(err) {
		return fmt.Errorf("user %s: %w", u.Email, model.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store: insert user: %w", err)
	}
	return q.userSitesSet(ctx, u.ID, u.Sites)
}

// UserSetAccess sets a user's role and the sites they may see (all, or
// only sites).
func (q Q) UserSetAccess(ctx context.Context, id model.UserID, role model.Role, all bool, sites []model.SiteID, now time.Time) error {
	if err := q.userUpdate(ctx, `/* Store.UserSetAccess */ UPDATE users SET role = ?, all_sites = ?, updated_at = ? WHERE id = ?`,
		id, string(role), boolInt(all), now.UnixMilli(), string(id)); err != nil {
		return err
	}
	if err := q.userSitesSet(ctx, id, sites); err != nil || all {
		return err
	}
	// Notifications follow what the user may see.
	if _, err := q.exec(ctx, `/* Store.UserSetAccess */ DELETE FROM notify_rules WHERE user_id = ?
		AND site_id NOT IN (SELECT site_id FROM user_sites WHERE user_id = ?)`, string(id), string(id)); err != nil {
		return fmt.Errorf("store: notifications of user %s: %w", id, err)
	}
	return nil
}

func (q Q) userSitesSet(ctx context.Context, id model.UserID, sites []model.SiteID) error {
	if _, err := q.exec(ctx, `/* Store.userSitesSet */ DELETE FROM user_sites WHERE user_id = ?`, string(id)); err != nil {
		return fmt.Errorf("store: clear sites of user %s: %w", id, err)
	}
	for _, site := range sites {
		_, err := q.exec(ctx, `/* Store.userSitesSet */ INSERT INTO user_sites (user_id, site_id) VALUES (?, ?)
			ON CONFLICT (user_id, site_id) DO NOTHING`, string(id), string(site))
		if err != nil {
			return fmt.Errorf("store: site %s of user %s: %w", site, id, err)
		}
	}
	return nil
}

// userSites fills in the sites of users limited to some.
func (q Q) userSites(ctx context.Context, users ...*model.User) error {
	for _, u := range users {
		if u.AllSites {
			continue
		}
		rows, err := q.query(ctx, `/* Store.userSites */ SELECT site_id FROM user_sites WHERE user_id = ? ORDER BY site_id`, string(u.ID))
		ids, err := scanAll(rows, err, "user sites", func(r scanner) (model.SiteID, error) {
			var id string
			err := r.Scan(&id)
			return model.SiteID(id), err
		})
		if err != nil {
			return err
		}
		u.Sites = ids
	}
	return nil
}

// UserDelete removes a user; their sessions, links and notification
// settings go with them.
func (q Q) UserDelete(ctx context.Context, id model.UserID) error {
	res, err := q.exec(ctx, `/* Store.UserDelete */ DELETE FROM users WHERE id = ?`, string(id))
	if err != nil {
		return fmt.Errorf("store: delete user %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("user %s: %w", id, model.ErrNotFound)
	}
	return nil
}

// UserAdminCount returns how many admins exist.
func (q Q) UserAdminCount(ctx context.Context) (int, error) {
	var n int
	if err := q.queryRow(ctx, `/* Store.UserAdminCount */ SELECT COUNT(*) FROM users WHERE role = ?`, string(model.RoleAdmin)).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count admins: %w", err)
	}
	return n, nil
}

// UserSetLastLogin records a login.
func (q Q) UserSetLastLogin(ctx context.Context, id model.UserID, at time.Time) error {
	if _, err := q.exec(ctx, `/* Store.UserSetLastLogin */ UPDATE users SET last_login_at = ? WHERE id = ?`, at.UnixMilli(), string(id)); err != nil {
		return fmt.Errorf("store: last login of %s: %w", id, err)
	}
	return nil
}

// PasswordLinkInsert stores a new one-time password link (its hash).
func (q Q) PasswordLinkInsert(ctx context.Context, l *model.PasswordLink) error {
	_, err := q.exec(ctx, `/* Store.PasswordLinkInsert */ INSERT INTO password_links (token_hash, user_id, created_at, expires_at, used_at)
		VALUES (?, ?, ?, ?, 0)`, l.TokenHash, string(l.UserID), l.CreatedAt.UnixMilli(), l.ExpiresAt.UnixMilli())
	if err != nil {
		return fmt.Errorf("store: insert password link: %w", err)
	}
	return nil
}

// PasswordLinkByHash returns a link whether used, expired or not;
// model.ErrNotFound when no link has that hash.
func (q Q) PasswordLinkByHash(ctx context.Context, hash string) (*model.PasswordLink, error) {
	var (
		l                      model.PasswordLink
		user                   string
		created, expires, used int64
	)
	err := q.queryRow(ctx, `/* Store.PasswordLinkByHash */ SELECT token_hash, user_id, created_at, expires_at, used_at
		FROM password_links WHERE token_hash = ?`, hash).Scan(&l.TokenHash, &user, &created, &expires, &used)
	if err != nil {
		return nil, notFound(err, "password link")
	}
	l.UserID = model.UserID(user)
	l.CreatedAt, l.ExpiresAt = time.UnixMilli(created).UTC(), time.UnixMilli(expires).UTC()
	if used != 0 {
		l.UsedAt = time.UnixMilli(used).UTC()
	}
	return &l, nil
}

// PasswordLinkUse marks a live link used, once: it fails with
// model.ErrLinkUsed, model.ErrLinkExpired or model.ErrNotFound otherwise.
// Using a link ends the user's other links.
func (q Q) PasswordLinkUse(ctx context.Context, hash string, now time.Time) (*model.PasswordLink, error) {
	res, err := q.exec(ctx, `/* Store.PasswordLinkUse */ UPDATE password_links SET used_at = ?
		WHERE token_hash = ? AND used_at = 0 AND expires_at > ?`, now.UnixMilli(), hash, now.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("store: use password link: %w", err)
	}
	n, _ := res.RowsAffected()
	l, err := q.PasswordLinkByHash(ctx, hash)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		if !l.UsedAt.IsZero() {
			return nil, model.ErrLinkUsed
		}
		return nil, model.ErrLinkExpired
	}
	// Older links of the user stop working once one is used.
	if _, err := q.exec(ctx, `/* Store.PasswordLinkUse */ UPDATE password_links SET used_at = ?
		WHERE user_id = ? AND used_at = 0`, now.UnixMilli(), string(l.UserID)); err != nil {
		return nil, fmt.Errorf("store: end other password links: %w", err)
	}
	return l, nil
}

// UserByEmail returns the user with the given (lower-case) e-mail.
func (q Q) UserByEmail(ctx context.Context, email string) (*model.User, error) {
	u, err := scanUser(q.queryRow(ctx, `/* Store.UserByEmail */ SELECT `+userColumns+` FROM users WHERE email = ?`, email))
	if err != nil {
		return nil, notFound(err, "user")
	}
	return u, q.userSites(ctx, u)
}

// UserByID returns one user.
func (q Q) UserByID(ctx context.Context, id model.UserID) (*model.User, error) {
	u, err := scanUser(q.queryRow(ctx, `/* Store.UserByID */ SELECT `+userColumns+` FROM users WHERE id = ?`, string(id)))
	if err != nil {
		return nil, notFound(err, "user "+string(id))
	}
	return u, q.userSites(ctx, u)
}

// UserList returns every user by e-mail.
func (q Q) UserList(ctx context.Context) ([]*model.User, error) {
	rows, err := q.query(ctx, `/* Store.UserList */ SELECT `+userColumns+` FROM users ORDER BY email`)
	users, err := scanAll(rows, err, "users", scanUser)
	if err != nil {
		return nil, err
	}
	return users, q.userSites(ctx, users...)
}

// UserCount returns how many users exist.
func (q Q) UserCount(ctx context.Context) (int, error) {
	var n int
	if err := q.queryRow(ctx, `/* Store.UserCount */ SELECT COUNT(*) FROM users`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count users: %w", err)
	}
	return n, nil
}

// UserSetPassword replaces a user's password hash.
func (q Q) UserSetPassword(ctx context.Context, id model.UserID, hash string, now time.Time) error {
	return q.userUpdate(ctx, `/* Store.UserSetPassword */ UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ?`,
		id, hash, now.UnixMilli(), string(id))
}

// UserSetLang sets a user's language; empty follows the browser.
func (q Q) UserSetLang(ctx context.Context, id model.UserID, lang string, now time.Time) error {
	return q.userUpdate(ctx, `/* Store.UserSetLang */ UPDATE users SET lang = ?, updated_at = ? WHERE id = ?`,
		id, lang, now.UnixMilli(), string(id))
}

func (q Q) userUpdate(ctx context.Context, query string, id model.UserID, args ...any) error {
	res, err := q.exec(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("store: update user %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("user %s: %w", id, model.ErrNotFound)
	}
	return nil
}

func scanUser(r scanner) (*model.User, error) {
	var (
		u                model.User
		id, role         string
		all              int
		last             int64
		created, updated int64
	)
	if err := r.Scan(&id, &u.Email, &u.PasswordHash, &u.Lang, &role, &all, &last, &created, &updated); err != nil {
		return nil, err
	}
	u.ID, u.Role, u.AllSites = model.UserID(id), model.Role(role), all != 0
	if last != 0 {
		u.LastLogin = time.UnixMilli(last).UTC()
	}
	u.CreatedAt, u.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	return &u, nil
}

// SessionInsert stores a new session.
func (q Q) SessionInsert(ctx context.Context, s *model.Session) error {
	_, err := q.exec(ctx, `/* Store.SessionInsert */ INSERT INTO sessions (token_hash, user_id, csrf, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?)`, s.TokenHash, string(s.UserID), s.CSRF, s.CreatedAt.UnixMilli(), s.ExpiresAt.UnixMilli())
	if err != nil {
		return fmt.Errorf("store: insert session: %w", err)
	}
	return nil
}

// SessionByTokenHash returns the session with the given token hash that has
// not expired at now.
func (q Q) SessionByTokenHash(ctx context.Context, hash string, now time.Time) (*model.Session, error) {
	var (
		s                model.Session
		user             string
		created, expires int64
	)
	err := q.queryRow(ctx, `/* Store.SessionByTokenHash */ SELECT token_hash, user_id, csrf, created_at, expires_at
		FROM sessions WHERE token_hash = ? AND expires_at > ?`, hash, now.UnixMilli()).
		Scan(&s.TokenHash, &user, &s.CSRF, &created, &expires)
	if err != nil {
		return nil, notFound(err, "session")
	}
	s.UserID = model.UserID(user)
	s.CreatedAt, s.ExpiresAt = time.UnixMilli(created).UTC(), time.UnixMilli(expires).UTC()
	return &s, nil
}

// SessionDelete ends one session.
func (q Q) SessionDelete(ctx context.Context, hash string) error {
	if _, err := q.exec(ctx, `/* Store.SessionDelete */ DELETE FROM sessions WHERE token_hash = ?`, hash); err != nil {
		return fmt.Errorf("store: delete session: %w", err)
	}
	return nil
}

// SessionDeleteUser ends every session of a user (after a password change).
func (q Q) SessionDeleteUser(ctx context.Context, id model.UserID) error {
	if _, err := q.exec(ctx, `/* Store.SessionDeleteUser */ DELETE FROM sessions WHERE user_id = ?`, string(id)); err != nil {
		return fmt.Errorf("store: delete sessions of %s: %w", id, err)
	}
	return nil
}

// LoginAttemptInsert records a try at logging in.
func (q Q) LoginAttemptInsert(ctx context.Context, a model.LoginAttempt) error {
	_, err := q.exec(ctx, `/* Store.LoginAttemptInsert */ INSERT INTO login_attempts (id, at, ip, email, ok) VALUES (?, ?, ?, ?, ?)`,
		model.NewID("la_", a.At), a.At.UnixMilli(), a.IP, a.Email, boolInt(a.OK))
	if err != nil {
		return fmt.Errorf("store: insert login attempt: %w", err)
	}
	return nil
}

// LoginFailures counts the failed logins since the given time from ip and
// for email.
func (q Q) LoginFailures(ctx context.Context, ip, email string, since time.Time) (byIP, byEmail int, err error) {
	err = q.queryRow(ctx, `/* Store.LoginFailures */ SELECT
		COALESCE(SUM(CASE WHEN ip = ? THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN email = ? THEN 1 ELSE 0 END), 0)
		FROM login_attempts WHERE ok = 0 AND at >= ? AND (ip = ? OR email = ?)`,
		ip, email, since.UnixMilli(), ip, email).Scan(&byIP, &byEmail)
	if err != nil {
		return 0, 0, fmt.Errorf("store: login failures: %w", err)
	}
	return byIP, byEmail, nil
}

// AuthPrune deletes expired sessions and login attempts older than before.
func (q Q) AuthPrune(ctx context.Context, now, before time.Time) error {
	if _, err := q.exec(ctx, `/* Store.AuthPrune */ DELETE FROM sessions WHERE expires_at <= ?`, now.UnixMilli()); err != nil {
		return fmt.Errorf("store: prune sessions: %w", err)
	}
	if _, err := q.exec(ctx, `/* Store.AuthPrune */ DELETE FROM login_attempts WHERE at < ?`, before.UnixMilli()); err != nil {
		return fmt.Errorf("store: prune login attempts: %w", err)
	}
	return nil
}

// timeMs is t in Unix milliseconds, 0 for the zero time.
func timeMs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
