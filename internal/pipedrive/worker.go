package pipedrive

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

// person is the part of a Pipedrive person (API v2) the worker reads.
type person struct {
	Emails []contact                  `json:"emails"`
	Phones []contact                  `json:"phones"`
	Custom map[string]json.RawMessage `json:"custom_fields"`
}

type contact struct {
	Value   string `json:"value"`
	Primary bool   `json:"primary"`
}

// dealRead is the part of a Pipedrive deal (API v2) the worker reads.
type dealRead struct {
	PersonID *int64                     `json:"person_id"`
	Custom   map[string]json.RawMessage `json:"custom_fields"`
}

// Send does each job: it reads the deal's person, finds the lead and
// records the site's stage on it. A job whose lead cannot be found, or
// whose stage the site refuses, ends with its reason as the row's note;
// a failure of Pipedrive's API stops the batch with its class (the rest
// are retried, throttled or paused).
func (s *Source) Send(ctx context.Context, site *model.Site, rows []*model.Delivery) ([]platform.Outcome, error) {
	out := make([]platform.Outcome, 0, len(rows))
	for _, d := range rows {
		o, err := s.do(ctx, site, d)
		if err != nil {
			return out, err
		}
		out = append(out, o)
	}
	return out, nil
}

// do is one job.
func (s *Source) do(ctx context.Context, site *model.Site, d *model.Delivery) (platform.Outcome, error) {
	var j Job
	if err := json.Unmarshal(d.Payload, &j); err != nil || j.DealID <= 0 {
		return platform.Outcome{Err: errors.New("the job is unreadable")}, nil
	}
	st := settings(site)
	var stage string
	in := &app.LeadEventInput{Type: app.TypeStage, At: j.At.UTC().Format(time.RFC3339)}
	switch d.Kind {
	case KindStage:
		stage = st.Stages[strconv.FormatInt(j.StageID, 10)]
		if stage == "" {
			return refuse(fmt.Sprintf("Pipedrive stage %d is no longer mapped to a CleanAds stage", j.StageID)), nil
		}
	case KindWon:
		stage = st.Won
		in.Value, in.Currency = j.Value, j.Currency
	case KindLost:
		stage = st.Lost
	default:
		return refuse("unknown job " + d.Kind), nil
	}
	if stage == "" {
		return refuse("the site no longer maps " + strings.TrimPrefix(d.Kind, "deal.") + " deals to a stage"), nil
	}
	in.Stage = strings.TrimSpace(stage)
	ref, err := s.leadRef(ctx, site, st, j)
	if errors.Is(err, model.ErrNotFound) {
		return refuse(fmt.Sprintf("deal %d or its person is no longer in Pipedrive", j.DealID)), nil
	}
	if err != nil {
		return platform.Outcome{}, err
	}
	if ref == (app.LeadRef{}) {
		return refuse(fmt.Sprintf("deal %d has no person with an e-mail or phone to find the lead by", j.DealID)), nil
	}
	lead, err := s.d.App.AddEvent(ctx, site, ref, in)
	var inv *model.InputError
	// A person's phone or e-mail CleanAds cannot read is dropped, and the
	// lead looked for by the rest.
	for range 2 {
		if !errors.As(err, &inv) {
			break
		}
		switch {
		case inv.Field == "lead.phone" && ref.Phone != "":
			ref.Phone = ""
		case inv.Field == "lead.email" && ref.Email != "":
			ref.Email = ""
		default:
			continue
		}
		if ref == (app.LeadRef{}) {
			err = fmt.Errorf("no usable key: %w", model.ErrNotFound)
			break
		}
		lead, err = s.d.App.AddEvent(ctx, site, ref, in)
	}
	switch {
	case errors.Is(err, model.ErrNotFound):
		return refuse(fmt.Sprintf("no lead of this site has the e-mail or phone of deal %d's person", j.DealID)), nil
	case errors.As(err, &inv):
		return refuse("the stage was not recorded: " + err.Error()), nil
	case err != nil:
		return platform.Outcome{}, &platform.Failure{Class: platform.Transient, Words: "recording the stage failed", Err: err}
	}
	resp, _ := json.Marshal(map[string]string{"lead": string(lead.ID), "stage": in.Stage})
	return platform.Outcome{Accepted: true, Mode: model.ModeLive, Response: resp}, nil
}

// refuse is a job that ends, not sent, with why.
func refuse(why string) platform.Outcome { return platform.Outcome{Err: errors.New(why)} }

// leadRef reads what names the deal's lead: the lead id field (deal's,
// then person's), the person's primary (else first) e-mail and phone.
func (s *Source) leadRef(ctx context.Context, site *model.Site, st Settings, j Job) (app.LeadRef, error) {
	var ref app.LeadRef
	personID := j.PersonID
	if personID == 0 || st.LeadIDField != "" {
		var d dealRead
		if err := s.get(ctx, site, fmt.Sprintf("/api/v2/deals/%d", j.DealID), &d); err != nil {
			return ref, err
		}
		if d.PersonID != nil {
			personID = *d.PersonID
		}
		setLeadID(&ref, d.Custom[st.LeadIDField])
	}
	if personID == 0 {
		return ref, nil
	}
	var p person
	if err := s.get(ctx, site, fmt.Sprintf("/api/v2/persons/%d", personID), &p); err != nil {
		return ref, err
	}
	if st.LeadIDField != "" && ref.ID == "" {
		setLeadID(&ref, p.Custom[st.LeadIDField])
	}
	ref.Email, ref.Phone = pick(p.Emails), pick(p.Phones)
	if ref.Email != "" && !strings.Contains(ref.Email, "@") {
		ref.Email = ""
	}
	return ref, nil
}

// setLeadID names the lead by a lead id field's value: a CleanAds lead id,
// a form's event id or a Meta Lead Ads id, whichever the site has.
func setLeadID(ref *app.LeadRef, v json.RawMessage) {
	// rawString keeps a number's digits: a Lead Ads id is past 2^53.
	if id := rawString(v); id != "" {
		ref.ID, ref.EventID, ref.LeadAdsID = id, id, id
	}
}

// pick is the primary value, else the first one set.
func pick(cs []contact) string {
	first := ""
	for _, c := range cs {
		v := strings.TrimSpace(c.Value)
		if v == "" {
			continue
		}
		if c.Primary {
			return v
		}
		if first == "" {
			first = v
		}
	}
	return first
}
