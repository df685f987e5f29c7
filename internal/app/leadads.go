package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// Lead Ads (Instant Forms): a leadgen webhook's change is persisted as a
// fetch job (an outbox row of destination meta_leadgen, idempotent on the
// leadgen id); the fetch (internal/leadads) reads the lead from the Graph
// API and hands it to LeadAdsIngest, which maps, judges and stores it with
// its events, idempotent on the site's Lead Ads id. The backfill hands the
// leads it reads to LeadAdsIngest directly.

// KindLeadgen is the delivery kind, and event name, of a lead to fetch.
const KindLeadgen = "leadgen"

// leadgenKeep is how long a fetch job waits for the Graph API: Meta keeps
// a lead for 90 days.
const leadgenKeep = 90 * 24 * time.Hour

// ErrLeadErased is LeadAdsIngest's answer for a Lead Ads lead the site
// erased: the person asked to be forgotten, or retention removed them.
var ErrLeadErased = errors.New("the Lead Ads lead was erased from this site")

// LeadgenChange is one lead Meta told of by a leadgen webhook: the fetch
// job's payload.
type LeadgenChange struct {
	LeadgenID string `json:"leadgen_id"`
	PageID    string `json:"page_id"`
	FormID    string `json:"form_id,omitempty"`
	AdID      string `json:"ad_id,omitempty"`
	// Created is the lead's created_time; zero when Meta did not say.
	Created time.Time `json:"created,omitzero"`
	// Via is how Meta told of it ("webhook").
	Via string `json:"via"`
}

// LeadgenOutcome counts what LeadgenQueue did.
type LeadgenOutcome struct {
	Queued    int `json:"queued"`
	Duplicate int `json:"duplicate"` // the leadgen id was queued or stored already
}

// LeadgenQueue persists leadgen changes as fetch jobs of the site, all in
// one transaction: a change whose leadgen id is queued already, or whose
// lead is stored already, adds nothing, so Meta's redeliveries and the
// backfill never fetch a lead twice. The runner is woken when one was
// queued.
func (s *Service) LeadgenQueue(ctx context.Context, site *model.Site, changes []LeadgenChange) (LeadgenOutcome, error) {
	var out LeadgenOutcome
	for i, c := range changes {
		if !isDigits(c.LeadgenID) || !isDigits(c.PageID) {
			return out, model.Invalid(fmt.Sprintf("changes[%d]", i), "leadgen_id and page_id are digits")
		}
	}
	now := s.now().UTC()
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		out = LeadgenOutcome{}
		for _, c := range changes {
			ok, err := s.queueLeadgen(ctx, tx, site, c, now)
			if err != nil {
				return err
			}
			if ok {
				out.Queued++
			} else {
				out.Duplicate++
			}
		}
		return nil
	})
	if err != nil {
		return LeadgenOutcome{}, err
	}
	if out.Queued > 0 {
		s.wake()
	}
	return out, nil
}

func (s *Service) queueLeadgen(ctx context.Context, tx *store.Tx, site *model.Site, c LeadgenChange, now time.Time) (bool, error) {
	if _, err := tx.LeadFind(ctx, site.ID, store.LeadLookup{LeadAdsID: c.LeadgenID}); err == nil {
		return false, nil
	} else if !errors.Is(err, model.ErrNotFound) {
		return false, err
	}
	if erased, err := tx.LeadAdsErased(ctx, site.ID, c.LeadgenID); err != nil || erased {
		return false, err
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return false, fmt.Errorf("app: leadgen job: %w", err)
	}
	from := c.Created
	if from.IsZero() || from.After(now) {
		from = now
	}
	return tx.DeliveryInsert(ctx, &model.Delivery{
		ID: s.ids.New("dl_", now), SiteID: site.ID, Destination: model.DestinationMetaLeadgen, Kind: KindLeadgen,
		EventName: KindLeadgen, EventID: c.LeadgenID, Payload: payload, State: model.DeliveryPending,
		NextAt: now, DeadlineAt: from.Add(leadgenKeep), CreatedAt: now, UpdatedAt: now,
	})
}

// leadAdsEventPrefix starts a Lead Ads lead's event id, which is made of
// its leadgen id (so a lead stored twice is one lead); an erased lead's
// event id is replaced (see redactPayload).
const leadAdsEventPrefix = "leadads-"

