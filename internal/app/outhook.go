package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// The outgoing webhooks (docs/webhooks.md): a site's owner sets URLs that
// receive its leads' life. Each event is an outbox row of destination
// model.DestinationWebhook per endpoint that wants it, queued in the
// transaction of the change it reports, and posted signed by
// internal/outhook.

// hookKeep is how long a post is retried before it expires.
const hookKeep = 3 * 24 * time.Hour

// maxHooks is how many endpoints a site may have.
const maxHooks = 10

// hookTTL is how long a site's endpoints, once read, serve intake before
// they are read again: reading them in every lead's transaction cost
// about a fifth of a lead's CPU (BenchmarkIntakeSubmit). An endpoint added
// or removed on this node counts at once; on the others within hookTTL, as
// a site's settings do (web.DefaultSiteTTL).
const hookTTL = 2 * time.Second

// hookCacheMax bounds the cache; past it, it starts again empty.
const hookCacheMax = 10000

// hookCache keeps each site's endpoints (without their secrets).
type hookCache struct {
	mu sync.Mutex
	m  map[model.SiteID]hookEntry
}

type hookEntry struct {
	eps   []*model.WebhookEndpoint
	until time.Time
}

// get returns the site's endpoints, read in tx when not cached.
func (c *hookCache) get(ctx context.Context, tx *store.Tx, site model.SiteID, now time.Time) ([]*model.WebhookEndpoint, error) {
	c.mu.Lock()
	e, ok := c.m[site]
	c.mu.Unlock()
	if ok && now.Before(e.until) && !now.Before(e.until.Add(-hookTTL)) {
		return e.eps, nil
	}
	eps, err := tx.WebhookEndpoints(ctx, site, false)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= hookCacheMax {
		c.m = map[model.SiteID]hookEntry{}
	}
	c.m[site] = hookEntry{eps: eps, until: now.Add(hookTTL)}
	c.mu.Unlock()
	return eps, nil
}

// forget drops a site's endpoints, after a change on this node.
func (c *hookCache) forget(site model.SiteID) {
	c.mu.Lock()
	delete(c.m, site)
	c.mu.Unlock()
}

// HookPayload is the JSON body of every post (docs/webhooks.md).
type HookPayload struct {
	// ID is the event's id: the same on every retry and replay, so a
	// receiver handles each event once.
	ID         string    `json:"id"`
	Type       string    `json:"type"`
	OccurredAt time.Time `json:"occurred_at"`
	Site       string    `json:"site"`
	Lead       *HookLead `json:"lead,omitempty"`
	// PreviousVerdict is the lead's verdict before a lead.verdict event.
	PreviousVerdict string     `json:"previous_verdict,omitempty"`
	Stage           *HookStage `json:"stage,omitempty"`
}

// HookLead is the lead as a post carries it: its contact as typed, its
// verdict and the reasons for it.
type HookLead struct {
	ID         string       `json:"id"`
	ReceivedAt time.Time    `json:"received_at"`
	Source     string       `json:"source"`
	Verdict    string       `json:"verdict"`
	Score      int          `json:"score"`
	Reasons    []HookReason `json:"reasons"`
	Email      string       `json:"email,omitempty"`
	Phone      string       `json:"phone,omitempty"`
	Name       string       `json:"name,omitempty"`
	FirstName  string       `json:"first_name,omitempty"`
	LastName   string       `json:"last_name,omitempty"`
	Message    string       `json:"message,omitempty"`
	PageURL    string       `json:"page_url,omitempty"`
}

// HookReason is one reason of a verdict.
type HookReason struct {
	Code    string `json:"code"`
	Points  int    `json:"points"`
	Message string `json:"message,omitempty"`
}

// HookStage is a recorded stage.
type HookStage struct {
	Name     string    `json:"name"`
	At       time.Time `json:"at"`
	Value    *float64  `json:"value,omitempty"`
	Currency string    `json:"currency,omitempty"`
}

// hookEvent is one event of a lead to post.
type hookEvent struct {
	Type string
	// Key makes the event's id from the lead (once per lead and key);
	// empty means a new id every time.
	Key      string
	Previous model.Verdict
	Stage    *model.LeadStage
}

