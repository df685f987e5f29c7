package app

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
	"github.com/cleanads/cleanads/internal/store"
)

// Outcomes of a Click-to-WhatsApp message.
const (
	OutcomeLead   = "lead"   // a CTWA first message: a new lead, judged
	OutcomeJoined = "joined" // a later message of a CTWA lead's conversation
)

// WhatsAppReferral is what a message sent from a Click-to-WhatsApp ad says
// about the ad (the message's referral object).
type WhatsAppReferral struct {
	// CTWAClid is the ad click id; a referral without it (an ad in
	// WhatsApp Status, a post) starts no lead: there is nothing to tell
	// Meta about.
	CTWAClid   string
	SourceID   string // the ad id
	SourceType string // "ad" or "post"
	SourceURL  string
	Headline   string
}

// WhatsAppStatus is the status of a message the business sent (sent,
// delivered, read, failed), as a webhook reports it.
type WhatsAppStatus struct {
	PhoneNumberID string
	// RecipientID is the person's phone (digits), RecipientUserID their
	// business-scoped user id; either may be missing.
	RecipientID     string
	RecipientUserID string
	Status          string
	At              time.Time
}

// whatsAppSenders are the keys a sender's conversation is kept under: the
// business-scoped user id first, then the phone digits.
func whatsAppSenders(userID, phone string) []string {
	var keys []string
	if userID != "" {
		keys = append(keys, "user:"+userID)
	}
	if phone = strings.TrimPrefix(phone, "+"); phone != "" {
		keys = append(keys, "phone:"+phone)
	}
	return keys
}

// ctwaInbound handles a message that starts or continues a
// Click-to-WhatsApp conversation on the first of sites that has one; done
// is false for any other message, which is then matched to website leads.
//
// A message with a referral carrying ctwa_clid starts a lead, unless the
// sender's conversation started within the review window: then it is the
// same conversation (a second tap on an ad) and joins it. A later message
// joins its conversation's lead while that lead's review window is open;
// it is evidence (whatsapp_reply) for a lead held for review only once the
// business has written to the person (a status of an outgoing message was
// seen, or the message replies to one of the business's messages): only
// then is it an answer. Messages before that are the first message going
// on, or a bot, and prove nothing.
func (s *Service) ctwaInbound(ctx context.Context, tx *store.Tx, sites []*model.Site, m WhatsAppMessage, at, now time.Time, res *InboundResult) (model.SiteID, bool, error) {
	senders := whatsAppSenders(m.FromUserID, m.From)
	if len(senders) == 0 {
		return "", false, nil
	}
	clid := ""
	if m.Referral != nil {
		clid = strings.TrimSpace(m.Referral.CTWAClid)
	}
	for _, site := range sites {
		conv, err := tx.WhatsAppConversationFind(ctx, site.ID, senders)
		if err != nil && !errors.Is(err, model.ErrNotFound) {
			return "", false, err
		}
		if conv != nil && now.Sub(conv.StartedAt) <= s.rules(site).ReviewTimeout() {
			lead, err := siteLead(ctx, tx, site, conv.LeadID)
			switch {
			case err == nil:
				if err := s.ctwaJoin(ctx, tx, site, lead, conv, m, at, now); err != nil {
					return "", false, err
				}
				*res = InboundResult{Outcome: OutcomeJoined, LeadID: lead.ID, Verdict: lead.Verdict}
				return site.ID, true, nil
			case !errors.Is(err, model.ErrNotFound):
				return "", false, err
			}
			// The lead was erased: a new click may start a new one.
		}
		if clid == "" {
			continue
		}
		lead, err := s.ctwaStart(ctx, tx, site, m, clid, at, now)
		if err != nil {
			return "", false, err
		}
		if err := tx.WhatsAppConversationStart(ctx, site.ID, senders, lead.ID, at); err != nil {
			return "", false, err
		}
		*res = InboundResult{Outcome: OutcomeLead, LeadID: lead.ID, Verdict: lead.Verdict}
		// A number belongs to one site in practice; should two share it,
		// the first one takes the lead rather than counting it twice.
		return site.ID, true, nil
	}
	return "", false, nil
}

