package app

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// SyncSettle is how far behind the clock the CRM sync lists changes. A
// change is dated when its use case starts and becomes visible when its
// transaction commits; with several writers (PostgreSQL, several nodes) a
// change dated earlier can commit after one dated later. Listing only what
// is older than this keeps a client that pages on from skipping it, as long
// as no transaction takes longer (they take milliseconds).
const SyncSettle = 30 * time.Second

// SyncLead is a lead as a CRM reads it: with its stages and the time it
// last changed.
type SyncLead struct {
	Lead      *model.Lead
	ChangedAt time.Time
	Stages    []model.LeadStage
}

// SyncPage is a page of a site's changed leads, oldest change first.
type SyncPage struct {
	Leads []SyncLead
	// Next is the cursor to ask with for what follows: the next page, or
	// (when More is false) the changes made from now on.
	Next string
	More bool
	// Until is the time up to which the page is complete.
	Until time.Time
}

// LeadsChanged lists a site's leads changed since a time, or after a cursor
// of an earlier page.
func (s *Service) LeadsChanged(ctx context.Context, site *model.Site, since time.Time, cursor string, limit int) (*SyncPage, error) {
	if limit <= 0 {
		limit = 100
	}
	if limit > 500 {
		return nil, model.Invalid("limit", "at most 500")
	}
	p := store.LeadChangesParams{Site: site.ID, Since: since, Until: s.now().Add(-SyncSettle).Truncate(time.Millisecond), Limit: limit + 1}
	if cursor != "" {
		c, err := parseCursor(cursor)
		if err != nil {
			return nil, err
		}
		p.Since, p.After, p.AfterID = c.since, c.after, c.afterID
	}
	list, err := s.db.LeadChanges(ctx, p)
	if err != nil {
		return nil, err
	}
	page := &SyncPage{Until: p.Until}
	if len(list) > limit {
		list, page.More = list[:limit], true
	}
	if page.Leads, err = s.withStages(ctx, list); err != nil {
		return nil, err
	}
	switch {
	case len(list) > 0:
		last := list[len(list)-1]
		page.Next = syncCursor{after: last.ChangedAt, afterID: last.Lead.ID}.String()
	case p.AfterID != "":
		// Nothing new: the same place again.
		page.Next = cursor
	default:
		// Nothing changed from since to until: the next call starts after
		// until (every change up to it was committed and listed).
		from := p.Since
		if from.Before(p.Until) {
			from = p.Until.Add(time.Millisecond)
		}
		page.Next = syncCursor{since: from}.String()
	}
	return page, nil
}

// LeadsLookup returns the site's leads named by one key of ref (not id or
// event_id: those name one lead, GET /v1/leads/{id} reads it), newest
// first. E-mail and phone are normalised as leads store them. A WhatsApp
// user id finds the lead of their conversation, else the one their phone
// matched.
func (s *Service) LeadsLookup(ctx context.Context, site *model.Site, ref LeadRef, limit int) ([]SyncLead, error) {
	var k store.LeadLookup
	n := 0
	set := func(v string, f func(string) error) error {
		if v = strings.TrimSpace(v); v == "" {
			return nil
		}
		n++
		return f(v)
	}
	errs := []error{
		set(ref.ExternalID, func(v string) error { k.ExternalID = v; return nil }),
		set(ref.LeadAdsID, func(v string) error { k.LeadAdsID = v; return nil }),
		set(ref.Email, func(v string) error {
			key, err := capi.NormalizeEmail(v)
			if err != nil {
				return model.Invalid("email", "not an e-mail address")
			}
			k.EmailKey = key
			return nil
		}),
		set(ref.Phone, func(v string) error {
			key, err := capi.NormalizePhone(v, site.Settings.Country)
			if err != nil {
				return model.Invalid("phone", "not a phone number")
			}
			k.PhoneKey = key
			return nil
		}),
		set(ref.WhatsAppUserID, func(string) error { return nil }),
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if n != 1 {
		return nil, model.Invalid("", "give exactly one of email, phone, lead_id, whatsapp_user_id, external_id (or changed_since to list changes)")
	}
	var list []store.LeadChange
	if wa := strings.TrimSpace(ref.WhatsAppUserID); wa != "" {
		l, err := s.leadByWhatsAppUser(ctx, site, wa)
		switch {
		case errors.Is(err, model.ErrNotFound):
		case err != nil:
			return nil, err
		default:
			// Its time of change, as the other look-ups give it.
			if list, err = s.db.LeadsMatching(ctx, site.ID, store.LeadLookup{ID: l.ID}, 1); err != nil {
				return nil, err
			}
		}
	} else {
		var err error
		if list, err = s.db.LeadsMatching(ctx, site.ID, k, limit); err != nil {
			return nil, err
		}
	}
	return s.withStages(ctx, list)
}

// withStages adds each lead's stages, read in one query.
func (s *Service) withStages(ctx context.Context, list []store.LeadChange) ([]SyncLead, error) {
	ids := make([]model.LeadID, len(list))
	for i, c := range list {
		ids[i] = c.Lead.ID
	}
	stages, err := s.db.LeadStagesByLeads(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]SyncLead, len(list))
	for i, c := range list {
		out[i] = SyncLead{Lead: c.Lead, ChangedAt: c.ChangedAt, Stages: stages[c.Lead.ID]}
	}
	return out, nil
}

// syncCursor is where a page of changes ends: after (after, afterID), or
// from since on when afterID is empty.
type syncCursor struct {
	since, after time.Time
	afterID      model.LeadID
}

// String is the cursor as the API gives it: opaque to the client.
func (c syncCursor) String() string {
	var raw string
	if c.afterID == "" {
		raw = "s." + strconv.FormatInt(c.since.UnixMilli(), 10)
	} else {
		raw = "a." + strconv.FormatInt(c.after.UnixMilli(), 10) + "." + string(c.afterID)
	}
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

func parseCursor(s string) (syncCursor, error) {
	bad := model.Invalid("cursor", "not a cursor this API gave: pass next_cursor as it came")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return syncCursor{}, bad
	}
	parts := strings.SplitN(string(b), ".", 3)
	if len(parts) < 2 {
		return syncCursor{}, bad
	}
	ms, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return syncCursor{}, bad
	}
	t := time.UnixMilli(ms).UTC()
	switch {
	case parts[0] == "s" && len(parts) == 2:
		return syncCursor{since: t}, nil
	case parts[0] == "a" && len(parts) == 3 && parts[2] != "":
		return syncCursor{after: t, afterID: model.LeadID(parts[2])}, nil
	}
	return syncCursor{}, bad
}