func hookLead(l *model.Lead) *HookLead {
	h := &HookLead{ID: string(l.ID), ReceivedAt: l.ReceivedAt.UTC(), Source: leadSource(l), Verdict: string(l.Verdict),
		Score: l.Score, Reasons: make([]HookReason, 0, len(l.Reasons)), Email: l.Email, Phone: l.Phone, Name: l.Name,
		FirstName: l.FirstName, LastName: l.LastName, Message: l.Message, PageURL: l.PageURL}
	for _, r := range l.Reasons {
		h.Reasons = append(h.Reasons, HookReason{Code: r.Code, Points: r.Points, Message: r.Message})
	}
	return h
}

// hookID is an event's id: derived from the lead and key when there is
// one, so the same event queued twice (a replayed post, a second node) is
// one row.
func (s *Service) hookID(lead model.LeadID, ev hookEvent, now time.Time) string {
	if ev.Key == "" {
		return s.ids.New("evt_", now)
	}
	sum := sha256.Sum256([]byte(string(lead) + "\x00" + ev.Type + "\x00" + ev.Key))
	return "evt_" + hex.EncodeToString(sum[:12])
}

// queueHooks queues, in the caller's transaction, one post of the event
// per endpoint of the lead's site that wants it. Nothing is posted for a
// change that rolls back; a lead's events reach each endpoint in the
// order they were queued (internal/outhook).
func (s *Service) queueHooks(ctx context.Context, tx *store.Tx, lead *model.Lead, events []hookEvent, now time.Time) error {
	rows, err := s.hookRows(ctx, tx, lead, events, now)
	if err != nil || len(rows) == 0 {
		return err
	}
	_, err = tx.DeliveryInsertAll(ctx, rows)
	return err
}

// hookRows are queueHooks's outbox rows, not yet inserted.
func (s *Service) hookRows(ctx context.Context, tx *store.Tx, lead *model.Lead, events []hookEvent, now time.Time) ([]*model.Delivery, error) {
	eps, err := s.hooks.get(ctx, tx, lead.SiteID, now)
	if err != nil || len(eps) == 0 {
		return nil, err
	}
	var rows []*model.Delivery
	for _, ev := range events {
		p := HookPayload{ID: s.hookID(lead.ID, ev, now), Type: ev.Type, OccurredAt: now.UTC(), Site: string(lead.SiteID),
			Lead: hookLead(lead), PreviousVerdict: string(ev.Previous)}
		if ev.Stage != nil {
			p.Stage = &HookStage{Name: ev.Stage.Stage, At: ev.Stage.At.UTC(), Value: ev.Stage.Value, Currency: ev.Stage.Currency}
			p.OccurredAt = ev.Stage.At.UTC()
		}
		body, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("app: webhook %s: %w", ev.Type, err)
		}
		for _, ep := range eps {
			if ep.Wants(ev.Type) {
				rows = append(rows, s.hookRow(ep, lead.ID, ev.Type, p.ID, body, now))
			}
		}
	}
	return rows, nil
}

func (s *Service) hookRow(ep *model.WebhookEndpoint, lead model.LeadID, typ, id string, body []byte, now time.Time) *model.Delivery {
	return &model.Delivery{ID: s.ids.New("dl_", now), SiteID: ep.SiteID, LeadID: lead, Destination: model.DestinationWebhook,
		Kind: typ, EventName: typ, EventID: id + "." + ep.ID, PixelID: ep.ID, Payload: body,
		State: model.DeliveryPending, NextAt: now, DeadlineAt: now.Add(hookKeep), CreatedAt: now, UpdatedAt: now}
}

// hooksOfVerdict are the events of a verdict that changed from was.
func hooksOfVerdict(lead *model.Lead, was model.Verdict) []hookEvent {
	if lead.Verdict == was {
		return nil
	}
	evs := []hookEvent{{Type: model.HookVerdictChange, Previous: was}}
	if lead.Verdict == model.VerdictClean {
		evs = append(evs, hookEvent{Type: model.HookQualified, Key: "qualified"})
	}
	return evs
}