// ctwaStart makes, judges and stores the lead of a CTWA first message, with
// its events queued, inside tx.
func (s *Service) ctwaStart(ctx context.Context, tx *store.Tx, site *model.Site, m WhatsAppMessage, clid string, at, now time.Time) (*model.Lead, error) {
	detail := map[string]string{
		model.DetailCTWAClid:       clip(clid, maxURL),
		model.DetailAdID:           clip(m.Referral.SourceID, maxShort),
		model.DetailAdSourceType:   clip(m.Referral.SourceType, maxShort),
		model.DetailAdSourceURL:    clip(m.Referral.SourceURL, maxURL),
		model.DetailAdHeadline:     clip(m.Referral.Headline, maxShort),
		model.DetailWABAID:         clip(m.WABAID, maxShort),
		model.DetailPhoneNumberID:  clip(m.PhoneNumberID, maxShort),
		model.DetailWhatsAppUserID: clip(m.FromUserID, maxShort),
	}
	for k, v := range detail {
		if v == "" {
			delete(detail, k)
		}
	}
	lead := &model.Lead{
		ID:           model.LeadID(s.ids.New("ld_", now)),
		SiteID:       site.ID,
		EventID:      model.NewUUIDv7(now),
		Name:         clip(m.ProfileName, maxShort),
		Message:      clip(m.Text, maxMessage),
		Source:       model.SourceWhatsApp,
		SourceDetail: detail,
		SubmittedAt:  at,
		ReceivedAt:   now,
	}
	if from := strings.TrimPrefix(m.From, "+"); from != "" {
		lead.Phone = "+" + from
		if k, err := capi.NormalizePhone(lead.Phone, site.Settings.Country); err == nil {
			lead.PhoneKey = k
		}
	}
	d, err := s.judge(ctx, tx, site, lead, now, qualify.TokenCheck{}, qualify.CheckPhone(lead.Phone, site.Settings.Country))
	if err != nil {
		return nil, err
	}
	lead.Decision = d
	if err := tx.LeadInsert(ctx, lead); err != nil {
		return nil, err
	}
	if err := tx.HistoryIntakeInsert(ctx, &model.HistoryEntry{ID: s.ids.New("h_", now), LeadID: lead.ID, At: now,
		Kind: model.HistoryVerdict, Data: map[string]any{"verdict": lead.Verdict, "score": lead.Score,
			"decided_by": lead.DecidedBy, "source": model.SourceWhatsApp}}, lead); err != nil {
		return nil, err
	}
	if err := s.queueNotify(ctx, tx, lead, now); err != nil {
		return nil, err
	}
	if err := s.queueHooks(ctx, tx, lead, hooksOfNewLead(lead), now); err != nil {
		return nil, err
	}
	if m.FromUserID != "" && lead.PhoneKey != "" {
		// So a later message without the phone still finds the person's
		// leads, as a website lead's WhatsApp reply does.
		if err := tx.WhatsAppContactUpsert(ctx, site.ID, m.FromUserID, lead.PhoneKey, lead.ID, now); err != nil {
			return nil, err
		}
	}
	return lead, s.enqueueLead(ctx, tx, site, lead, nil, now)
}

// ctwaJoin adds a later message to its conversation's lead, and applies it
// as evidence when it answers the business (see ctwaInbound).
func (s *Service) ctwaJoin(ctx context.Context, tx *store.Tx, site *model.Site, lead *model.Lead, conv *model.WhatsAppConversation, m WhatsAppMessage, at, now time.Time) error {
	if err := tx.WhatsAppConversationMessage(ctx, site.ID, lead.ID, at); err != nil {
		return err
	}
	for _, k := range whatsAppSenders(m.FromUserID, m.From) {
		if k != conv.Sender {
			if err := tx.WhatsAppConversationAlias(ctx, conv, k); err != nil {
				return err
			}
		}
	}
	answers := m.RepliesToBusiness || (conv.BusinessWroteAt != nil && !conv.BusinessWroteAt.After(at))
	if !answers || lead.Verdict != model.VerdictReview {
		return nil
	}
	return s.applyEvidence(ctx, tx, site, lead, qualify.Evidence{Type: qualify.EvidenceWhatsAppReply, At: at}, now)
}

// WhatsAppStatuses records the statuses of messages the business sent:
// from the first one (sent, delivered or read) after a Click-to-WhatsApp
// conversation started, the person's next message is an answer.
func (s *Service) WhatsAppStatuses(ctx context.Context, list []WhatsAppStatus) error {
	now := s.now().UTC()
	siteIDs := map[string][]model.SiteID{} // by phone number id, read once a call
	for _, st := range list {
		switch st.Status {
		case "sent", "delivered", "read":
		default:
			continue // a failed message reached no one
		}
		senders := whatsAppSenders(st.RecipientUserID, st.RecipientID)
		if len(senders) == 0 {
			continue
		}
		ids, ok := siteIDs[st.PhoneNumberID]
		if !ok {
			sites, err := s.sitesForWhatsApp(ctx, st.PhoneNumberID)
			if err != nil {
				return err
			}
			for _, site := range sites {
				ids = append(ids, site.ID)
			}
			siteIDs[st.PhoneNumberID] = ids
		}
		if len(ids) == 0 {
			continue
		}
		at := st.At
		if at.IsZero() || at.After(now) {
			at = now
		}
		err := s.db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.WhatsAppConversationBusinessWrote(ctx, ids, senders, at)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// leadByWhatsAppUser finds the site's lead a WhatsApp business-scoped user
// id names: the CTWA lead of their conversation, else the newest lead with
// the phone their id was matched to.
func (s *Service) leadByWhatsAppUser(ctx context.Context, site *model.Site, userID string) (*model.Lead, error) {
	conv, err := s.db.WhatsAppConversationFind(ctx, site.ID, whatsAppSenders(userID, ""))
	switch {
	case err == nil:
		lead, err := s.db.LeadByID(ctx, conv.LeadID)
		if err == nil && lead.SiteID == site.ID {
			return lead, nil
		}
		if err != nil && !errors.Is(err, model.ErrNotFound) {
			return nil, err
		}
	case !errors.Is(err, model.ErrNotFound):
		return nil, err
	}
	key, err := s.db.WhatsAppContactPhone(ctx, site.ID, userID)
	if err != nil {
		return nil, err
	}
	return s.db.LeadFind(ctx, site.ID, store.LeadLookup{PhoneKey: key})
}

// clip trims v and cuts it to at most max bytes on a rune boundary: what a
// webhook sends is kept, never refused.
func clip(v string, max int) string {
	v = strings.TrimSpace(strings.ToValidUTF8(strings.ReplaceAll(v, "\x00", ""), "\uFFFD"))
	if len(v) <= max {
		return v
	}
	for max > 0 && !utf8.RuneStart(v[max]) {
		max--
	}
	return v[:max]
}
