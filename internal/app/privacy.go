package app

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// RetentionPolicy says how long personal data is kept; 0 days keeps it.
type RetentionPolicy struct {
	LeadDays  int
	VisitDays int
	// ReceiptDays is how long an inbound WhatsApp message's or call's
	// receipt is kept (config.Retention.ReceiptDays).
	ReceiptDays int
	// EventDays is how long after it was queued a finished event past its
	// deadline keeps its whole payload (config.Retention.EventDays).
	EventDays int
	// ClickDays is how long after it arrived a lead keeps its click
	// identity: IP, user agent, fbc, fbp and the ad platforms' cookies
	// (config.Retention.ClickDays).
	ClickDays int
}

// RetentionResult counts what one retention run removed.
type RetentionResult struct {
	Leads, Deliveries, Visits, Visitors, FormTokens, Receipts int
	// PageViews is the outbox rows of page views never sent (dry run,
	// dead, expired) deleted after VisitDays.
	PageViews int
	// Shrunk are the finished events shrunk to what the owner's view needs.
	Shrunk int
	// Clicks are the leads whose click identity was cleared.
	Clicks int
	// CounterShards are the counter rows of past days folded into one row
	// a counter and day (PostgreSQL's shards; not personal data, so not in
	// Total).
	CounterShards int
}

// Total is everything removed.
func (r RetentionResult) Total() int {
	return r.Leads + r.Deliveries + r.Visits + r.Visitors + r.FormTokens + r.Receipts + r.PageViews + r.Shrunk + r.Clicks
}

// retentionBatch is how many leads one transaction redacts.
const retentionBatch = 200

// formTokenKeep is how long a used nonce is kept: a token older than
// TokenMaxAge is refused as expired before its nonce is looked at.
const formTokenKeep = 2 * TokenMaxAge

