package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// A lead's verdict is queued for each user whose rule for the site asks for
// it, on each of their channels, once; a claim leases what is due and a
// second claim within the lease takes nothing; secrets are sealed at rest.
func TestNotifyQueueClaimRecord(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a", "b")
		for _, u := range []model.UserID{"u1", "u2"} {
			if err := db.UserInsert(ctx, &model.User{ID: u, Email: string(u) + "@example.com", PasswordHash: "x", CreatedAt: now, UpdatedAt: now}); err != nil {
				t.Fatal(err)
			}
		}
		hook := "https://hooks.example.com/services/T000/SECRET"
		for _, c := range []store.NotifyChannel{
			{User: "u1", Channel: store.NotifyEmail, Kind: "smtp", Target: "owner@example.com"},
			{User: "u1", Channel: store.NotifyChat, Kind: "slack", Target: hook},
			{User: "u2", Channel: store.NotifyEmail, Kind: "smtp", Target: "other@example.com"},
		} {
			if err := db.NotifyChannelSet(ctx, &c, now); err != nil {
				t.Fatal(err)
			}
		}
		for _, r := range []store.NotifyRule{
			{User: "u1", Site: "a", Clean: true},
			{User: "u2", Site: "a", Clean: true, Review: true},
			{User: "u2", Site: "b", Clean: true},
		} {
			if err := db.NotifyRuleSet(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		queue := func(site model.SiteID, lead model.LeadID, v model.Verdict) {
			t.Helper()
			if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.NotifyQueue(ctx, site, lead, v, now) }); err != nil {
				t.Fatal(err)
			}
		}
		queue("a", "l1", model.VerdictClean)
		queue("a", "l1", model.VerdictClean) // again: nothing more
		queue("a", "l2", model.VerdictReview)
		queue("a", "l3", model.VerdictJunk)
		got, err := db.NotifyClaim(ctx, now, now.Add(time.Minute), 10)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, n := range got {
			keys = append(keys, fmt.Sprintf("%s/%s/%s/%s", n.Lead, n.Verdict, n.User, n.Channel))
		}
		want := "l1/clean/u1/chat l1/clean/u1/email l1/clean/u2/email l2/review/u2/email"
		if s := strings.Join(sorted(keys), " "); s != want {
			t.Errorf("claimed %s, want %s", s, want)
		}
		if again, err := db.NotifyClaim(ctx, now.Add(time.Second), now.Add(time.Minute), 10); err != nil || len(again) != 0 {
			t.Errorf("a second claim within the lease took %d (%v)", len(again), err)
		}
		n := got[0]
		n.State, n.Attempts, n.LastError, n.NextAt = store.NotifyPending, 1, "connection refused", now.Add(30*time.Second)
		if err := db.NotifyRecord(ctx, n, now); err != nil {
			t.Fatal(err)
		}
		list, err := db.NotifyList(ctx, n.User, 10)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, m := range list {
			if m.Lead == n.Lead && m.Channel == n.Channel && m.LastError == "connection refused" && m.Attempts == 1 {
				found = true
			}
		}
		if !found {
			t.Errorf("the recorded error is not listed: %+v", list)
		}
		if back, err := db.NotifyClaim(ctx, now.Add(30*time.Second), now.Add(3*time.Minute), 10); err != nil || len(back) != 1 {
			t.Errorf("the retry is not due again at its time: %d (%v)", len(back), err)
		}
		// Pruning takes the finished ones only.
		for _, m := range got[1:] {
			m.State, m.Sent = store.NotifySent, now
			if err := db.NotifyRecord(ctx, m, now); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := db.NotifyPrune(ctx, now.Add(time.Second), 100); err != nil || n != 3 {
			t.Errorf("pruned %d (%v), want the 3 sent", n, err)
		}
		if left, err := db.NotifyList(ctx, n.User, 10); err != nil || len(left) != 1 || left[0].State != store.NotifyPending {
			t.Errorf("left after pruning: %+v %v", left, err)
		}

		chans, err := db.NotifyChannels(ctx, "u1")
		if err != nil || len(chans) != 2 || chans[0].Target != hook {
			t.Errorf("channels read back: %+v %v", chans, err)
		}
		stored, err := db.TestQueryString(ctx, `SELECT target FROM notify_channels WHERE channel = 'chat'`)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(stored, "SECRET") {
			t.Errorf("the webhook URL is stored in clear: %s", stored)
		}
		if err := db.NotifySMTPSet(ctx, &store.NotifySMTP{Host: "mail.example.com", Port: 587, Username: "u", Password: "hunter2",
			From: "leads@example.com", TLS: "starttls"}, now); err != nil {
			t.Fatal(err)
		}
		if s, err := db.NotifySMTPGet(ctx); err != nil || s.Password != "hunter2" || s.Port != 587 {
			t.Errorf("SMTP read back: %+v %v", s, err)
		}
		if stored, err = db.TestQueryString(ctx, `SELECT password FROM notify_smtp`); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(stored, "hunter2") {
			t.Errorf("the SMTP password is stored in clear")
		}
	})
}

func sorted(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}
