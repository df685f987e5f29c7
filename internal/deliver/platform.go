package deliver

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
)

// PauseStore is what a platform's handler reads and writes beside the
// runner's Store: the site, and the pause of its share.
type PauseStore interface {
	SiteByID(ctx context.Context, id model.SiteID) (*model.Site, error)
	DestinationPauseSet(ctx context.Context, sh model.Share, reason string, now time.Time) error
	DestinationPauseReason(ctx context.Context, sh model.Share) (string, error)
}

// Batches is what a PlatformHandler sends through: every platform.Platform,
// and a lead source's worker, whose Send does the work its rows hold (a
// CRM's contact to read, a stage to record) and says per row what became
// of it, with the same failure classes.
type Batches interface {
	Label() string
	On(site *model.Site) bool
	BatchSize() int
	Send(ctx context.Context, site *model.Site, rows []*model.Delivery) ([]platform.Outcome, error)
}

// PlatformHandler is a platform (or a source's worker) as the runner's
// Handler: it does for every platform what is the same for all of them, and
// leaves to the platform only what is its own (Send and the class of its
// failures).
type PlatformHandler struct {
	p     Batches
	store PauseStore
}

// NewPlatformHandler returns the handler of p's rows.
func NewPlatformHandler(p Batches, store PauseStore) *PlatformHandler {
	return &PlatformHandler{p: p, store: store}
}

// Deliver sends one claim; see Handler. A row past its deadline expires;
// a site that no longer sends to the platform dead-letters its rows with
// words that say so. What a platform says of itself through platform's
// optional interfaces comes next: rows are marked with a Moded's mode (in
// dry run they are kept, never sent) and a Checker checks each (a row too
// old for it expires, one it would refuse is dead). A paused share's other
// rows are parked with the pause's words. The rest go to Send in batches
// of one account, at most BatchSize each, recorded after each batch; the
// platform splits a refused batch itself and says per row what became of
// it. A request-level failure settles the rows it left as its class says
// (platform.Class), and the batches not yet sent with them: a pause parks
// them and keeps the share's pause (unless a Rekeyer's credentials were
// replaced meanwhile: then they go again at once), a refusal dead-letters
// them, anything else retries them after a backoff and holds the share
// until then. Only the rows a request carried count an attempt.
func (h *PlatformHandler) Deliver(ctx context.Context, sh *Claim) (Stats, time.Time) {
	now := sh.Now()
	var st Stats
	share := model.Share{Site: sh.Site, Destination: sh.Destination}
	paused, err := h.store.DestinationPauseReason(ctx, share)
	if err != nil {
		sh.Logger().Error("platform: read pause", "platform", share.Destination, "site", string(sh.Site), "err", err)
		sh.Record(ctx, sh.Rows)
		return st, now.Add(sh.Backoff(1, 0))
	}
	site, err := h.store.SiteByID(ctx, sh.Site)
	if err != nil {
		sh.Logger().Error("platform: load site", "platform", share.Destination, "site", string(sh.Site), "err", err)
		sh.Record(ctx, sh.Rows)
		return st, now.Add(sh.Backoff(1, 0))
	}
	on := h.p.On(site)
	checker, _ := h.p.(platform.Checker)
	mode := ""
	if m, ok := h.p.(platform.Moded); ok && on {
		mode = m.Mode(site)
	}
	label := h.p.Label()
	var done []*model.Delivery
	byAccount := map[string][]*model.Delivery{}
	var accounts []string
	refused := 0
	for _, d := range sh.Rows {
		d.UpdatedAt = now
		switch {
		case !d.DeadlineAt.IsZero() && !now.Before(d.DeadlineAt):
			d.State, d.LastError = model.DeliveryExpired, "deadline passed before it could be sent to "+label
			st.Expired++
			done = append(done, d)
			continue
		case !on:
			d.State, d.LastError = model.DeliveryDead, "the site no longer sends to "+label
			st.Dead++
			done = append(done, d)
			continue
		}
		if mode != "" {
			d.Mode = mode
		}
		// A row queued moments ago was checked then, and nothing has
		// changed it since (erasure deletes it): reading every payload
		// back is most of the work for a page view.
		if checker != nil && !d.Queued {
			if err := checker.Check(site, d, now); err != nil {
				if errors.Is(err, platform.ErrTooOld) {
					d.State, d.LastError = model.DeliveryExpired, err.Error()
					st.Expired++
				} else {
					d.State, d.LastError, d.Response = model.DeliveryDead, err.Error(), platform.Classify(err).Response
					st.Dead++
					refused++
				}
				done = append(done, d)
				continue
			}
		}
		switch {
		case mode == model.ModeDryRun:
			// Built, checked and kept; never sent.
			d.State, d.Mode, d.LastError, d.Response = model.DeliveryDryRun, model.ModeDryRun, "", nil
			st.DryRun++
			done = append(done, d)
		case paused != "":
			d.State, d.LastError = model.DeliveryPaused, paused
			st.Paused++
			done = append(done, d)
		default:
			if _, ok := byAccount[d.PixelID]; !ok {
				accounts = append(accounts, d.PixelID)
			}
			byAccount[d.PixelID] = append(byAccount[d.PixelID], d)
		}
	}
	if refused > 0 {
		sh.Logger().Warn("events failed the platform's check and will not be sent", "platform", share.Destination,
			"site", string(sh.Site), "count", refused)
	}
	if len(done) > 0 {
		sh.Record(ctx, done)
	}
	var batches [][]*model.Delivery
	size := sh.batchSize(h.p.BatchSize())
	for _, a := range accounts {
		rows := byAccount[a]
		for len(rows) > 0 {
			n := min(size, len(rows))
			batches, rows = append(batches, rows[:n]), rows[n:]
		}
	}
	for i, batch := range batches {
		// Stop before the lease runs out: another node may claim these.
		if sh.Now().After(sh.LeaseEnd.Add(-sh.Lease / 2)) {
			sh.Record(ctx, slices.Concat(batches[i:]...))
			return st, time.Time{}
		}
		out, sendErr := h.p.Send(ctx, site, batch)
		st.Requests++
		now = sh.Now()
		var settled, rest []*model.Delivery
		dead := 0
		for k, d := range batch {
			var o platform.Outcome
			if k < len(out) {
				o = out[k]
			}
			d.UpdatedAt = now
			switch {
			case o.Accepted && o.Mode == model.ModeDryRun:
				// Built and kept, never sent: the site is in dry run.
				d.State, d.Mode, d.LastError, d.Response = model.DeliveryDryRun, o.Mode, "", o.Response
				settled = append(settled, d)
				st.DryRun++
			case o.Accepted:
				d.Attempts++
				sent := now
				d.State, d.Mode, d.LastError, d.SentAt, d.Response = model.DeliverySent, o.Mode, o.Note, &sent, o.Response
				settled = append(settled, d)
				st.Sent++
			case o.Err != nil:
				d.Attempts++
				d.State, d.LastError, d.Response = model.DeliveryDead, o.Err.Error(), o.Response
				settled = append(settled, d)
				st.Dead++
				dead++
			default:
				rest = append(rest, d)
			}
		}
		if dead > 0 {
			sh.Logger().Warn("events refused by the platform", "platform", share.Destination, "site", string(sh.Site), "count", dead)
		}
		if len(settled) > 0 {
			sh.Record(ctx, settled)
		}
		if sendErr == nil && len(rest) > 0 {
			// A platform that gave no outcome and no error: the rows
			// go again, never lost.
			sendErr = &platform.Failure{Class: platform.Transient, Words: label + " gave no answer for these events"}
		}
		if sendErr != nil {
			return h.fail(ctx, sh, share, site, rest, slices.Concat(batches[i+1:]...), sendErr, &st)
		}
	}
	return st, time.Time{}
}

