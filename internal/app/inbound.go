package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
	"github.com/cleanads/cleanads/internal/store"
)

// Outcomes of an inbound WhatsApp message or call.
const (
	OutcomeEvidence  = "evidence"  // matched a lead and recorded as evidence
	OutcomeNoLead    = "no_lead"   // no lead of the site(s) in the review window
	OutcomeNoSite    = "no_site"   // the WhatsApp number is no site's
	OutcomeDuplicate = "duplicate" // handled before
	OutcomeIgnored   = "ignored"   // not a person's message (a system notice)
)

// receiptWhatsApp is the receipts source of WhatsApp messages; message ids
// are unique across numbers.
const receiptWhatsApp = "whatsapp"

// WhatsAppMessage is one inbound message of a WhatsApp Cloud API webhook,
// reduced to what matching needs, and what a Click-to-WhatsApp lead is made
// of: its text is read only for a CTWA first message.
type WhatsAppMessage struct {
	ID string
	// PhoneNumberID is the business number that received it.
	PhoneNumberID string
	// From is the sender's phone, digits without "+"; it may be missing
	// since WhatsApp usernames.
	From string
	// FromUserID is the sender's business-scoped user id.
	FromUserID string
	Type       string
	At         time.Time

	// WABAID is the WhatsApp Business Account the number belongs to.
	WABAID string
	// Referral is set for a message sent from an ad (Click-to-WhatsApp).
	Referral *WhatsAppReferral
	// Text is the message's text (or caption); ProfileName the sender's
	// WhatsApp name.
	Text        string
	ProfileName string
	// RepliesToBusiness is set when the message quotes one of the
	// business's messages.
	RepliesToBusiness bool
}

// InboundResult says what became of an inbound message or call.
type InboundResult struct {
	Outcome string        `json:"outcome"`
	LeadID  model.LeadID  `json:"lead_id,omitempty"`
	Verdict model.Verdict `json:"verdict,omitempty"`
}

// WhatsAppInbound handles one inbound WhatsApp message, once per message
// id: on each site the receiving number belongs to, the sender is matched
// to the newest lead with the same phone received within the site's review
// window (or, without a phone, by the user id remembered from an earlier
// match), and the message is recorded as whatsapp_reply evidence. A match
// remembers the user id. Messages that match nothing are claimed too, so a
// retry does no work.
func (s *Service) WhatsAppInbound(ctx context.Context, m WhatsAppMessage) (InboundResult, error) {
	if m.ID == "" {
		return InboundResult{Outcome: OutcomeIgnored}, nil
	}
	sites, err := s.sitesForWhatsApp(ctx, m.PhoneNumberID)
	if err != nil {
		return InboundResult{}, err
	}
	now := s.now().UTC()
	at := m.At
	if at.IsZero() || at.After(now) {
		at = now
	}
	var res InboundResult
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		res = InboundResult{}
		fresh, err := tx.ReceiptInsert(ctx, receiptWhatsApp, m.ID, now)
		if err != nil {
			return err
		}
		if !fresh {
			_, lead, err := tx.ReceiptOutcome(ctx, receiptWhatsApp, m.ID)
			res = InboundResult{Outcome: OutcomeDuplicate, LeadID: lead}
			return err
		}
		var site model.SiteID
		switch {
		case len(sites) == 0:
			res.Outcome = OutcomeNoSite
		case m.Type == "system":
			// WhatsApp's own notices (a changed number) are not the person
			// answering.
			res.Outcome = OutcomeIgnored
		default:
			var done bool
			if site, done, err = s.ctwaInbound(ctx, tx, sites, m, at, now, &res); err != nil {
				return err
			}
			if done {
				break
			}
			res.Outcome = OutcomeNoLead
			for _, st := range sites {
				lead, key, err := s.whatsAppLead(ctx, tx, st, m, now)
				if errors.Is(err, model.ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				if m.FromUserID != "" {
					if err := tx.WhatsAppContactUpsert(ctx, st.ID, m.FromUserID, key, lead.ID, now); err != nil {
						return err
					}
				}
				if err := s.applyEvidence(ctx, tx, st, lead, qualify.Evidence{Type: qualify.EvidenceWhatsAppReply, At: at}, now); err != nil {
					return err
				}
				res = InboundResult{Outcome: OutcomeEvidence, LeadID: lead.ID, Verdict: lead.Verdict}
				site = st.ID
			}
		}
		return tx.ReceiptSetOutcome(ctx, receiptWhatsApp, m.ID, res.Outcome, site, res.LeadID)
	})
	if err != nil {
		return InboundResult{}, err
	}
	switch res.Outcome {
	case OutcomeEvidence, OutcomeLead, OutcomeJoined:
		s.wake() // a new lead, or one that became clean, has events queued
	}
	return res, nil
}

