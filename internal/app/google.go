package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cleanads/cleanads/internal/google"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// queueGoogle puts the Google twin of a lead event just queued for Meta in
// the outbox, in the same transaction, when the site sends to Google and
// the kind has a conversion action (the qualified event and the mapped
// stages; the raw lead event and PageViews are Meta's alone). Its row has
// its own state, attempts and deadline: Google takes click conversions
// for 90 days, not Meta's 7. An event Google could not match (no click id,
// no usable contact), and one of a lead that came from a Meta ad without a
// Google click id, is not queued; it tells whether a row was.
func (s *Service) queueGoogle(ctx context.Context, tx *store.Tx, site *model.Site, lead *model.Lead, spec eventSpec,
	eventName string, at time.Time, now time.Time) (bool, error) {
	g := site.Settings.Google
	if g.ConversionAction(spec.Kind) == "" {
		return false, nil
	}
	clicks, err := googleClicks(ctx, tx, site.ID, lead)
	if err != nil {
		return false, err
	}
	// A lead from a Meta Instant Form or a WhatsApp ad came from no Google
	// ad: Google could attribute it to nothing.
	if lead.Source != "" && lead.Source != model.SourceWeb && clicks == (model.ClickIDs{}) {
		return false, nil
	}
	p := google.Params{Settings: g, Country: site.Settings.Country, Lead: lead, Kind: spec.Kind, At: at, Clicks: clicks}
	if v, ok := spec.CustomData["value"].(float64); ok {
		p.Value = v
	}
	if c, ok := spec.CustomData["currency"].(string); ok {
		p.Currency = c
	}
	ev, err := google.BuildEvent(p)
	if errors.Is(err, google.ErrNotSent) {
		slog.Debug("google: event not queued", "lead", string(lead.ID), "kind", spec.Kind, "why", err.Error())
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("app: build google %s event: %w", spec.Kind, err)
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return false, fmt.Errorf("app: encode google %s event: %w", spec.Kind, err)
	}
	submitted := lead.SubmittedAt
	if submitted.IsZero() {
		submitted = at
	}
	return tx.DeliveryInsert(ctx, &model.Delivery{
		ID: s.ids.New("dl_", now), SiteID: site.ID, LeadID: lead.ID, Destination: model.DestinationGoogle, Kind: spec.Kind,
		EventName: eventName, EventID: ev.TransactionID, PixelID: g.OperatingAccountID, Payload: payload,
		State: model.DeliveryPending, NextAt: dueAt(lead, now), DeadlineAt: submitted.Add(model.GoogleMaxEventAge),
		CreatedAt: now, UpdatedAt: now,
	})
}

// queueGoogleOnly queues a stage's event for Google alone, for a stage too
// old for Meta; it tells whether a Google row was queued (an event Google
// could not match, or a lead without consent, is not).
func (s *Service) queueGoogleOnly(ctx context.Context, tx *store.Tx, site *model.Site, lead *model.Lead, spec eventSpec, now time.Time) (bool, error) {
	if !mayQueueLead(site, lead) {
		return false, nil
	}
	return s.queueGoogle(ctx, tx, site, lead, spec, spec.EventName, spec.EventTime, now)
}

// googleClicks is the lead's Google click: its own gclid, else the click
// ids of the latest of its visitor's visits that came from a Google ad
// (the landing URL's gclid, gbraid or wbraid, which the tracker keeps).
func googleClicks(ctx context.Context, tx *store.Tx, site model.SiteID, lead *model.Lead) (model.ClickIDs, error) {
	if lead.GClid != "" || lead.VisitorID == "" {
		return model.ClickIDs{GClid: lead.GClid}, nil
	}
	visits, err := tx.VisitsByVisitor(ctx, site, lead.VisitorID)
	if err != nil {
		return model.ClickIDs{}, err
	}
	for i := len(visits) - 1; i >= 0; i-- {
		c := visits[i].ClickIDs
		if c.GClid != "" || c.GBraid != "" || c.WBraid != "" {
			return model.ClickIDs{GClid: c.GClid, GBraid: c.GBraid, WBraid: c.WBraid}, nil
		}
	}
	return model.ClickIDs{}, nil
}

// redactGooglePayload removes what a Google event carries in clear: its
// click ids and the postal code and region of an address (the name's
// hashes go with them: Google takes an address only whole). The hashed
// e-mail and phone stay, as Meta's hashed keys do.
func redactGooglePayload(ev map[string]json.RawMessage) json.RawMessage {
	delete(ev, "adIdentifiers")
	if raw, ok := ev["userData"]; ok {
		var ud google.UserData
		if json.Unmarshal(raw, &ud) != nil {
			delete(ev, "userData")
		} else {
			kept := ud.UserIdentifiers[:0]
			for _, u := range ud.UserIdentifiers {
				if u.Address == nil {
					kept = append(kept, u)
				}
			}
			ud.UserIdentifiers = kept
			ev["userData"], _ = json.Marshal(ud)
		}
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

// ResumeGoogle lifts a site's Google pause after the owner fixed what
// Google refused in Google Ads itself (the customer data terms, enhanced
// conversions for leads, the account's access), where no setting here
// changes: the parked rows are due at once and the runner is woken. A
// pause that still stands at Google comes back after one request. It
// returns how many parked rows (of every destination now free) are due.
func (s *Service) ResumeGoogle(ctx context.Context, site model.SiteID) (int, error) {
	sh := model.Share{Site: site, Destination: model.DestinationGoogle}
	if _, err := s.db.DestinationPauseOf(ctx, sh); err != nil {
		return 0, err
	}
	if err := s.db.DestinationResume(ctx, sh); err != nil {
		return 0, err
	}
	_, resumed, err := s.db.DeliverySweep(ctx, s.now())
	if err != nil {
		return 0, err
	}
	s.wake()
	return resumed, nil
}