// Retain removes personal data past the policy: the contact details of
// leads older than LeadDays (verdict, reasons, times stay), the click
// identity of leads older than ClickDays (their device family stays), the clear
// values (IP, user agent, fbc, fbp, URL) of their finished outbox rows
// (hashes stay), visits, idle visitors and the outbox rows of page views
// never sent (dry run, dead, expired) older than VisitDays, inbound
// messages' and calls' receipts older than ReceiptDays, and used form-token
// nonces past any use; and it shrinks finished events older than EventDays
// whose deadline has passed to what the owner's view needs. Whatever the
// policy, it folds the counters of the days before yesterday into a row
// each (store.CountersFold). It is idempotent and works in batches.
func (s *Service) Retain(ctx context.Context, p RetentionPolicy) (RetentionResult, error) {
	var res RetentionResult
	now := s.now()
	never := time.UnixMilli(0)
	leadsBefore, visitsBefore := never, never
	if p.LeadDays > 0 {
		leadsBefore = now.Add(-time.Duration(p.LeadDays) * 24 * time.Hour)
	}
	if p.VisitDays > 0 {
		visitsBefore = now.Add(-time.Duration(p.VisitDays) * 24 * time.Hour)
	}
	if p.LeadDays > 0 {
		for {
			ids, err := s.db.LeadsToRedact(ctx, leadsBefore, retentionBatch)
			if err != nil {
				return res, err
			}
			err = s.db.InTx(ctx, func(tx *store.Tx) error {
				for _, id := range ids {
					n, err := s.redactLead(ctx, tx, id, "", now)
					if err != nil {
						return err
					}
					res.Leads += n.leads
					res.Deliveries += n.deliveries
				}
				return nil
			})
			if err != nil {
				return res, err
			}
			if len(ids) < retentionBatch {
				break
			}
		}
	}
	if p.ClickDays > 0 {
		n, err := s.clearClicks(ctx, now.Add(-time.Duration(p.ClickDays)*24*time.Hour))
		res.Clicks += n
		if err != nil {
			return res, err
		}
	}
	if p.VisitDays > 0 {
		// Deleted before the redaction below, which would clear them.
		n, err := s.db.PageViewsDeleteBefore(ctx, visitsBefore)
		res.PageViews += n
		if err != nil {
			return res, err
		}
	}
	if p.EventDays > 0 {
		n, err := s.shrinkEvents(ctx, now.Add(-time.Duration(p.EventDays)*24*time.Hour), now)
		res.Shrunk += n
		if err != nil {
			return res, err
		}
	}
	if p.LeadDays > 0 || p.VisitDays > 0 {
		for {
			ds, err := s.db.DeliveriesToRedact(ctx, leadsBefore, visitsBefore, retentionBatch)
			if err != nil {
				return res, err
			}
			err = s.db.InTx(ctx, func(tx *store.Tx) error {
				for _, d := range ds {
					if _, err := tx.DeliveryRedact(ctx, d.ID, s.redactPayload(d), "", now); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return res, err
			}
			res.Deliveries += len(ds)
			if len(ds) < retentionBatch {
				break
			}
		}
	}
	if p.VisitDays > 0 {
		n, err := s.db.VisitsDeleteBefore(ctx, visitsBefore)
		res.Visits += n
		if err != nil {
			return res, err
		}
		if n, err = s.db.VisitorsDeleteIdle(ctx, visitsBefore); err != nil {
			return res, err
		}
		res.Visitors += n
	}
	if p.ReceiptDays > 0 {
		n, err := s.db.ReceiptsDeleteBefore(ctx, now.Add(-time.Duration(p.ReceiptDays)*24*time.Hour))
		res.Receipts += n
		if err != nil {
			return res, err
		}
	}
	n, err := s.db.FormTokenUsesDeleteBefore(ctx, now.Add(-formTokenKeep))
	res.FormTokens += n
	if err != nil {
		return res, err
	}
	// Yesterday may still take an intake that began before midnight.
	res.CounterShards, err = s.db.CountersFold(ctx, model.Day(now)-1)
	return res, err
}

// ForgetInput names the person to erase: an e-mail address, a phone
// number (as typed, in any formatting) or a WhatsApp business-scoped user
// id (a Click-to-WhatsApp lead may have no phone), optionally on one site
// only.
type ForgetInput struct {
	Email        string
	Phone        string
	WhatsAppUser string
	Site         model.SiteID
}

// ForgetResult counts what was removed, per table.
type ForgetResult struct {
	// Leads had their contact details removed.
	Leads int `json:"leads"`
	// History entries lost their personal data.
	History int `json:"lead_history"`
	// Deliveries lost the IP, user agent, fbc, fbp and URL they carried;
	// their hashed match keys stay.
	Deliveries int `json:"deliveries_redacted"`
	// Cancelled are events not sent yet that never will be.
	Cancelled int `json:"deliveries_cancelled"`
	Visits    int `json:"visits"`
	Visitors  int `json:"visitors"`
	// WhatsAppContacts are WhatsApp user ids matched to the person's phone.
	WhatsAppContacts int `json:"whatsapp_contacts"`
}

// Forget erases one person: their leads' contact details, their history
// entries' personal data, the visitor and visits linked to those leads, and
// the clear values in their outbox rows; events of theirs not sent yet are
// cancelled. Hashed match keys in delivery payloads stay: they are what
// Meta already received.
func (s *Service) Forget(ctx context.Context, in ForgetInput) (ForgetResult, error) {
	var res ForgetResult
	named := 0
	for _, v := range []string{in.Email, in.Phone, in.WhatsAppUser} {
		if strings.TrimSpace(v) != "" {
			named++
		}
	}
	if named != 1 {
		return res, model.Invalid("", "name the person by exactly one of e-mail, phone or WhatsApp user id")
	}
	p := store.PersonLookup{Site: in.Site, WhatsAppUser: strings.TrimSpace(in.WhatsAppUser)}
	if in.Email != "" {
		p.Email = in.Email
		if k, err := capi.NormalizeEmail(in.Email); err == nil {
			p.EmailKey = k
		}
	}
	if in.Phone != "" {
		p.Phone = in.Phone
		// A number is normalised with each site's country, as its leads
		// were.
		sites, err := s.db.SiteList(ctx)
		if err != nil {
			return res, err
		}
		seen := map[string]bool{}
		for _, site := range sites {
			if in.Site != "" && site.ID != in.Site {
				continue
			}
			if k, err := capi.NormalizePhone(in.Phone, site.Settings.Country); err == nil && !seen[k] {
				seen[k] = true
				p.PhoneKeys = append(p.PhoneKeys, k)
			}
		}
	}
	leads, err := s.db.LeadsByPerson(ctx, p)
	if err != nil {
		return res, err
	}
	now := s.now()
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		for _, l := range leads {
			n, err := s.redactLead(ctx, tx, l.ID, "forgotten: the person asked to be erased", now)
			if err != nil {
				return err
			}
			res.Leads += n.leads
			res.History += n.history
			res.Deliveries += n.deliveries
			res.Cancelled += n.cancelled
			res.WhatsAppContacts += n.contacts
			if l.VisitorID == "" {
				continue
			}
			events, visits, visitors, err := tx.VisitorForget(ctx, l.SiteID, l.VisitorID)
			if err != nil {
				return err
			}
			res.Visits += visits
			res.Visitors += visitors
			queued, err := tx.PageViewForget(ctx, l.SiteID, events)
			if err != nil {
				return err
			}
			res.Deliveries += queued
			res.Cancelled += queued
			for _, ev := range events {
				d, err := tx.VisitPageView(ctx, l.SiteID, ev)
				if err != nil {
					continue // a visit without consent has no PageView
				}
				cancelled, err := tx.DeliveryRedact(ctx, d.ID, s.redactPayload(d), "forgotten: the person asked to be erased", now)
				if err != nil {
					return err
				}
				res.Deliveries++
				if cancelled {
					res.Cancelled++
				}
			}
		}
		return nil
	})
	if err != nil {
		return ForgetResult{}, err
	}
	return res, nil
}

