package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestUserSites: a user limited to some sites keeps them, the lead and
// delivery lists keep to them, and a removed site or user leaves no row.
func TestUserSites(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a", "b", "c")
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(db.UserInsert(ctx, &model.User{ID: "u_admin", Email: "admin@x.example", PasswordHash: "x", AllSites: true, CreatedAt: now, UpdatedAt: now}))
		must(db.UserInsert(ctx, &model.User{ID: "u_m", Email: "m@x.example", PasswordHash: "x", Role: model.RoleMember,
			Sites: []model.SiteID{"b", "a"}, CreatedAt: now, UpdatedAt: now}))
		u, err := db.UserByID(ctx, "u_m")
		must(err)
		if u.Role != model.RoleMember || u.AllSites || strings.Join(ids(u.Sites), ",") != "a,b" || !u.MaySee("a") || u.MaySee("c") {
			t.Errorf("member as stored: %+v", u)
		}
		a, err := db.UserByEmail(ctx, "admin@x.example")
		must(err)
		if a.Role != model.RoleAdmin || !a.AllSites || !a.MaySee("c") || !a.LastLogin.IsZero() {
			t.Errorf("admin as stored: %+v", a)
		}
		if n, err := db.UserAdminCount(ctx); n != 1 || err != nil {
			t.Errorf("admins: %d %v", n, err)
		}
		for i, site := range []model.SiteID{"a", "b", "c"} {
			at := now.Add(time.Duration(i) * time.Minute)
			must(db.LeadInsert(ctx, &model.Lead{ID: model.LeadID("l" + string(site)), SiteID: site, EventID: "e" + string(site),
				SubmittedAt: at, ReceivedAt: at, Decision: model.Decision{Verdict: model.VerdictClean}}))
		}
		leads := func(only []model.SiteID) string {
			list, err := db.LeadList(ctx, store.LeadFilter{Only: only, Limit: 10})
			must(err)
			var s []string
			for _, l := range list {
				s = append(s, string(l.ID))
			}
			return strings.Join(s, ",")
		}
		if got := leads(u.Sites); got != "lb,la" {
			t.Errorf("the member's leads: %q", got)
		}
		if got := leads(nil); got != "lc,lb,la" {
			t.Errorf("everyone's leads: %q", got)
		}
		if got := leads([]model.SiteID{}); got != "" {
			t.Errorf("a member of no site sees %q", got)
		}
		dels, err := db.DeliveryList(ctx, store.DeliveryFilter{Only: []model.SiteID{}, Limit: 10})
		if err != nil || len(dels) != 0 {
			t.Errorf("deliveries of no site: %v %v", dels, err)
		}
		// Access changes: to c alone (the notifications of a and b go),
		// then to every site.
		must(db.NotifyRuleSet(ctx, store.NotifyRule{User: "u_m", Site: "a", Clean: true}))
		must(db.NotifyRuleSet(ctx, store.NotifyRule{User: "u_m", Site: "c", Clean: true}))
		must(db.UserSetAccess(ctx, "u_m", model.RoleMember, false, []model.SiteID{"c"}, now))
		if rules, err := db.NotifyRules(ctx, "u_m"); err != nil || len(rules) != 1 || !rules["c"].Clean {
			t.Errorf("notification rules after the change: %v %v", rules, err)
		}
		if u, _ := db.UserByID(ctx, "u_m"); strings.Join(ids(u.Sites), ",") != "c" {
			t.Errorf("after a change: %v", u.Sites)
		}
		must(db.UserSetLastLogin(ctx, "u_m", now.Add(time.Hour)))
		if u, _ := db.UserByID(ctx, "u_m"); !u.LastLogin.Equal(now.Add(time.Hour)) {
			t.Errorf("last login: %v", u.LastLogin)
		}
		must(db.UserSetAccess(ctx, "u_m", model.RoleMember, true, nil, now))
		if list, _ := db.UserList(ctx); len(list) != 2 || !list[1].AllSites || len(list[1].Sites) != 0 {
			t.Errorf("list: %+v", list)
		}
		if err := db.UserDelete(ctx, "u_m"); err != nil {
			t.Fatal(err)
		}
		if err := db.UserDelete(ctx, "u_m"); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("deleting twice: %v", err)
		}
		if n, err := db.TestQueryString(ctx, `SELECT COUNT(*) FROM user_sites`); n != "0" || err != nil {
			t.Errorf("user_sites left: %s %v", n, err)
		}
	})
}

// TestPasswordLinkStore: a link is used once, not after it expires, and
// using one ends the user's other links.
func TestPasswordLinkStore(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
		if err := db.UserInsert(ctx, &model.User{ID: "u1", Email: "a@x.example", PasswordHash: "!", AllSites: true, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		for _, h := range []string{"h1", "h2", "h3"} {
			if err := db.PasswordLinkInsert(ctx, &model.PasswordLink{TokenHash: h, UserID: "u1", CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour)}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.PasswordLinkUse(ctx, "h1", now.Add(24*time.Hour)); !errors.Is(err, model.ErrLinkExpired) {
			t.Errorf("at its expiry: %v", err)
		}
		l, err := db.PasswordLinkUse(ctx, "h1", now.Add(time.Hour))
		if err != nil || l.UserID != "u1" {
			t.Fatalf("first use: %v %v", l, err)
		}
		if _, err := db.PasswordLinkUse(ctx, "h1", now.Add(2*time.Hour)); !errors.Is(err, model.ErrLinkUsed) {
			t.Errorf("second use: %v", err)
		}
		if _, err := db.PasswordLinkUse(ctx, "h2", now.Add(2*time.Hour)); !errors.Is(err, model.ErrLinkUsed) {
			t.Errorf("another link after one was used: %v", err)
		}
		if _, err := db.PasswordLinkUse(ctx, "nope", now); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("unknown link: %v", err)
		}
		if err := db.UserDelete(ctx, "u1"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.PasswordLinkByHash(ctx, "h3"); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("a removed user's link remains: %v", err)
		}
	})
}

func ids(s []model.SiteID) []string {
	out := make([]string, len(s))
	for i, id := range s {
		out[i] = string(id)
	}
	return out
}
