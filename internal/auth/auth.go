// Package auth owns the admin users: passwords hashed with bcrypt, sessions
// kept in the database by the SHA-256 of their random token (with a
// per-session CSRF token), and the login rate limit per IP and per e-mail.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// Limits of the login rate limit: failures counted over Window.
const (
	Window         = 15 * time.Minute
	MaxFailsPerIP  = 20
	MaxFailsPerKey = 5 // per e-mail
	// MinPassword is the shortest password accepted; bcrypt reads at most
	// 72 bytes, so longer ones are refused rather than silently cut.
	MinPassword = 8
	MaxPassword = 72
	// DefaultSessionTTL is how long a login lasts.
	DefaultSessionTTL = 14 * 24 * time.Hour
)

// ErrBadLogin is a wrong e-mail or password; which one is never told.
var ErrBadLogin = errors.New("wrong e-mail or password")

// ErrThrottled is returned while too many logins failed from the IP or for
// the e-mail; the password is not checked then.
var ErrThrottled = errors.New("too many failed logins; try again later")

// Options are the dependencies of a Service.
type Options struct {
	Store  *store.DB
	Logger *slog.Logger
	Now    func() time.Time
	// Cost is the bcrypt cost (default bcrypt.DefaultCost); tests lower it.
	Cost       int
	SessionTTL time.Duration
}

// Service runs logins and sessions.
type Service struct {
	db    *store.DB
	log   *slog.Logger
	now   func() time.Time
	cost  int
	ttl   time.Duration
	dummy []byte // a hash compared against when the user is unknown
}

// New returns a Service.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Cost == 0 {
		o.Cost = bcrypt.DefaultCost
	}
	if o.SessionTTL == 0 {
		o.SessionTTL = DefaultSessionTTL
	}
	// Comparing against a hash of the same cost makes an unknown e-mail take
	// as long as a wrong password.
	dummy, _ := bcrypt.GenerateFromPassword([]byte("not a password of anyone"), o.Cost)
	return &Service{db: o.Store, log: o.Logger, now: o.Now, cost: o.Cost, ttl: o.SessionTTL, dummy: dummy}
}

// NormalizeEmail lower-cases and checks an admin e-mail.
func NormalizeEmail(email string) (string, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email {
		return "", model.Invalid("email", "not an e-mail address")
	}
	return email, nil
}

func (a *Service) hash(password string) (string, error) {
	switch {
	case len(password) < MinPassword:
		return "", model.Invalid("password", fmt.Sprintf("must be at least %d characters", MinPassword))
	case len(password) > MaxPassword:
		return "", model.Invalid("password", fmt.Sprintf("must be at most %d bytes", MaxPassword))
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), a.cost)
	if err != nil {
		return "", fmt.Errorf("auth: hash password: %w", err)
	}
	return string(h), nil
}

// AddUser creates an admin user; an e-mail already taken fails with
// model.ErrConflict.
func (a *Service) AddUser(ctx context.Context, email, password string) (*model.User, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return nil, err
	}
	h, err := a.hash(password)
	if err != nil {
		return nil, err
	}
	now := a.now().UTC()
	u := &model.User{ID: model.UserID(model.NewID("u_", now)), Email: email, PasswordHash: h, Role: model.RoleAdmin, AllSites: true, CreatedAt: now, UpdatedAt: now}
	if err := a.db.UserInsert(ctx, u); err != nil {
		return nil, err
	}
	return u, nil
}

// SetPassword replaces a user's password and ends the user's sessions.
func (a *Service) SetPassword(ctx context.Context, email, password string) error {
	email, err := NormalizeEmail(email)
	if err != nil {
		return err
	}
	h, err := a.hash(password)
	if err != nil {
		return err
	}
	return a.db.InTx(ctx, func(tx *store.Tx) error {
		u, err := tx.UserByEmail(ctx, email)
		if err != nil {
			return err
		}
		if err := tx.UserSetPassword(ctx, u.ID, h, a.now()); err != nil {
			return err
		}
		return tx.SessionDeleteUser(ctx, u.ID)
	})
}

// Bootstrap creates the first admin user when there is none; it reports
// whether it did. With users present it changes nothing, so the config's
// password is only a first-start password.
func (a *Service) Bootstrap(ctx context.Context, email, password string) (bool, error) {
	n, err := a.db.UserCount(ctx)
	if err != nil || n > 0 {
		return false, err
	}
	_, err = a.AddUser(ctx, email, password)
	if errors.Is(err, model.ErrConflict) {
		// Another node bootstrapped the same user first.
		return false, nil
	}
	return err == nil, err
}

