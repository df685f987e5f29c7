package deliver

import (
	"context"
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

// Deliver sends one claim; see Handler. A paused share's rows are parked
// with the pause's words; a row past its deadline expires; a site that no
// longer sends to the platform dead-letters its rows with words that say
// so. The rest go to Send in batches of one account, at most BatchSize
// each, recorded after each batch. A request-level failure settles the
// rows it left as its class says (platform.Class) and the batches not yet
// sent with them: a pause parks them and keeps the share's pause, a
// refusal dead-letters them, anything else retries them after a backoff
// and holds the share until then.
func (h *PlatformHandler) Deliver(ctx context.Context, sh *Claim) (Stats, time.Time) {
	now := sh.Now()
	st := Stats{Claimed: len(sh.Rows)}
	share := model.Share{Site: sh.Site, Destination: sh.Destination}
	if reason, err := h.store.DestinationPauseReason(ctx, share); err != nil {
		sh.Record(ctx, sh.Rows)
		return st, now.Add(sh.Backoff(1, 0))
	} else if reason != "" {
		sh.Record(ctx, park(sh.Rows, reason, &st))
		return st, time.Time{}
	}
	site, err := h.store.SiteByID(ctx, sh.Site)
	if err != nil {
		sh.Record(ctx, sh.Rows)
		return st, now.Add(sh.Backoff(1, 0))
	}
	on := h.p.On(site)
	var done []*model.Delivery
	byAccount := map[string][]*model.Delivery{}
	var accounts []string
	for _, d := range sh.Rows {
		d.UpdatedAt = now
		switch {
		case !d.DeadlineAt.IsZero() && !now.Before(d.DeadlineAt):
			d.State, d.LastError = model.DeliveryExpired, "its window at "+h.p.Label()+" passed unsent"
			st.Expired++
			done = append(done, d)
		case !on:
			d.State, d.LastError = model.DeliveryDead, "the site no longer sends to "+h.p.Label()
			st.Dead++
			done = append(done, d)
		default:
			if _, ok := byAccount[d.PixelID]; !ok {
				accounts = append(accounts, d.PixelID)
			}
			byAccount[d.PixelID] = append(byAccount[d.PixelID], d)
		}
	}
	if len(done) > 0 {
		sh.Record(ctx, done)
	}
	var batches [][]*model.Delivery
	size := max(h.p.BatchSize(), 1)
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
			var rest []*model.Delivery
			for _, b := range batches[i:] {
				rest = append(rest, b...)
			}
			sh.Record(ctx, rest)
			return st, time.Time{}
		}
		out, sendErr := h.p.Send(ctx, site, batch)
		st.Requests++
		now = sh.Now()
		var settled, rest []*model.Delivery
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
			default:
				rest = append(rest, d)
			}
		}
		if len(settled) > 0 {
			sh.Record(ctx, settled)
		}
		if sendErr == nil && len(rest) > 0 {
			// A platform that gave no outcome and no error: the rows
			// go again, never lost.
			sendErr = &platform.Failure{Class: platform.Transient, Words: h.p.Label() + " gave no answer for these events"}
		}
		if sendErr != nil {
			for _, b := range batches[i+1:] {
				rest = append(rest, b...)
			}
			return h.fail(ctx, sh, share, rest, sendErr, &st)
		}
	}
	return st, time.Time{}
}

// fail settles the rows a request-level failure left, as its class says.
func (h *PlatformHandler) fail(ctx context.Context, sh *Claim, share model.Share, rows []*model.Delivery, err error, st *Stats) (Stats, time.Time) {
	now := sh.Now()
	f := platform.Classify(err)
	switch f.Class {
	case platform.Paused:
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
			d.Attempts++
			d.State, d.LastError, d.UpdatedAt = model.DeliveryDead, err.Error(), now
			st.Dead++
		}
		sh.Record(ctx, rows)
		return *st, time.Time{}
	}
	attempt := 1
	for _, d := range rows {
		attempt = max(attempt, d.Attempts+1)
	}
	next := now.Add(sh.Backoff(attempt, f.RetryAfter))
	for _, d := range rows {
		d.Attempts++
		d.State, d.LastError, d.NextAt, d.UpdatedAt = model.DeliveryRetry, err.Error(), next, now
		if !d.DeadlineAt.IsZero() && next.After(d.DeadlineAt) {
			d.State, d.LastError = model.DeliveryExpired, "its window at "+h.p.Label()+" ran out while retrying: "+err.Error()
			st.Expired++
			continue
		}
		st.Retry++
	}
	sh.Record(ctx, rows)
	return *st, next
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
