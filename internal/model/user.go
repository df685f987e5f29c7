package model

import (
	"errors"
	"time"
)

// UserID identifies an admin user.
type UserID string

// User is a person who may open the admin web UI.
type User struct {
	ID    UserID
	Email string
	// PasswordHash is the bcrypt hash of the password.
	PasswordHash string
	// Lang is the user's chosen language ("en", "tr"); empty follows the
	// browser.
	Lang string
	// Role is RoleAdmin (manages people) or RoleMember.
	Role Role
	// AllSites tells the user sees every site; otherwise only Sites.
	AllSites bool
	Sites    []SiteID
	// LastLogin is zero until the user first logs in.
	LastLogin time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Role is what a user may do in the admin UI.
type Role string

// The roles: an admin manages people and the installation; a member works
// with the leads of the sites they may see.
const (
	RoleAdmin  Role = "admin"
	RoleMember Role = "member"
)

// IsAdmin tells whether the user manages people.
func (u *User) IsAdmin() bool { return u.Role == RoleAdmin }

// MaySee tells whether the user may see a site's leads and settings.
func (u *User) MaySee(site SiteID) bool {
	if u.AllSites {
		return true
	}
	for _, s := range u.Sites {
		if s == site {
			return true
		}
	}
	return false
}

// PasswordLink is a one-time link that sets a user's password; only the
// SHA-256 of its token is stored.
type PasswordLink struct {
	TokenHash string
	UserID    UserID
	CreatedAt time.Time
	ExpiresAt time.Time
	// UsedAt is zero until the link is used.
	UsedAt time.Time
}

// Session is a logged-in browser. Its token is known only to the browser;
// the store keeps its SHA-256.
type Session struct {
	TokenHash string
	UserID    UserID
	// CSRF is the token every form of the session must carry.
	CSRF      string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// LoginAttempt is one try at logging in, kept for the rate limit.
type LoginAttempt struct {
	At    time.Time
	IP    string
	Email string // lower-cased as typed
	OK    bool
}

// ErrLinkUsed is a password link that was used already.
var ErrLinkUsed = errors.New("this link was used already")

// ErrLinkExpired is a password link past its time.
var ErrLinkExpired = errors.New("this link has expired")