// fail settles the rows a request-level failure left, as its class says:
// tried are the rows the failed request carried (each counts an attempt
// and keeps the platform's answer), untried those of the batches not yet
// sent.
func (h *PlatformHandler) fail(ctx context.Context, sh *Claim, share model.Share, site *model.Site,
	tried, untried []*model.Delivery, err error, st *Stats) (Stats, time.Time) {
	now := sh.Now()
	f := platform.Classify(err)
	for _, d := range tried {
		d.Attempts++
		d.UpdatedAt = now
		if f.Response != nil {
			d.Response = f.Response
		}
	}
	rows := slices.Concat(tried, untried)
	switch f.Class {
	case platform.Paused:
		if rk, ok := h.p.(platform.Rekeyer); ok {
			if cur, cerr := h.store.SiteByID(ctx, sh.Site); cerr == nil && rk.NewCredentials(site, cur) {
				// The owner replaced the credentials while the old
				// ones were refused: no pause, the rows go again at
				// once with the new ones.
				for _, d := range tried {
					d.LastError = err.Error()
				}
				sh.Record(ctx, rows)
				sh.r.Wake()
				return *st, time.Time{}
			}
		}
		reason := f.Words
		if reason == "" {
			reason = err.Error()
		}
		if perr := h.store.DestinationPauseSet(ctx, share, reason, now); perr != nil {
			sh.Logger().Error("platform: pause", "platform", share.Destination, "site", string(sh.Site), "err", perr)
		}
		sh.Logger().Error("deliveries paused for site", "platform", share.Destination, "site", string(sh.Site), "reason", reason)
		sh.Record(ctx, park(rows, reason, st))
		return *st, time.Time{}
	case platform.Refused:
		for _, d := range rows {
			d.State, d.LastError, d.UpdatedAt = model.DeliveryDead, err.Error(), now
			st.Dead++
		}
		sh.Record(ctx, rows)
		return *st, time.Time{}
	}
	attempt := 1
	for _, d := range tried {
		attempt = max(attempt, d.Attempts)
	}
	delay := sh.Backoff(attempt, f.RetryAfter)
	for _, d := range untried {
		// Never sent: due again with the others, no attempt counted.
		d.NextAt, d.UpdatedAt = now.Add(delay), now
		st.Retry++
	}
	var earliest time.Time
	for _, d := range tried {
		d.LastError = err.Error()
		// The last try is a minute before the deadline, never after it.
		next := now.Add(delay)
		if last := d.DeadlineAt.Add(-deadlineMargin); !d.DeadlineAt.IsZero() && next.After(last) {
			next = last
		}
		if !next.After(now) {
			d.State, d.LastError = model.DeliveryExpired, "deadline passed while retrying: "+err.Error()
			st.Expired++
			continue
		}
		d.State, d.NextAt = model.DeliveryRetry, next
		if earliest.IsZero() || next.Before(earliest) {
			earliest = next
		}
		st.Retry++
	}
	sh.Logger().Warn("delivery will be retried", "platform", share.Destination, "site", string(sh.Site),
		"events", len(rows), "class", f.Class.String(), "in", delay.Round(time.Second).String(), "err", err)
	sh.Record(ctx, rows)
	return *st, earliest
}

// park keeps rows with state paused and the reason, until the pause is
// lifted.
func park(rows []*model.Delivery, reason string, st *Stats) []*model.Delivery {
	for _, d := range rows {
		d.State, d.LastError = model.DeliveryPaused, reason
		st.Paused++
	}
	return rows
}

var _ Handler = (*PlatformHandler)(nil)
