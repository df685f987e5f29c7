package deliver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
)

// item is one claimed event and what this round did with it.
type item struct {
	d     *model.Delivery
	tried bool // it was in at least one request this round
	done  bool // its outcome is written in d
}

// metaHandler is Meta's Conversions API as a Handler: what the
// runner did for every row before there were destinations.
type metaHandler struct{ r *Runner }

func (m metaHandler) Deliver(ctx context.Context, sh *Claim) (Stats, time.Time) {
	return m.r.deliverSite(ctx, sh.Site, sh.Rows, sh.LeaseEnd)
}

// deliverSite handles one site's claimed Meta events: expire, pre-check,
// then send per pixel in batches, recording after each batch so a crash
// loses little. leaseEnd is when the claim runs out. It returns until when
// the site's Meta events must wait (zero: no wait).
func (r *Runner) deliverSite(ctx context.Context, siteID model.SiteID, ds []*model.Delivery, leaseEnd time.Time) (Stats, time.Time) {
	st := Stats{}
	site, err := r.o.Store.SiteByID(ctx, siteID)
	if err != nil {
		r.log.Error("delivery: load site", "site", string(siteID), "err", err)
		r.record(ctx, ds) // back unchanged; tried again next round
		return st, time.Time{}
	}
	now := r.o.Now()
	mode := site.Settings.Meta.Mode
	if mode == "" {
		mode = model.ModeDryRun
	}
	var ready []*item
	var settled []*model.Delivery
	for _, d := range ds {
		if !now.Before(d.DeadlineAt) {
			expire(d, "deadline passed before it could be sent")
			st.Expired++
			settled = append(settled, d)
			continue
		}
		// A queued PageView was checked when it was queued, moments ago,
		// and nothing changes it (erasure deletes it); its age is the
		// deadline's. Reading every payload back is most of the runner's
		// work for a page view, so only outbox rows are checked again
		// (their payloads may have been redacted, or queued by an older
		// version).
		var perr error
		if !d.Queued {
			perr = precheck(d, now)
		}
		if perr != nil {
			// An event too old for Meta has expired; any other failure
			// is ours to fix, so it is dead with the reason.
			var pe *capi.PrecheckError
			if errors.As(perr, &pe) && pe.Rule == capi.RuleEventTimeOld {
				expire(d, perr.Error())
				st.Expired++
			} else {
				d.State, d.LastError = model.DeliveryDead, perr.Error()
				d.Response = precheckJSON(perr)
				st.Dead++
			}
			d.Mode = mode
			settled = append(settled, d)
			continue
		}
		d.Mode = mode
		if mode == model.ModeDryRun {
			// Built, checked and stored; never sent.
			d.State, d.LastError, d.Response = model.DeliveryDryRun, "", nil
			st.DryRun++
			settled = append(settled, d)
			continue
		}
		ready = append(ready, &item{d: d})
	}
	if st.Dead > 0 {
		r.log.Warn("events failed the pre-check and will not be sent", "site", string(siteID), "count", st.Dead)
	}
	r.record(ctx, settled)
	if len(ready) == 0 {
		return st, time.Time{}
	}

	// A paused site keeps its events until the token changes. The other
	// settings problems park them too, without pausing the site: the next
	// sweep makes them due again, so fixing the setting is enough.
	reason := site.PausedReason
	switch {
	case reason != "":
	case site.AccessToken == "":
		reason = "no Meta access token is set for the site"
		r.pause(ctx, site, reason)
	case mode == model.ModeTest && site.Settings.Meta.TestEventCode == "":
		reason = "mode test needs the site's test_event_code"
	case mode != model.ModeLive && mode != model.ModeTest:
		reason = fmt.Sprintf("unknown delivery mode %q", mode)
	}
	if reason != "" {
		if site.PausedReason == "" {
			r.log.Warn("delivery held for site", "site", string(site.ID), "reason", reason)
		}
		st.add(r.settlePaused(ctx, ready, reason, nil))
		return st, time.Time{}
	}

	// Per pixel (a pixel change leaves queued events with the pixel they
	// were made for), in batches of at most Batch.
	var pixels []string
	byPixel := map[string][]*item{}
	for _, it := range ready {
		p := it.d.PixelID
		if p == "" {
			p = site.Settings.Meta.PixelID
		}
		if _, ok := byPixel[p]; !ok {
			pixels = append(pixels, p)
		}
		byPixel[p] = append(byPixel[p], it)
	}
	var queue [][]*item
	var pixelOf []string
	for _, p := range pixels {
		list := byPixel[p]
		for i := 0; i < len(list); i += r.o.Batch {
			queue = append(queue, list[i:min(i+r.o.Batch, len(list))])
			pixelOf = append(pixelOf, p)
		}
	}
	req := capi.SendRequest{AccessToken: site.AccessToken}
	if mode == model.ModeTest {
		req.TestEventCode = site.Settings.Meta.TestEventCode
	}
	for i, batch := range queue {
		rest := flatten(queue[i:])
		// Stop before the lease runs out: another node may claim these.
		if r.o.Now().After(leaseEnd.Add(-r.o.Lease / 2)) {
			r.record(ctx, deliveries(rest))
			return st, time.Time{}
		}
		req.PixelID = pixelOf[i]
		stopErr := r.post(ctx, req, batch, &st)
		if stopErr == nil {
			r.record(ctx, deliveries(batch))
			continue
		}
		// A retryable or auth error ends this round for the site: the
		// remaining batches would meet the same answer.
		switch capi.Classify(stopErr) {
		case capi.ClassAuth:
			if r.tokenChanged(ctx, site) {
				// A new token came while the old one was refused: no
				// pause, the events go out with it next round.
				for _, it := range rest {
					if !it.done && it.tried {
						it.d.Attempts++
						it.d.LastError, it.d.Response = stopErr.Error(), errorJSON(stopErr)
					}
				}
				r.record(ctx, deliveries(rest))
				r.Wake()
				return st, time.Time{}
			}
			reason := "Meta refused the access token: " + stopErr.Error()
			r.pause(ctx, site, reason)
			st.add(r.settlePaused(ctx, rest, reason, stopErr))
		default:
			rst, until := r.settleRetry(ctx, rest, stopErr)
			st.add(rst)
			return st, until
		}
		return st, time.Time{}
	}
	return st, time.Time{}
}