// hooksOfNewLead are the events of a lead just received.
func hooksOfNewLead(lead *model.Lead) []hookEvent {
	evs := []hookEvent{{Type: model.HookLeadReceived, Key: "received"}}
	if lead.Verdict == model.VerdictClean {
		evs = append(evs, hookEvent{Type: model.HookQualified, Key: "qualified"})
	}
	return evs
}

// WebhookAdd adds an outgoing webhook to the site: the URL (https, or http
// to this machine) and the events it receives. The endpoint it returns
// holds its secret in clear: the only time it is shown.
func (s *Service) WebhookAdd(ctx context.Context, site model.SiteID, rawURL string, events []string) (*model.WebhookEndpoint, error) {
	u, err := CheckHookURL(rawURL)
	if err != nil {
		return nil, err
	}
	if len(events) == 0 {
		return nil, model.Invalid("events", "choose at least one event")
	}
	var evs []string
	for _, e := range events {
		if !slices.Contains(model.HookEvents, e) {
			return nil, model.Invalid("events", "unknown event "+strconv.Quote(e))
		}
		if !slices.Contains(evs, e) {
			evs = append(evs, e)
		}
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	now := s.now().UTC()
	ep := &model.WebhookEndpoint{ID: s.ids.New("wh_", now), SiteID: site, URL: u, Events: evs,
		Secret: "whsec_" + hex.EncodeToString(b), CreatedAt: now}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		list, err := tx.WebhookEndpoints(ctx, site, false)
		if err != nil {
			return err
		}
		if len(list) >= maxHooks {
			return model.Invalid("url", fmt.Sprintf("a site has at most %d webhooks: remove one first", maxHooks))
		}
		return tx.WebhookEndpointInsert(ctx, ep)
	})
	s.hooks.forget(site)
	if err != nil {
		return nil, err
	}
	return ep, nil
}

// CheckHookURL checks a webhook's URL and returns it trimmed: absolute,
// https, or http only to this machine (localhost, 127.0.0.1, ::1), with no
// user or password in it.
func CheckHookURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	bad := func(why string) (string, error) { return "", model.Invalid("url", why) }
	if raw == "" {
		return bad("give the address to post to, as https://example.com/hook")
	}
	if len(raw) > 2000 {
		return bad("is longer than 2000 characters")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return bad("is not a full address such as https://example.com/hook")
	}
	if u.User != nil {
		return bad("must not carry a user or password: the signature proves the post is ours")
	}
	host := u.Hostname()
	local := host == "localhost" || net.ParseIP(host) != nil && net.ParseIP(host).IsLoopback()
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && local:
	case u.Scheme == "http":
		return bad("must use https (plain http only to localhost)")
	default:
		return bad("must start with https://")
	}
	if u.Fragment != "" {
		return bad("must not have a #fragment")
	}
	return u.String(), nil
}

// WebhookRemove removes a site's webhook; its posts not sent yet end as
// dead when the runner finds it gone.
func (s *Service) WebhookRemove(ctx context.Context, site model.SiteID, id string) error {
	err := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.WebhookEndpointDelete(ctx, site, id) })
	s.hooks.forget(site)
	return err
}

// Webhooks returns a site's webhooks, without their secrets.
func (s *Service) Webhooks(ctx context.Context, site model.SiteID) ([]*model.WebhookEndpoint, error) {
	return s.db.WebhookEndpoints(ctx, site, false)
}

// WebhookEndpoint returns one webhook with its secret, for the runner.
func (s *Service) WebhookEndpoint(ctx context.Context, id string) (*model.WebhookEndpoint, error) {
	return s.db.WebhookEndpointByID(ctx, id)
}

// WebhookBlocker returns the unsettled post of the same lead and endpoint
// queued before d, which d waits for, or model.ErrNotFound.
func (s *Service) WebhookBlocker(ctx context.Context, d *model.Delivery) (*model.Delivery, error) {
	return s.db.WebhookBlocker(ctx, d)
}