// HasUsers tells whether any admin user exists.
func (a *Service) HasUsers(ctx context.Context) (bool, error) {
	n, err := a.db.UserCount(ctx)
	return n > 0, err
}

// Login checks an e-mail and password from ip and starts a session: it
// returns the token for the browser's cookie. Failures are counted per IP
// and per e-mail; past the limits ErrThrottled is returned without checking
// the password.
func (a *Service) Login(ctx context.Context, email, password, ip string) (string, *model.Session, error) {
	now := a.now().UTC()
	email = strings.ToLower(strings.TrimSpace(email))
	if len(email) > 254 {
		email = email[:254]
	}
	byIP, byEmail, err := a.db.LoginFailures(ctx, ip, email, now.Add(-Window))
	if err != nil {
		return "", nil, err
	}
	if byIP >= MaxFailsPerIP || byEmail >= MaxFailsPerKey {
		a.log.WarnContext(ctx, "login throttled", "ip", ip, "fails_ip", byIP, "fails_email", byEmail)
		return "", nil, ErrThrottled
	}
	u, err := a.db.UserByEmail(ctx, email)
	if err != nil && !errors.Is(err, model.ErrNotFound) {
		return "", nil, err
	}
	ok := false
	if u != nil && u.PasswordHash != noPassword {
		ok = bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(password)) == nil
	} else {
		// An invited user without a password takes as long as anyone.
		_ = bcrypt.CompareHashAndPassword(a.dummy, []byte(password))
	}
	if err := a.db.LoginAttemptInsert(ctx, model.LoginAttempt{At: now, IP: ip, Email: email, OK: ok}); err != nil {
		return "", nil, err
	}
	if !ok {
		a.log.InfoContext(ctx, "login failed", "ip", ip)
		return "", nil, ErrBadLogin
	}
	token, s, err := a.startSession(ctx, a.db.Q, u.ID, now)
	if err != nil {
		return "", nil, err
	}
	// Old sessions and attempts are pruned here rather than by a worker:
	// logins are rare and this keeps the tables small.
	if err := a.db.AuthPrune(ctx, now, now.Add(-24*time.Hour)); err != nil {
		a.log.WarnContext(ctx, "prune sessions", "err", err)
	}
	a.log.InfoContext(ctx, "login", "user", string(u.ID), "ip", ip)
	return token, s, nil
}

// startSession starts a session for a user who just proved who they are.
func (a *Service) startSession(ctx context.Context, q store.Q, u model.UserID, now time.Time) (string, *model.Session, error) {
	token := randomToken()
	s := &model.Session{TokenHash: hashToken(token), UserID: u, CSRF: randomToken(), CreatedAt: now, ExpiresAt: now.Add(a.ttl)}
	if err := q.SessionInsert(ctx, s); err != nil {
		return "", nil, err
	}
	if err := q.UserSetLastLogin(ctx, u, now); err != nil {
		return "", nil, err
	}
	return token, s, nil
}

// Session returns the live session of a token and its user; model.ErrNotFound
// when the token is unknown or expired.
func (a *Service) Session(ctx context.Context, token string) (*model.Session, *model.User, error) {
	if token == "" {
		return nil, nil, fmt.Errorf("session: %w", model.ErrNotFound)
	}
	s, err := a.db.SessionByTokenHash(ctx, hashToken(token), a.now())
	if err != nil {
		return nil, nil, err
	}
	u, err := a.db.UserByID(ctx, s.UserID)
	if err != nil {
		return nil, nil, err
	}
	return s, u, nil
}

// Logout ends a session.
func (a *Service) Logout(ctx context.Context, s *model.Session) error {
	return a.db.SessionDelete(ctx, s.TokenHash)
}

// SetLang sets a user's language: "en", "tr", or "" to follow the browser.
func (a *Service) SetLang(ctx context.Context, id model.UserID, lang string) error {
	switch lang {
	case "", "en", "tr":
	default:
		return model.Invalid("lang", "want en, tr or empty")
	}
	return a.db.UserSetLang(ctx, id, lang, a.now())
}

// CheckCSRF tells whether a form's token is the session's, in constant time.
func CheckCSRF(s *model.Session, token string) bool {
	return s != nil && token != "" && subtle.ConstantTimeCompare([]byte(s.CSRF), []byte(token)) == 1
}

func randomToken() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
