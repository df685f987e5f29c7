package hubspot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
)

// maxContacts is how many of a deal's contacts are read to find its lead.
const maxContacts = 5

// Send does each queued change: it reads the deal or the contact from
// HubSpot, finds the lead the contact is, and records the mapped stage at
// the change's own time. A HubSpot failure stops the batch with its class
// (the rows done so far keep their outcomes; the rest are retried or
// paused); a change that can never be recorded (no such lead, a deal that
// was deleted, a stage the site refuses) ends its row with the reason.
func (s *Source) Send(ctx context.Context, site *model.Site, rows []*model.Delivery) ([]platform.Outcome, error) {
	st, _, err := settings(site)
	if err != nil {
		return nil, &platform.Failure{Class: platform.Refused, Words: err.Error()}
	}
	token := secret(site, SecretAccessToken)
	out := make([]platform.Outcome, 0, len(rows))
	for _, d := range rows {
		o, err := s.do(ctx, site, st, token, d)
		if err != nil {
			return out, err
		}
		out = append(out, o)
	}
	return out, nil
}

// do does one change; an error is a request-level failure.
func (s *Source) do(ctx context.Context, site *model.Site, st Settings, token string, d *model.Delivery) (platform.Outcome, error) {
	var j job
	if err := json.Unmarshal(d.Payload, &j); err != nil {
		return dead("the queued HubSpot change cannot be read: %v", err), nil
	}
	at := time.UnixMilli(j.OccurredAt)
	var (
		name, currency string
		value          *float64
		contacts       []string
	)
	switch d.Kind {
	case KindDeal:
		name = stage(st.DealStages, j.Stage)
		if name == "" {
			return dead("HubSpot deal stage %q is no longer mapped to a CleanAds stage", j.Stage), nil
		}
		deal, err := s.deal(ctx, token, j.ObjectID)
		if errors.Is(err, errNotFound) {
			return dead("HubSpot has no deal %s any more (deleted?)", j.ObjectID), nil
		} else if err != nil {
			return platform.Outcome{}, err
		}
		if won(j.Stage, name) {
			if v, err := strconv.ParseFloat(deal.prop("amount"), 64); err == nil && v >= 0 {
				value, currency = &v, strings.ToUpper(deal.prop("deal_currency_code"))
			}
		}
		for _, c := range deal.Associations["contacts"].Results {
			if len(contacts) < maxContacts {
				contacts = append(contacts, c.ID)
			}
		}
		if len(contacts) == 0 {
			return dead("HubSpot deal %s has no contact: associate the deal with the lead's contact", j.ObjectID), nil
		}
	case KindContact:
		name = stage(st.LifecycleStages, j.Stage)
		if name == "" {
			return dead("HubSpot lifecycle stage %q is no longer mapped to a CleanAds stage", j.Stage), nil
		}
		contacts = []string{j.ObjectID}
	default:
		return dead("unknown HubSpot change %q", d.Kind), nil
	}
	lead, err := s.findLead(ctx, site, st, token, contacts)
	if err != nil {
		return platform.Outcome{}, err
	}
	if lead == nil {
		return dead("no lead of this site has the e-mail/phone of HubSpot contact %s", strings.Join(contacts, ", ")), nil
	}
	l, err := s.d.App.AddLeadEvent(ctx, site, lead.ID, stageInput(name, at, value, currency))
	var inv *model.InputError
	switch {
	case errors.As(err, &inv):
		return dead("stage %q of lead %s was not recorded: %v", name, lead.ID, err), nil
	case err != nil:
		return platform.Outcome{}, err
	}
	resp, _ := json.Marshal(map[string]string{"lead": string(l.ID), "stage": name, "at": at.UTC().Format(time.RFC3339)})
	return platform.Outcome{Accepted: true, Mode: model.ModeLive, Response: resp}, nil
}

// won tells whether a deal stage is a won one, whose amount is the
// stage's value: HubSpot's own Closed Won, or a stage mapped to "won".
func won(hubspotStage, name string) bool {
	return strings.EqualFold(hubspotStage, "closedwon") || strings.EqualFold(name, "won")
}

// findLead returns the site's lead one of the contacts is: by the lead id
// property, then e-mail, phone and mobile phone, each tried in turn; nil
// when none matches.
func (s *Source) findLead(ctx context.Context, site *model.Site, st Settings, token string, contacts []string) (*model.Lead, error) {
	for _, id := range contacts {
		c, err := s.contact(ctx, token, id, st.LeadIDProperty)
		if errors.Is(err, errNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		var refs []app.LeadRef
		if st.LeadIDProperty != "" {
			if v := c.prop(st.LeadIDProperty); v != "" {
				refs = append(refs, app.LeadRef{ID: v, LeadAdsID: v})
			}
		}
		if v := c.prop("email"); v != "" {
			refs = append(refs, app.LeadRef{Email: v})
		}
		for _, p := range []string{"phone", "mobilephone"} {
			if v := c.prop(p); v != "" {
				refs = append(refs, app.LeadRef{Phone: v})
			}
		}
		for _, ref := range refs {
			lead, err := s.d.App.FindLead(ctx, site, ref)
			var inv *model.InputError
			switch {
			case err == nil:
				return lead, nil
			case errors.Is(err, model.ErrNotFound), errors.As(err, &inv):
				// Not this key (or one HubSpot holds malformed): the next.
			default:
				return nil, err
			}
		}
	}
	return nil, nil
}

func dead(format string, args ...any) platform.Outcome {
	return platform.Outcome{Err: fmt.Errorf(format, args...)}
}
