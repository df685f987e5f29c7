package auth_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/auth"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

// TestPasswordLink: a link's token is stored only as its hash, works once,
// not after 24 hours, logs the user in and ends their other sessions; an
// invited user cannot log in before.
func TestPasswordLink(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
		a := newAuth(db, &now)
		u, err := a.Invite(ctx, " Ece@Dent.example ", auth.Access{Role: model.RoleMember, Sites: []model.SiteID{}})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := a.Login(ctx, "ece@dent.example", "!", "10.0.0.1"); !errors.Is(err, auth.ErrBadLogin) {
			t.Errorf("an invited user logs in without a password: %v", err)
		}
		token, expires, err := a.PasswordLink(ctx, u.ID)
		if err != nil || !expires.Equal(now.Add(24*time.Hour)) {
			t.Fatal(expires, err)
		}
		sum := sha256.Sum256([]byte(token))
		if _, err := db.PasswordLinkByHash(ctx, token); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("the clear token is stored: %v", err)
		}
		if _, err := db.PasswordLinkByHash(ctx, hex.EncodeToString(sum[:])); err != nil {
			t.Errorf("the token's hash is not stored: %v", err)
		}
		if got, err := a.LinkUser(ctx, token); err != nil || got.ID != u.ID {
			t.Errorf("link user: %v %v", got, err)
		}
		var ie *model.InputError
		if _, _, err := a.UseLink(ctx, token, "short", "10.0.0.1"); !errors.As(err, &ie) {
			t.Errorf("a short password: %v", err)
		}
		sessTok, _, err := a.UseLink(ctx, token, "ece's password", "10.0.0.1")
		if err != nil {
			t.Fatalf("the short password spent the link: %v", err)
		}
		if _, got, err := a.Session(ctx, sessTok); err != nil || got.ID != u.ID || got.LastLogin.IsZero() {
			t.Errorf("session after the link: %v %v", got, err)
		}
		if _, _, err := a.UseLink(ctx, token, "another password", "10.0.0.1"); !errors.Is(err, model.ErrLinkUsed) {
			t.Errorf("the link twice: %v", err)
		}
		if _, err := a.LinkUser(ctx, token); !errors.Is(err, model.ErrLinkUsed) {
			t.Errorf("the used link's page: %v", err)
		}
		if _, _, err := a.Login(ctx, "ece@dent.example", "ece's password", "10.0.0.1"); err != nil {
			t.Errorf("login with the password set: %v", err)
		}
		// A new link ends the sessions when used; an old one expires.
		token2, _, _ := a.PasswordLink(ctx, u.ID)
		now = now.Add(24 * time.Hour)
		if _, err := a.LinkUser(ctx, token2); !errors.Is(err, model.ErrLinkExpired) {
			t.Errorf("a day-old link's page: %v", err)
		}
		if _, _, err := a.UseLink(ctx, token2, "late password", "10.0.0.1"); !errors.Is(err, model.ErrLinkExpired) {
			t.Errorf("a day-old link: %v", err)
		}
		token3, _, _ := a.PasswordLink(ctx, u.ID)
		if _, _, err := a.UseLink(ctx, token3, "third password", "10.0.0.1"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := a.Session(ctx, sessTok); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("the old session survives a new password: %v", err)
		}
	})
}

// TestRemoveUser: not oneself, never the last admin; a removed user's
// sessions end.
func TestRemoveUser(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
		a := newAuth(db, &now)
		one, _ := a.AddUser(ctx, "one@x.example", "password one")
		two, _ := a.Invite(ctx, "two@x.example", auth.Access{Role: model.RoleAdmin, AllSites: true})
		if err := a.RemoveUser(ctx, one.ID, one.ID); !errors.Is(err, auth.ErrSelf) {
			t.Errorf("removing oneself: %v", err)
		}
		tok, _, _ := a.Login(ctx, "one@x.example", "password one", "::1")
		if err := a.RemoveUser(ctx, two.ID, one.ID); err != nil {
			t.Fatal(err)
		}
		if _, _, err := a.Session(ctx, tok); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("a removed user's session: %v", err)
		}
		m, _ := a.Invite(ctx, "m@x.example", auth.Access{Role: model.RoleMember, AllSites: true})
		if err := a.RemoveUser(ctx, m.ID, two.ID); !errors.Is(err, auth.ErrLastAdmin) {
			t.Errorf("removing the last admin: %v", err)
		}
		if err := a.SetAccess(ctx, two.ID, auth.Access{Role: model.RoleMember, AllSites: true}); !errors.Is(err, auth.ErrLastAdmin) {
			t.Errorf("demoting the last admin: %v", err)
		}
		if _, err := a.Invite(ctx, "x@x.example", auth.Access{Role: "owner"}); err == nil {
			t.Error("an unknown role was taken")
		}
	})
}