// standardLeadAdsKeys are the question keys of Meta's pre-filled Instant
// Form questions and the lead field each fills.
var standardLeadAdsKeys = map[string]string{
	"email": "email", "work_email": "email",
	"phone_number": "phone", "work_phone_number": "phone", "phone": "phone",
	"full_name": "name", "first_name": "first_name", "last_name": "last_name",
	"city": "city", "state": "state", "province": "state",
	"zip_code": "zip", "post_code": "zip", "zip": "zip", "postal_code": "zip",
	"country": "country",
	"message": "message", "comments": "message",
}

// leadAdsInput maps a fetched lead's answers to a lead input: the
// standard questions and the site's mapping to lead fields, the rest to
// the answers by question key.
func leadAdsInput(site *model.Site, l *capi.LeadgenLead) *LeadInput {
	in := &LeadInput{EventID: leadAdsEventPrefix + string(l.ID), LeadAdsID: string(l.ID)}
	if t := l.Created(); !t.IsZero() {
		in.SubmittedAt = t.Format(time.RFC3339)
	}
	set := func(target, v string) {
		switch target {
		case "email":
			in.Email = v
		case "phone":
			in.Phone = v
		case "name":
			in.Name = v
		case "first_name":
			in.FirstName = v
		case "last_name":
			in.LastName = v
		case "message":
			if in.Message != "" {
				v = in.Message + "\n" + v
			}
			in.Message = v
		case model.AnswerCity, model.AnswerState, model.AnswerZip, model.AnswerCountry:
			in.Fields[target] = v
		}
	}
	in.Fields = map[string]string{}
	for _, f := range l.FieldData {
		key := strings.TrimSpace(f.Name)
		v := strings.TrimSpace(strings.Join(f.Values, ", "))
		if key == "" || v == "" {
			continue
		}
		target := site.Settings.LeadAds.Target(string(l.FormID), key)
		if target == "" {
			target = standardLeadAdsKeys[strings.ToLower(key)]
		}
		switch target {
		case "-":
		case "":
			// A custom question: the answer, under its own key.
			in.Fields[key] = v
		default:
			set(target, v)
		}
	}
	if len(in.Fields) == 0 {
		in.Fields = nil
	}
	return in
}

// LeadAdsSource is what the fetch knows of a lead beyond the Graph's
// answer: the Page, the form's name, and how Meta told of it.
type LeadAdsSource struct {
	PageID   string
	FormName string
	Via      string
}

// LeadAdsIngest maps a lead read from the Graph API to a lead of the site
// (the form's standard questions to the contact fields, city, state, zip
// and country to the answers the match keys read, custom questions to the
// answers by key, as the site's lead_ads mapping says), judges it with the
// rules that apply to an Instant Form, and stores it with its events in one
// transaction. A lead the site has already (the same Lead Ads id) is
// returned with created false; a lead erased from the site (cleanads
// forget, retention) is refused with ErrLeadErased, never stored again.
func (s *Service) LeadAdsIngest(ctx context.Context, site *model.Site, l *capi.LeadgenLead, src LeadAdsSource) (*model.Lead, bool, error) {
	if !isDigits(string(l.ID)) {
		return nil, false, model.Invalid("id", "a Lead Ads lead id is digits only")
	}
	if old, err := s.db.LeadFind(ctx, site.ID, store.LeadLookup{LeadAdsID: string(l.ID)}); err == nil {
		return old, false, nil
	} else if !errors.Is(err, model.ErrNotFound) {
		return nil, false, err
	}
	if erased, err := s.db.LeadAdsErased(ctx, site.ID, string(l.ID)); err != nil {
		return nil, false, err
	} else if erased {
		return nil, false, ErrLeadErased
	}
	in := leadAdsInput(site, l)
	detail := map[string]string{
		model.DetailPage: src.PageID, model.DetailForm: string(l.FormID), model.DetailFormName: src.FormName,
		model.DetailAd: string(l.AdID), model.DetailAdName: l.AdName, model.DetailAdSet: string(l.AdsetID),
		model.DetailAdSetName: l.AdsetName, model.DetailCampaign: string(l.CampaignID),
		model.DetailCampaignName: l.CampaignName, model.DetailOrganic: strconv.FormatBool(l.IsOrganic),
		model.DetailPlatform: l.Platform, model.DetailCreated: l.CreatedTime, model.DetailVia: src.Via,
	}
	for k, v := range detail {
		if v == "" {
			delete(detail, k)
		}
	}
	return s.submit(ctx, site, in, func(lead *model.Lead) {
		lead.Source, lead.SourceDetail = model.SourceLeadAds, detail
	})
}