type redacted struct{ leads, history, deliveries, cancelled, contacts int }

// redactLead removes one lead's personal data inside tx: its row, its
// history entries, its outbox rows' clear values. With cancel, its events
// not sent yet are ended with that reason.
func (s *Service) redactLead(ctx context.Context, tx *store.Tx, id model.LeadID, cancel string, now time.Time) (redacted, error) {
	var n redacted
	l, err := tx.LeadByID(ctx, id)
	if err != nil {
		return n, err
	}
	ok, err := tx.LeadRedact(ctx, id, redactReasons(l.Reasons), redactDetail(l.SourceDetail), now)
	if err != nil || !ok {
		return n, err
	}
	n.leads = 1
	if l.LeadAdsID != "" {
		// Meta still has the lead: neither a redelivered webhook nor the
		// backfill may read it again.
		if err := tx.LeadAdsErase(ctx, l.SiteID, l.LeadAdsID, now); err != nil {
			return n, err
		}
	}
	// A notification not sent yet would tell the owner of a lead that is
	// gone: it is dropped (the rows hold no personal data themselves).
	if err := tx.NotifyDropByLead(ctx, id, "the lead's personal data was erased", now); err != nil {
		return n, err
	}
	// The WhatsApp user id matched to the lead's phone is the person too.
	if n.contacts, err = tx.WhatsAppContactsForget(ctx, id); err != nil {
		return n, err
	}
	hist, err := tx.HistoryByLead(ctx, id)
	if err != nil {
		return n, err
	}
	for _, h := range hist {
		clean := redactHistory(h.Data)
		if len(clean) == len(h.Data) {
			continue
		}
		if err := tx.HistorySetData(ctx, id, h.ID, clean); err != nil {
			return n, err
		}
		n.history++
	}
	ds, err := tx.DeliveriesByLead(ctx, id)
	if err != nil {
		return n, err
	}
	for _, d := range ds {
		cancelled, err := tx.DeliveryRedact(ctx, d.ID, s.redactPayload(d), cancel, now)
		if err != nil {
			return n, err
		}
		n.deliveries++
		if cancelled {
			n.cancelled++
		}
	}
	return n, nil
}

// historyKeys are the history data that describe a decision, not a person;
// anything else (a message, a number, a sender id) is removed.
var historyKeys = map[string]bool{
	"verdict": true, "was": true, "score": true, "decided_by": true, "type": true, "at": true, "duration_s": true,
	"stage": true, "event_name": true, "value": true, "currency": true, "form_token": true, "reason": true,
	"expired": true, "source": true, "open_until": true, "changed": true, "note": true,
}

func redactHistory(data map[string]any) map[string]any {
	out := make(map[string]any, len(data))
	for k, v := range data {
		if historyKeys[k] {
			out[k] = v
		}
	}
	return out
}

// reasonPersonal are evidence entries taken from what the person typed.
var reasonPersonal = map[string]bool{"links": true, "part": true}

// redactReasons keeps each reason's code, points and evidence, less what
// came from the person's own text; its message, rendered from that text, is
// dropped with it.
func redactReasons(rs []model.Reason) []model.Reason {
	out := make([]model.Reason, len(rs))
	for i, r := range rs {
		out[i] = r
		if len(r.Evidence) == 0 {
			continue
		}
		ev := make(map[string]any, len(r.Evidence))
		for k, v := range r.Evidence {
			if reasonPersonal[k] {
				out[i].Message = ""
				continue
			}
			ev[k] = v
		}
		out[i].Evidence = ev
	}
	return out
}

// detailPersonal are the source_detail keys that name the person rather
// than the ad: the WhatsApp user id and the click id; and the device
// family left by the user agent, which erasure takes with it.
var detailPersonal = map[string]bool{model.DetailWhatsAppUserID: true, model.DetailCTWAClid: true, model.DetailDevice: true}

