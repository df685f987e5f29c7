package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

func TestWhatsAppConversation(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		t0 := time.Now().UTC().Truncate(time.Millisecond)
		site := &model.Site{ID: "dent", Name: "D", Settings: model.SiteSettings{Country: "TR"}}
		if err := db.SiteUpsert(ctx, site, t0); err != nil {
			t.Fatal(err)
		}
		keys := []string{"user:TR.1", "phone:905324128719"}
		if _, err := db.WhatsAppConversationFind(ctx, "dent", keys); !errors.Is(err, model.ErrNotFound) {
			t.Fatalf("before: %v", err)
		}
		if err := db.WhatsAppConversationStart(ctx, "dent", keys, "ld_1", t0); err != nil {
			t.Fatal(err)
		}
		// Found by either key; a status before the start marks nothing.
		c, err := db.WhatsAppConversationFind(ctx, "dent", []string{"user:TR.9", "phone:905324128719"})
		if err != nil || c.LeadID != "ld_1" || !c.StartedAt.Equal(t0) || c.BusinessWroteAt != nil || c.Messages != 1 {
			t.Fatalf("found %+v %v", c, err)
		}
		if n, err := db.WhatsAppConversationBusinessWrote(ctx, []model.SiteID{"dent"}, keys[:1], t0.Add(-time.Second)); err != nil || n != 0 {
			t.Errorf("a status before the start marked %d (%v)", n, err)
		}
		wrote := t0.Add(time.Minute)
		if n, _ := db.WhatsAppConversationBusinessWrote(ctx, []model.SiteID{"dent"}, keys[:1], wrote); n != 2 {
			t.Errorf("marked %d rows, want the conversation under both keys", n)
		}
		// The first time the business wrote stays.
		db.WhatsAppConversationBusinessWrote(ctx, []model.SiteID{"dent"}, keys[:1], wrote.Add(time.Hour))
		if err := db.WhatsAppConversationMessage(ctx, "dent", "ld_1", t0.Add(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
		c, _ = db.WhatsAppConversationFind(ctx, "dent", keys[:1])
		if c.BusinessWroteAt == nil || !c.BusinessWroteAt.Equal(wrote) || c.Messages != 2 || !c.LastAt.Equal(t0.Add(2*time.Minute)) {
			t.Errorf("after a reply %+v", c)
		}
		// Filed under a user id that came later, found by it with the
		// same conversation; a status to it marks every key.
		db.WhatsAppConversationStart(ctx, "dent", []string{"phone:905320000000"}, "ld_9", t0)
		c9, _ := db.WhatsAppConversationFind(ctx, "dent", []string{"phone:905320000000"})
		if err := db.WhatsAppConversationAlias(ctx, c9, "user:TR.9"); err != nil {
			t.Fatal(err)
		}
		if n, _ := db.WhatsAppConversationBusinessWrote(ctx, []model.SiteID{"dent"}, []string{"user:TR.9"}, wrote); n != 2 {
			t.Errorf("a status to the alias marked %d rows, want both keys", n)
		}
		if c9, _ = db.WhatsAppConversationFind(ctx, "dent", []string{"phone:905320000000"}); c9.LeadID != "ld_9" || c9.BusinessWroteAt == nil {
			t.Errorf("by the first key after a status to the alias: %+v", c9)
		}
		// A new lead of the same person takes the keys over, afresh.
		db.WhatsAppConversationStart(ctx, "dent", keys, "ld_2", t0.Add(48*time.Hour))
		c, _ = db.WhatsAppConversationFind(ctx, "dent", keys[1:])
		if c.LeadID != "ld_2" || c.BusinessWroteAt != nil || c.Messages != 1 {
			t.Errorf("new conversation %+v", c)
		}
		// Forgetting the lead forgets its conversation.
		if n, err := db.WhatsAppContactsForget(ctx, "ld_2"); err != nil || n != 2 {
			t.Errorf("forget: %d %v", n, err)
		}
		if _, err := db.WhatsAppConversationFind(ctx, "dent", keys); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("after forget: %v", err)
		}
	})
}