// post sends a batch. A rejected request is split in halves until each
// refused event is alone, and that event is dead with Meta's message while
// the rest go through. It returns the retryable or auth error that stopped
// it; the events it did not settle are left for the caller.
func (r *Runner) post(ctx context.Context, req capi.SendRequest, batch []*item, st *Stats) error {
	req.Events = make([]json.RawMessage, len(batch))
	for i, it := range batch {
		req.Events[i] = it.d.Payload
		it.tried = true
	}
	st.Requests++
	resp, err := r.o.Sender.Send(ctx, req)
	if err == nil {
		now := r.o.Now()
		for _, it := range batch {
			d := it.d
			d.State, d.LastError, d.Response, d.SentAt = model.DeliverySent, "", resp.Raw, &now
			d.Attempts++
			it.done = true
			st.Sent++
		}
		return nil
	}
	if capi.Classify(err) != capi.ClassRejected {
		return err
	}
	if len(batch) == 1 {
		d := batch[0].d
		d.State, d.LastError, d.Response = model.DeliveryDead, err.Error(), errorJSON(err)
		d.Attempts++
		batch[0].done = true
		st.Dead++
		r.log.Warn("event refused by Meta", "site", string(d.SiteID), "event", d.EventName,
			"event_id", d.EventID, "err", err)
		return nil
	}
	half := len(batch) / 2
	if err := r.post(ctx, req, batch[:half], st); err != nil {
		return err
	}
	return r.post(ctx, req, batch[half:], st)
}

// settleRetry schedules the unsettled events again after a backoff, and
// returns the earliest time it set (zero when none is left to retry).
// Events past their deadline by then are expired.
func (r *Runner) settleRetry(ctx context.Context, items []*item, cause error) (Stats, time.Time) {
	var st Stats
	var earliest time.Time
	now := r.o.Now()
	attempts := 0
	for _, it := range items {
		if !it.done && it.tried {
			attempts = max(attempts, it.d.Attempts+1)
		}
	}
	delay := r.backoff(max(attempts, 1), capi.RetryAfter(cause))
	for _, it := range items {
		if it.done {
			continue
		}
		d := it.d
		if !it.tried {
			// Never sent this round: due again with the others, no
			// attempt counted.
			d.NextAt = now.Add(delay)
			continue
		}
		d.Attempts++
		d.LastError, d.Response = cause.Error(), errorJSON(cause)
		next := now.Add(delay)
		if last := d.DeadlineAt.Add(-deadlineMargin); next.After(last) {
			next = last
		}
		if !next.After(now) {
			expire(d, "deadline passed while retrying: "+cause.Error())
			st.Expired++
			continue
		}
		d.State, d.NextAt = model.DeliveryRetry, next
		if earliest.IsZero() || next.Before(earliest) {
			earliest = next
		}
		st.Retry++
	}
	r.log.Warn("delivery will be retried", "site", string(items[0].d.SiteID), "events", len(items),
		"class", capi.Classify(cause).String(), "in", delay.Round(time.Second).String(), "err", cause)
	r.record(ctx, deliveries(items))
	return st, earliest
}