// whatsAppLead finds the lead a message's sender is on a site, with the
// phone key it matched by.
func (s *Service) whatsAppLead(ctx context.Context, tx *store.Tx, site *model.Site, m WhatsAppMessage, now time.Time) (*model.Lead, string, error) {
	var key string
	if m.From != "" {
		// "from" is international digits without the "+".
		k, err := capi.NormalizePhone("+"+strings.TrimPrefix(m.From, "+"), site.Settings.Country)
		if err != nil {
			return nil, "", fmt.Errorf("whatsapp sender: %w", model.ErrNotFound)
		}
		key = k
	} else if m.FromUserID != "" {
		k, err := tx.WhatsAppContactPhone(ctx, site.ID, m.FromUserID)
		if err != nil {
			return nil, "", err
		}
		key = k
	} else {
		return nil, "", fmt.Errorf("whatsapp sender: %w", model.ErrNotFound)
	}
	lead, err := s.leadByPhone(ctx, tx, site, key, now)
	return lead, key, err
}

// leadByPhone returns the site's newest lead with the phone key received
// within the review window: evidence about an older lead comes too late.
func (s *Service) leadByPhone(ctx context.Context, tx *store.Tx, site *model.Site, key string, now time.Time) (*model.Lead, error) {
	since := now.Add(-s.rules(site).ReviewTimeout())
	return tx.LeadFind(ctx, site.ID, store.LeadLookup{PhoneKey: key, Since: since})
}

// sitesForWhatsApp returns the sites a WhatsApp business number belongs to.
func (s *Service) sitesForWhatsApp(ctx context.Context, phoneNumberID string) ([]*model.Site, error) {
	if phoneNumberID == "" {
		return nil, nil
	}
	all, err := s.db.SiteList(ctx)
	if err != nil {
		return nil, err
	}
	var sites []*model.Site
	for _, st := range all {
		if st.Settings.WhatsApp.HasPhoneNumberID(phoneNumberID) {
			sites = append(sites, st)
		}
	}
	return sites, nil
}

// CallInput is a call as a call tracker posts it (POST /v1/calls).
type CallInput struct {
	// Caller is the calling number, in any format.
	Caller string `json:"caller"`
	// DurationS is how long the call lasted, in seconds.
	DurationS *int `json:"duration_s"`
	// At is when the call took place (RFC 3339); now when empty.
	At string `json:"at"`
	// CallID is the tracker's id of the call; with it a repeated post is
	// handled once.
	CallID string `json:"call_id"`
}

// Call records a call from a lead's phone as call evidence: the newest
// lead of the site with the caller's number, received within the review
// window. A call of qualify.MinCallS seconds or more moves a review lead to
// clean. A call that matches no lead is answered, not refused.
func (s *Service) Call(ctx context.Context, site *model.Site, in *CallInput) (InboundResult, error) {
	now := s.now().UTC()
	var errs []error
	caller := strings.TrimSpace(in.Caller)
	key, err := capi.NormalizePhone(caller, site.Settings.Country)
	if caller == "" {
		errs = append(errs, model.Invalid("caller", "required: the calling number"))
	} else if err != nil {
		errs = append(errs, model.Invalid("caller", "not a phone number"))
	}
	if in.DurationS == nil {
		errs = append(errs, model.Invalid("duration_s", "required: the call's length in seconds"))
	} else if *in.DurationS < 0 {
		errs = append(errs, model.Invalid("duration_s", "must not be negative"))
	}
	at := now
	if in.At != "" {
		t, err := time.Parse(time.RFC3339, in.At)
		switch {
		case err != nil:
			errs = append(errs, model.Invalid("at", "want an RFC 3339 time like 2026-12-02T15:04:05Z"))
		case t.After(now.Add(capi.MaxClockSkew)):
			errs = append(errs, model.Invalid("at", "is in the future"))
		default:
			at = t.UTC()
		}
	}
	callID := strings.TrimSpace(in.CallID)
	if len(callID) > maxShort {
		errs = append(errs, model.Invalid("call_id", fmt.Sprintf("is longer than %d bytes", maxShort)))
	}
	if len(errs) > 0 {
		return InboundResult{}, errors.Join(errs...)
	}
	source := "call:" + string(site.ID)
	var res InboundResult
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		res = InboundResult{Outcome: OutcomeNoLead}
		if callID != "" {
			fresh, err := tx.ReceiptInsert(ctx, source, callID, now)
			if err != nil {
				return err
			}
			if !fresh {
				_, lead, err := tx.ReceiptOutcome(ctx, source, callID)
				res = InboundResult{Outcome: OutcomeDuplicate, LeadID: lead}
				return err
			}
		}
		lead, err := s.leadByPhone(ctx, tx, site, key, now)
		switch {
		case errors.Is(err, model.ErrNotFound):
		case err != nil:
			return err
		default:
			if err := s.applyEvidence(ctx, tx, site, lead, qualify.Evidence{Type: qualify.EvidenceCall, DurationS: *in.DurationS, At: at}, now); err != nil {
				return err
			}
			res = InboundResult{Outcome: OutcomeEvidence, LeadID: lead.ID, Verdict: lead.Verdict}
		}
		if callID == "" {
			return nil
		}
		return tx.ReceiptSetOutcome(ctx, source, callID, res.Outcome, site.ID, res.LeadID)
	})
	if err != nil {
		return InboundResult{}, err
	}
	if res.Outcome == OutcomeEvidence {
		s.wake() // a lead that became clean has its qualified event queued
	}
	return res, nil
}
