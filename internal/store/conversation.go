package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// WhatsAppConversationStart records the Click-to-WhatsApp conversation a
// lead's first message started, under each of the sender's keys. A key
// already in a conversation (an older lead of the same person) moves to the
// new one.
func (q Q) WhatsAppConversationStart(ctx context.Context, site model.SiteID, senders []string, lead model.LeadID, at time.Time) error {
	for _, s := range senders {
		_, err := q.exec(ctx, `/* Store.WhatsAppConversationStart */ INSERT INTO whatsapp_conversations
			(site_id, sender, lead_id, started_at, business_wrote_at, messages, last_at) VALUES (?, ?, ?, ?, NULL, 1, ?)
			ON CONFLICT (site_id, sender) DO UPDATE SET lead_id = excluded.lead_id, started_at = excluded.started_at,
				business_wrote_at = NULL, messages = 1, last_at = excluded.last_at`,
			string(site), s, string(lead), at.UnixMilli(), at.UnixMilli())
		if err != nil {
			return fmt.Errorf("store: start whatsapp conversation: %w", err)
		}
	}
	return nil
}

// WhatsAppConversationFind returns the site's conversation of the first of
// senders that has one.
func (q Q) WhatsAppConversationFind(ctx context.Context, site model.SiteID, senders []string) (*model.WhatsAppConversation, error) {
	for _, s := range senders {
		var (
			c             model.WhatsAppConversation
			lead          string
			started, last int64
			wrote         sql.NullInt64
		)
		err := q.queryRow(ctx, `/* Store.WhatsAppConversationFind */ SELECT lead_id, started_at, business_wrote_at, messages, last_at
			FROM whatsapp_conversations WHERE site_id = ? AND sender = ?`, string(site), s).
			Scan(&lead, &started, &wrote, &c.Messages, &last)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("store: whatsapp conversation: %w", err)
		}
		c.SiteID, c.Sender, c.LeadID = site, s, model.LeadID(lead)
		c.StartedAt, c.LastAt = time.UnixMilli(started).UTC(), time.UnixMilli(last).UTC()
		if wrote.Valid {
			t := time.UnixMilli(wrote.Int64).UTC()
			c.BusinessWroteAt = &t
		}
		return &c, nil
	}
	return nil, fmt.Errorf("whatsapp conversation: %w", model.ErrNotFound)
}

// WhatsAppConversationMessage counts one more message of the sender in the
// conversation of lead.
func (q Q) WhatsAppConversationMessage(ctx context.Context, site model.SiteID, lead model.LeadID, at time.Time) error {
	_, err := q.exec(ctx, `/* Store.WhatsAppConversationMessage */ UPDATE whatsapp_conversations
		SET messages = messages + 1, last_at = CASE WHEN last_at < ? THEN ? ELSE last_at END
		WHERE site_id = ? AND lead_id = ?`, at.UnixMilli(), at.UnixMilli(), string(site), string(lead))
	if err != nil {
		return fmt.Errorf("store: whatsapp conversation message: %w", err)
	}
	return nil
}

// WhatsAppConversationAlias files the conversation under one more key of
// its sender (a user id that came after the phone, or the reverse), so a
// status naming only that key finds it. A key already in use is left as it
// is.
func (q Q) WhatsAppConversationAlias(ctx context.Context, c *model.WhatsAppConversation, sender string) error {
	var wrote any
	if c.BusinessWroteAt != nil {
		wrote = c.BusinessWroteAt.UnixMilli()
	}
	_, err := q.exec(ctx, `/* Store.WhatsAppConversationAlias */ INSERT INTO whatsapp_conversations
		(site_id, sender, lead_id, started_at, business_wrote_at, messages, last_at) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (site_id, sender) DO NOTHING`,
		string(c.SiteID), sender, string(c.LeadID), c.StartedAt.UnixMilli(), wrote, c.Messages, c.LastAt.UnixMilli())
	if err != nil {
		return fmt.Errorf("store: whatsapp conversation alias: %w", err)
	}
	return nil
}

// WhatsAppConversationBusinessWrote records that the business wrote to the
// sender at at, in the sender's conversations on the sites (under all their
// keys) that started before it and have no such time yet. It reports how
// many rows it marked.
func (q Q) WhatsAppConversationBusinessWrote(ctx context.Context, sites []model.SiteID, senders []string, at time.Time) (int, error) {
	total := 0
	for _, site := range sites {
		for _, s := range senders {
			res, err := q.exec(ctx, `/* Store.WhatsAppConversationBusinessWrote */ UPDATE whatsapp_conversations
				SET business_wrote_at = ? WHERE site_id = ? AND business_wrote_at IS NULL AND started_at <= ?
				AND lead_id IN (SELECT lead_id FROM whatsapp_conversations WHERE site_id = ? AND sender = ?)`,
				at.UnixMilli(), string(site), at.UnixMilli(), string(site), s)
			if err != nil {
				return total, fmt.Errorf("store: whatsapp conversation: %w", err)
			}
			n, _ := res.RowsAffected()
			total += int(n)
		}
	}
	return total, nil
}
