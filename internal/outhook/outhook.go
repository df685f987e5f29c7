// Package outhook posts a site's leads' life to the URLs its owner set
// (docs/webhooks.md): each event an outbox row of destination
// model.DestinationWebhook, queued by internal/app in the transaction of
// the change it reports, signed here with the endpoint's secret and
// retried with the runner's backoff until it is answered 2xx or its three
// days run out. A lead's events reach an endpoint in the order they were
// queued: a post waits while an earlier one of the same lead and endpoint
// is unsettled.
package outhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/source"
)

// Header names of a post.
const (
	HeaderSignature = "CleanAds-Signature"
	HeaderEvent     = "CleanAds-Event"
	HeaderEventID   = "CleanAds-Event-Id"
	HeaderDelivery  = "CleanAds-Delivery"
)

// Tolerance is how far from now a receiver should accept a signature's
// timestamp (docs/webhooks.md).
const Tolerance = 5 * time.Minute

// Timeout is how long a post waits for its answer.
const Timeout = 10 * time.Second

// maxAnswer is how much of an answer's body is kept to show.
const maxAnswer = 512

// Sign returns the CleanAds-Signature header of body posted at t:
// "t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed with the
// secret>".
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

func mac(secret, ts string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks a CleanAds-Signature header against body, as a receiver
// does: any v1 may match (a header may carry several), and the timestamp
// must be within tolerance of now.
func Verify(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var ts string
	var sigs []string
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return errors.New("outhook: malformed signature header")
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return errors.New("outhook: timestamp too far from now")
	}
	want := mac(secret, ts, body)
	for _, s := range sigs {
		if hmac.Equal([]byte(s), []byte(want)) {
			return nil
		}
	}
	return errors.New("outhook: signature does not match")
}

// Endpoints is what the worker reads besides its claim.
type Endpoints interface {
	WebhookEndpoint(ctx context.Context, id string) (*model.WebhookEndpoint, error)
	WebhookBlocker(ctx context.Context, d *model.Delivery) (*model.Delivery, error)
}

// Worker posts the webhook rows: the source "webhook", with no routes of
// its own, whose Handler is the runner's for its destination.
type Worker struct {
	eps    Endpoints
	client *http.Client
	log    *slog.Logger
}

// New returns the worker (func New(source.Deps) source.Source).
func New(d source.Deps) source.Source {
	var eps Endpoints
	if d.App != nil {
		eps = d.App
	}
	return NewWorker(eps, d.HTTP, d.Logger)
}

// NewWorker returns a worker reading endpoints from eps; client nil means
// one with Timeout that never follows a redirect.
func NewWorker(eps Endpoints, client *http.Client, log *slog.Logger) *Worker {
	if client == nil {
		client = &http.Client{Timeout: Timeout}
	}
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Worker{eps: eps, client: &c, log: log}
}

// Name is the source's key.
func (w *Worker) Name() string { return model.DestinationWebhook }

// Label is its name for people.
func (w *Worker) Label() string { return "Webhooks" }

// Routes is none: it only sends.
func (w *Worker) Routes() []source.Route { return nil }

// Destination is the outbox destination of its rows.
func (w *Worker) Destination() string { return model.DestinationWebhook }

// Handler is the worker itself.
func (w *Worker) Handler() deliver.Handler { return w }

// answer is what a post's response is kept as.
type answer struct {
	Status int    `json:"status"`
	Body   string `json:"body,omitempty"`
}

