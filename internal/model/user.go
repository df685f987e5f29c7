package model

import "time"

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
	Lang      string
	CreatedAt time.Time
	UpdatedAt time.Time
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
