package store

import (
	"context"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

const userColumns = `id, email, password_hash, lang, created_at, updated_at`

// UserInsert stores a new admin user; an e-mail already taken fails with
// model.ErrConflict.
func (q Q) UserInsert(ctx context.Context, u *model.User) error {
	_, err := q.exec(ctx, `/* Store.UserInsert */ INSERT INTO users (`+userColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
		string(u.ID), u.Email, u.PasswordHash, u.Lang, u.CreatedAt.UnixMilli(), u.UpdatedAt.UnixMilli())
	if isUniqueViolation(err) {
		return fmt.Errorf("user %s: %w", u.Email, model.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store: insert user: %w", err)
	}
	return nil
}

// UserByEmail returns the user with the given (lower-case) e-mail.
func (q Q) UserByEmail(ctx context.Context, email string) (*model.User, error) {
	u, err := scanUser(q.queryRow(ctx, `/* Store.UserByEmail */ SELECT `+userColumns+` FROM users WHERE email = ?`, email))
	if err != nil {
		return nil, notFound(err, "user")
	}
	return u, nil
}

// UserByID returns one user.
func (q Q) UserByID(ctx context.Context, id model.UserID) (*model.User, error) {
	u, err := scanUser(q.queryRow(ctx, `/* Store.UserByID */ SELECT `+userColumns+` FROM users WHERE id = ?`, string(id)))
	if err != nil {
		return nil, notFound(err, "user "+string(id))
	}
	return u, nil
}

// UserList returns every user by e-mail.
func (q Q) UserList(ctx context.Context) ([]*model.User, error) {
	rows, err := q.query(ctx, `/* Store.UserList */ SELECT `+userColumns+` FROM users ORDER BY email`)
	return scanAll(rows, err, "users", scanUser)
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
		id               string
		created, updated int64
	)
	if err := r.Scan(&id, &u.Email, &u.PasswordHash, &u.Lang, &created, &updated); err != nil {
		return nil, err
	}
	u.ID = model.UserID(id)
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