// Deliver posts a claim's rows one by one, oldest first, recording each
// as it settles. A row waits (retry, at the time the earlier one is due)
// while an earlier row of its lead and endpoint is unsettled; after an
// endpoint fails, the claim's other rows for it wait with it rather than
// each waiting for the same timeout. It never holds the share: one
// endpoint down does not delay a site's others.
func (w *Worker) Deliver(ctx context.Context, sh *deliver.Claim) (deliver.Stats, time.Time) {
	st := deliver.Stats{Claimed: len(sh.Rows)}
	rows := slices.Clone(sh.Rows)
	slices.SortStableFunc(rows, func(a, b *model.Delivery) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	eps := map[string]*model.WebhookEndpoint{}
	down := map[string]time.Time{}    // endpoint -> when to try again
	waiting := map[string]time.Time{} // endpoint and lead -> when the earlier post is due
	for i, d := range rows {
		if sh.Now().After(sh.LeaseEnd.Add(-sh.Lease / 2)) {
			sh.Record(ctx, rows[i:])
			return st, time.Time{}
		}
		w.one(ctx, sh, d, eps, down, waiting, &st)
		sh.Record(ctx, []*model.Delivery{d})
	}
	return st, time.Time{}
}

// one settles one row.
func (w *Worker) one(ctx context.Context, sh *deliver.Claim, d *model.Delivery, eps map[string]*model.WebhookEndpoint,
	down, waiting map[string]time.Time, st *deliver.Stats) {
	now := sh.Now()
	d.UpdatedAt = now
	wait := func(until time.Time, why string) {
		d.State, d.NextAt, d.LastError = model.DeliveryRetry, until, why
		st.Retry++
	}
	if !d.DeadlineAt.IsZero() && !now.Before(d.DeadlineAt) {
		d.State, d.LastError = model.DeliveryExpired, "not answered 2xx within "+model.DeadlineWords(d.Destination)
		st.Expired++
		return
	}
	ep, ok := eps[d.PixelID]
	if !ok {
		var err error
		ep, err = w.eps.WebhookEndpoint(ctx, d.PixelID)
		if errors.Is(err, model.ErrNotFound) {
			ep = nil
		} else if err != nil {
			wait(now.Add(sh.Backoff(1, 0)), "the webhook's settings cannot be read: "+err.Error())
			return
		}
		eps[d.PixelID] = ep
	}
	if ep == nil || ep.SiteID != d.SiteID {
		d.State, d.LastError = model.DeliveryDead, "the webhook was removed"
		st.Dead++
		return
	}
	if t, ok := down[ep.ID]; ok {
		wait(t, "waits for the endpoint, which failed just before")
		return
	}
	key := ep.ID + "\x00" + string(d.LeadID)
	if d.LeadID != "" {
		if t, ok := waiting[key]; ok {
			wait(t, "waits for an earlier event of this lead")
			return
		}
		b, err := w.eps.WebhookBlocker(ctx, d)
		switch {
		case err == nil:
			t := b.NextAt
			if b.State == model.DeliveryPaused || t.Before(now) {
				t = now.Add(sh.Backoff(1, 0))
			}
			waiting[key] = t
			wait(t, "waits for the earlier event "+b.ID+" of this lead")
			return
		case !errors.Is(err, model.ErrNotFound):
			wait(now.Add(sh.Backoff(1, 0)), "cannot tell whether an earlier event of this lead is unsent: "+err.Error())
			return
		}
	}
	status, body, retryAfter, err := w.post(ctx, ep, d, now)
	st.Requests++
	d.Attempts++
	now = sh.Now()
	d.UpdatedAt = now
	if status != 0 {
		d.Response, _ = json.Marshal(answer{Status: status, Body: body})
	} else {
		d.Response = nil
	}
	if err == nil {
		sent := now
		d.State, d.LastError, d.SentAt, d.Mode = model.DeliverySent, "", &sent, model.ModeLive
		st.Sent++
		return
	}
	if status == http.StatusGone {
		// The receiver says the hook is gone for good.
		d.State, d.LastError = model.DeliveryDead, err.Error()
		st.Dead++
		return
	}
	next := now.Add(sh.Backoff(d.Attempts, retryAfter))
	down[ep.ID] = next
	if d.LeadID != "" {
		waiting[key] = next
	}
	if !next.Before(d.DeadlineAt) {
		d.State, d.LastError = model.DeliveryExpired, "not answered 2xx within "+model.DeadlineWords(d.Destination)+": "+err.Error()
		st.Expired++
		return
	}
	d.State, d.NextAt, d.LastError = model.DeliveryRetry, next, err.Error()
	st.Retry++
}

// post sends one row signed and returns the answer's status (0 when there
// was none), the start of its body, its Retry-After, and an error unless
// it was 2xx.
func (w *Worker) post(ctx context.Context, ep *model.WebhookEndpoint, d *model.Delivery, now time.Time) (int, string, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(d.Payload))
	if err != nil {
		return 0, "", 0, fmt.Errorf("the webhook's address cannot be posted to: %w", err)
	}
	id, _, _ := strings.Cut(d.EventID, ".")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "CleanAds-Webhook/1")
	req.Header.Set(HeaderSignature, Sign(ep.Secret, now, d.Payload))
	req.Header.Set(HeaderEvent, d.Kind)
	req.Header.Set(HeaderEventID, id)
	req.Header.Set(HeaderDelivery, d.ID)
	resp, err := w.client.Do(req)
	if err != nil {
		return 0, "", 0, fmt.Errorf("no answer: %s", plainNetError(err))
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	text := strings.ToValidUTF8(string(b), "")
	if !utf8.ValidString(text) {
		text = ""
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp.StatusCode, text, 0, nil
	}
	var ra time.Duration
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		ra = min(time.Duration(s)*time.Second, time.Hour)
	}
	return resp.StatusCode, text, ra, fmt.Errorf("answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
}

// plainNetError says a transport failure without the request's details.
func plainNetError(err error) string {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			err = inner
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no answer within %s", Timeout)
	}
	return err.Error()
}

var (
	_ source.Worker   = (*Worker)(nil)
	_ deliver.Handler = (*Worker)(nil)
)