// redactDetail is a lead's source detail less its personal keys: what the
// ad, form and campaign were stays for the statistics.
func redactDetail(d map[string]string) map[string]string {
	out := make(map[string]string, len(d))
	for k, v := range d {
		if !detailPersonal[k] && !strings.HasPrefix(k, model.DetailCookiePrefix) {
			out[k] = v
		}
	}
	return out
}

// redactPayload removes the clear values from an outbox row's event, as
// its platform says (platform.Redact): the hashed match keys stay. A Lead
// Ads lead's event id (its leadgen id) becomes "erased-" and the row's id,
// as the row's event_id does (DeliveryRedact). A payload that is not an
// event object is replaced by {}.
func (s *Service) redactPayload(d *model.Delivery) json.RawMessage {
	p := s.platformOf(d.Destination)
	if p == nil {
		return json.RawMessage(`{}`)
	}
	out := p.Redact(d.Payload)
	var ev map[string]json.RawMessage
	if json.Unmarshal(out, &ev) != nil {
		return json.RawMessage(`{}`)
	}
	var id string
	if json.Unmarshal(ev["event_id"], &id) == nil && strings.HasPrefix(id, leadAdsEventPrefix) {
		ev["event_id"], _ = json.Marshal("erased-" + d.ID)
		if b, err := json.Marshal(ev); err == nil {
			return b
		}
		return json.RawMessage(`{}`)
	}
	return out
}

// clearClicks clears the click identity of the leads received before the
// time, in batches of retentionBatch a transaction: what a platform
// matches a website event by (IP, user agent, fbc, fbp, its cookies), no
// longer needed once no platform takes the lead's click (Google's 90 days
// are the longest); a later stage's event is matched by the lead's hashed
// contact details. The user agent leaves its device family in the source
// detail (model.DetailDevice), for the owner. It returns how many leads it
// cleared.
func (s *Service) clearClicks(ctx context.Context, before time.Time) (int, error) {
	n := 0
	for {
		ls, err := s.db.LeadsClickToClear(ctx, before, retentionBatch)
		if err != nil {
			return n, err
		}
		cleared := 0
		err = s.db.InTx(ctx, func(tx *store.Tx) error {
			cleared = 0
			for _, l := range ls {
				ok, err := tx.LeadClickClear(ctx, l, clickDetail(l.Detail, l.UserAgent))
				if err != nil {
					return err
				}
				if ok {
					cleared++
				}
			}
			return nil
		})
		if err != nil {
			return n, err
		}
		n += cleared
		if len(ls) < retentionBatch {
			return n, nil
		}
	}
}

// clickDetail is a lead's source detail once its click identity goes: its
// platform cookies removed, the device family of its user agent added.
func clickDetail(d map[string]string, ua string) map[string]string {
	out := make(map[string]string, len(d)+1)
	for k, v := range d {
		if !strings.HasPrefix(k, model.DetailCookiePrefix) {
			out[k] = v
		}
	}
	if dev := model.DeviceOf(ua); dev != "" {
		out[model.DetailDevice] = dev
	}
	return out
}

// shrinkEvents shrinks the finished events queued before the time whose
// deadline has passed, in batches of retentionBatch a transaction, each
// batch read from where the one before stopped: a run reads only the rows
// not shrunk yet. It returns how many it shrank.
func (s *Service) shrinkEvents(ctx context.Context, before, now time.Time) (int, error) {
	var (
		cur store.ShrinkCursor
		n   int
	)
	for {
		ds, err := s.db.DeliveriesToShrink(ctx, before, cur, now, retentionBatch)
		if err != nil {
			return n, err
		}
		err = s.db.InTx(ctx, func(tx *store.Tx) error {
			for _, d := range ds {
				ok, err := tx.DeliveryShrink(ctx, d.ID, s.shrinkPayload(d), now)
				if err != nil {
					return err
				}
				if ok {
					n++
				}
			}
			return nil
		})
		if err != nil || len(ds) < retentionBatch {
			return n, err
		}
		last := ds[len(ds)-1]
		cur = store.ShrinkCursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
}

// shrinkPayload is what a finished event keeps once shrunk: its
// platform's Shrink, a webhook post's shrinkHook, {} for a lead source's
// job (what it fetched or pushed is on the lead).
func (s *Service) shrinkPayload(d *model.Delivery) json.RawMessage {
	if d.Destination == model.DestinationWebhook {
		return shrinkHook(d.Payload)
	}
	if p := s.platformOf(d.Destination); p != nil && d.Destination != model.DestinationMetaLeadgen {
		return p.Shrink(d.Payload)
	}
	return json.RawMessage(`{}`)
}