// WebhookDeliveries returns a site's latest posts, newest first.
func (s *Service) WebhookDeliveries(ctx context.Context, site model.SiteID, limit int) ([]*model.Delivery, error) {
	return s.db.WebhookDeliveries(ctx, site, limit)
}

// WebhookTest queues a test event (type webhook.test, no lead) for one of
// the site's webhooks and wakes the runner; its answer shows in the list
// of posts.
func (s *Service) WebhookTest(ctx context.Context, site model.SiteID, id string) error {
	now := s.now().UTC()
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		eps, err := tx.WebhookEndpoints(ctx, site, false)
		if err != nil {
			return err
		}
		for _, ep := range eps {
			if ep.ID != id {
				continue
			}
			p := HookPayload{ID: s.ids.New("evt_", now), Type: model.HookTest, OccurredAt: now, Site: string(site)}
			body, err := json.Marshal(p)
			if err != nil {
				return err
			}
			_, err = tx.DeliveryInsertAll(ctx, []*model.Delivery{s.hookRow(ep, "", model.HookTest, p.ID, body, now)})
			return err
		}
		return fmt.Errorf("webhook %s: %w", id, model.ErrNotFound)
	})
	if err == nil {
		s.wake()
	}
	return err
}

// WebhookReplay posts one of the site's webhook events again, as it was
// (same event id, so a receiver that had it does nothing twice): a new row
// beside the old, which keeps its answer. A post not settled yet cannot be
// replayed: it is going already.
func (s *Service) WebhookReplay(ctx context.Context, site model.SiteID, deliveryID string) error {
	now := s.now().UTC()
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		d, err := tx.DeliveryByID(ctx, deliveryID)
		if err != nil {
			return err
		}
		if d.SiteID != site || d.Destination != model.DestinationWebhook {
			return fmt.Errorf("webhook post %s: %w", deliveryID, model.ErrNotFound)
		}
		switch d.State {
		case model.DeliveryPending, model.DeliveryRetry, model.DeliveryPaused:
			return fmt.Errorf("webhook post %s is %s, not settled: %w", deliveryID, d.State, model.ErrConflict)
		}
		if d.ShrunkAt != nil {
			return fmt.Errorf("webhook post %s cannot be posted again: %s: %w", deliveryID, d.ShrunkWords(), model.ErrConflict)
		}
		if string(d.Payload) == "{}" {
			return fmt.Errorf("webhook post %s was erased: %w", deliveryID, model.ErrConflict)
		}
		id, _, _ := strings.Cut(d.EventID, ".")
		row := s.hookRow(&model.WebhookEndpoint{ID: d.PixelID, SiteID: site}, d.LeadID, d.Kind, id, d.Payload, now)
		row.EventID = id + "." + d.PixelID + ".r" + strconv.FormatInt(now.UnixMilli(), 36)
		row.LastError = "replay of " + d.ID
		_, err = tx.DeliveryInsertAll(ctx, []*model.Delivery{row})
		return err
	})
	if err == nil {
		s.wake()
	}
	return err
}

// shrinkHook is what a finished webhook post keeps once shrunk: the
// event's id, type, time and site, its lead's id, source, verdict and
// score, its reasons' codes and points, the previous verdict and the stage;
// never the contact, message, page or reasons' words. A body that is not a post becomes {}.
func shrinkHook(payload json.RawMessage) json.RawMessage {
	var p HookPayload
	if json.Unmarshal(payload, &p) != nil || p.ID == "" {
		return json.RawMessage(`{}`)
	}
	if p.Lead != nil {
		l := &HookLead{ID: p.Lead.ID, ReceivedAt: p.Lead.ReceivedAt, Source: p.Lead.Source, Verdict: p.Lead.Verdict,
			Score: p.Lead.Score, Reasons: make([]HookReason, 0, len(p.Lead.Reasons))}
		for _, r := range p.Lead.Reasons {
			l.Reasons = append(l.Reasons, HookReason{Code: r.Code, Points: r.Points})
		}
		p.Lead = l
	}
	b, err := json.Marshal(p)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}
