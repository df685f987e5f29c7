package auth_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/cleanads/cleanads/internal/auth"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

func newAuth(db *store.DB, now *time.Time) *auth.Service {
	return auth.New(auth.Options{Store: db, Cost: bcrypt.MinCost, Now: func() time.Time { return *now }})
}

func TestLoginSessionLogout(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		a := newAuth(db, &now)
		if _, err := a.AddUser(ctx, " Owner@Clinic.example ", "correct horse"); err != nil {
			t.Fatal(err)
		}
		if _, err := a.AddUser(ctx, "owner@clinic.example", "another pass"); !errors.Is(err, model.ErrConflict) {
			t.Errorf("same e-mail twice: %v", err)
		}
		for _, c := range []struct{ email, pw string }{{"owner@clinic.example", "short"}, {"not-an-email", "long enough"}} {
			var ie *model.InputError
			if _, err := a.AddUser(ctx, c.email, c.pw); !errors.As(err, &ie) {
				t.Errorf("AddUser(%q, %q): %v, want an input error", c.email, c.pw, err)
			}
		}
		if _, _, err := a.Login(ctx, "owner@clinic.example", "wrong", "10.0.0.1"); !errors.Is(err, auth.ErrBadLogin) {
			t.Errorf("wrong password: %v", err)
		}
		if _, _, err := a.Login(ctx, "nobody@clinic.example", "correct horse", "10.0.0.1"); !errors.Is(err, auth.ErrBadLogin) {
			t.Errorf("unknown user: %v", err)
		}
		token, s, err := a.Login(ctx, "OWNER@clinic.example", "correct horse", "10.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		if s.TokenHash == token || s.CSRF == "" {
			t.Errorf("session stores the token in clear or lacks a CSRF token: %+v", s)
		}
		got, u, err := a.Session(ctx, token)
		if err != nil || u.Email != "owner@clinic.example" || !auth.CheckCSRF(got, s.CSRF) || auth.CheckCSRF(got, "x") {
			t.Fatalf("session: %v %v", u, err)
		}
		now = now.Add(auth.DefaultSessionTTL + time.Second)
		if _, _, err := a.Session(ctx, token); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("expired session still works: %v", err)
		}
		token, s, err = a.Login(ctx, "owner@clinic.example", "correct horse", "10.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Logout(ctx, s); err != nil {
			t.Fatal(err)
		}
		if _, _, err := a.Session(ctx, token); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("session survives logout: %v", err)
		}
		// A new password ends every session.
		token, _, _ = a.Login(ctx, "owner@clinic.example", "correct horse", "10.0.0.1")
		if err := a.SetPassword(ctx, "owner@clinic.example", "new password"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := a.Session(ctx, token); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("session survives a password change: %v", err)
		}
		if _, _, err := a.Login(ctx, "owner@clinic.example", "new password", "10.0.0.1"); err != nil {
			t.Errorf("new password: %v", err)
		}
	})
}

func TestThrottle(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		a := newAuth(db, &now)
		a.AddUser(ctx, "owner@clinic.example", "correct horse")
		// Per e-mail: from different IPs, the account locks after a few failures.
		for i := range auth.MaxFailsPerKey {
			a.Login(ctx, "owner@clinic.example", "guess", "10.0.1."+string(rune('0'+i)))
		}
		if _, _, err := a.Login(ctx, "owner@clinic.example", "correct horse", "10.0.2.1"); !errors.Is(err, auth.ErrThrottled) {
			t.Errorf("per e-mail limit: %v", err)
		}
		// Per IP: one address trying many e-mails.
		for i := range auth.MaxFailsPerIP {
			a.Login(ctx, "user"+string(rune('a'+i))+"@x.example", "guess", "10.9.9.9")
		}
		if _, _, err := a.Login(ctx, "someone@x.example", "guess", "10.9.9.9"); !errors.Is(err, auth.ErrThrottled) {
			t.Errorf("per IP limit: %v", err)
		}
		// The window passes.
		now = now.Add(auth.Window + time.Second)
		if _, _, err := a.Login(ctx, "owner@clinic.example", "correct horse", "10.9.9.9"); err != nil {
			t.Errorf("after the window: %v", err)
		}
	})
}

func TestBootstrap(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	a := newAuth(storetest.SQLite(t), &now)
	if ok, err := a.Bootstrap(ctx, "admin@clinic.example", "first password"); !ok || err != nil {
		t.Fatalf("first bootstrap: %v %v", ok, err)
	}
	if ok, err := a.Bootstrap(ctx, "other@clinic.example", "second password"); ok || err != nil {
		t.Errorf("bootstrap with a user present: %v %v", ok, err)
	}
	if _, _, err := a.Login(ctx, "admin@clinic.example", "first password", "::1"); err != nil {
		t.Error(err)
	}
}