// settlePaused parks the unsettled events until the site's token changes.
func (r *Runner) settlePaused(ctx context.Context, items []*item, reason string, cause error) Stats {
	var st Stats
	for _, it := range items {
		if it.done {
			continue
		}
		d := it.d
		if it.tried {
			d.Attempts++
			d.Response = errorJSON(cause)
		}
		d.State, d.LastError = model.DeliveryPaused, reason
		st.Paused++
	}
	r.record(ctx, deliveries(items))
	return st
}

// tokenChanged tells whether the site's token was replaced since site was
// read.
func (r *Runner) tokenChanged(ctx context.Context, site *model.Site) bool {
	cur, err := r.o.Store.SiteByID(ctx, site.ID)
	return err == nil && cur.AccessToken != site.AccessToken
}

// pause stops delivery for a site and says so once, when it happens.
func (r *Runner) pause(ctx context.Context, site *model.Site, reason string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err := r.o.Store.SitePause(rctx, site.ID, reason, r.o.Now()); err != nil {
		r.log.Error("pausing site", "site", string(site.ID), "err", err)
		return
	}
	site.PausedReason = reason
	r.log.Error("delivery paused for site until its access token changes", "site", string(site.ID), "reason", reason)
}

// backoff is MinBackoff doubled per attempt up to MaxBackoff, with jitter
// (a random half to full delay, so sites that failed together do not retry
// together), and never sooner than Meta's Retry-After.
func (r *Runner) backoff(attempt int, retryAfter time.Duration) time.Duration {
	d := r.o.MinBackoff
	for i := 1; i < attempt && d < r.o.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, r.o.MaxBackoff)
	d = d/2 + time.Duration(r.o.Jitter()*float64(d/2))
	return max(d, retryAfter)
}

func expire(d *model.Delivery, why string) {
	d.State, d.LastError = model.DeliveryExpired, why
}

// precheck reads a stored payload and checks it against Meta's rules.
func precheck(d *model.Delivery, now time.Time) error {
	var ev capi.Event
	if err := json.Unmarshal(d.Payload, &ev); err != nil {
		return &capi.PrecheckError{Rule: "payload", Detail: "stored payload is not an event: " + err.Error()}
	}
	return capi.Precheck(&ev, now)
}

// errorJSON is Meta's error, or ours, as stored in a delivery's response.
func errorJSON(err error) json.RawMessage {
	if err == nil {
		return nil
	}
	e := map[string]any{"message": err.Error(), "class": capi.Classify(err).String()}
	var ae *capi.APIError
	if errors.As(err, &ae) {
		e["status"], e["code"], e["error_subcode"] = ae.Status, ae.Code, ae.Subcode
		e["message"], e["type"], e["fbtrace_id"] = ae.Message, ae.Type, ae.FBTraceID
		if ae.UserMsg != "" {
			e["error_user_msg"] = ae.UserMsg
		}
		if ae.IsTransient {
			e["is_transient"] = true
		}
	}
	b, _ := json.Marshal(map[string]any{"error": e})
	return b
}

func precheckJSON(err error) json.RawMessage {
	var pe *capi.PrecheckError
	if !errors.As(err, &pe) {
		return errorJSON(err)
	}
	b, _ := json.Marshal(map[string]any{"precheck": map[string]string{"rule": pe.Rule, "detail": pe.Detail}})
	return b
}

func flatten(batches [][]*item) []*item {
	var out []*item
	for _, b := range batches {
		out = append(out, b...)
	}
	return out
}

func deliveries(items []*item) []*model.Delivery {
	out := make([]*model.Delivery, len(items))
	for i, it := range items {
		out[i] = it.d
	}
	return out
}
