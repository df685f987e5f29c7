package deliver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"golang.org/x/oauth2"

	"github.com/cleanads/cleanads/internal/google"
	"github.com/cleanads/cleanads/internal/model"
)

// GoogleSender is the Data Manager API as the google handler needs it;
// *google.Client is one.
type GoogleSender interface {
	IngestAll(ctx context.Context, ts oauth2.TokenSource, t google.Target, events []google.Event) ([]google.Outcome, int, error)
	Status(ctx context.Context, ts oauth2.TokenSource, requestID string) (*google.StatusResponse, error)
}

// GoogleStore is what the google handler reads and writes beside the
// runner's Store: the site, and its Google pause.
type GoogleStore interface {
	SiteByID(ctx context.Context, id model.SiteID) (*model.Site, error)
	DestinationPauseSet(ctx context.Context, sh model.Share, reason string, now time.Time) error
	DestinationPauseReason(ctx context.Context, sh model.Share) (string, error)
}

// GoogleOptions configure the google destination.
type GoogleOptions struct {
	Store  GoogleStore
	Sender GoogleSender
	// Tokens are the token sources of the sites, one per credential.
	Tokens func(site model.SiteID) (oauth2.TokenSource, error)
	// Polls is how many times requestStatus:retrieve is asked after an
	// accepted request while Google still processes it; default 3.
	Polls int
	// PollWait is the wait between polls; default 2s.
	PollWait time.Duration
}

// Google is the handler of the google destination: a share's rows go to
// the site's Google Ads account through the Data Manager API, in requests
// of at most 2,000 events. A refused batch is split (google.IngestAll) and
// each event at fault dead-lettered with Google's reason; a transient
// failure retries every unsent row with the runner's backoff and jitter
// and holds the share until then; a refused credential or account setup
// pauses the share with Google's reason in plain words, keeping its rows.
// After an accepted request it asks requestStatus:retrieve and records
// each destination's result on the rows.
type Google struct{ o GoogleOptions }

// NewGoogle returns the google destination's handler.
func NewGoogle(o GoogleOptions) *Google {
	if o.Polls <= 0 {
		o.Polls = 3
	}
	if o.PollWait == 0 {
		o.PollWait = 2 * time.Second
	}
	return &Google{o: o}
}

// Deliver sends one share; see Destination.
func (g *Google) Deliver(ctx context.Context, sh *Share) (Stats, time.Time) {
	now := sh.Now()
	st := Stats{Claimed: len(sh.Rows)}
	share := model.Share{Site: sh.Site, Destination: sh.Destination}
	settle := func(rows []*model.Delivery) { sh.Record(ctx, rows) }

	if reason, err := g.o.Store.DestinationPauseReason(ctx, share); err != nil {
		settle(back(sh.Rows))
		return st, now.Add(sh.Backoff(1, 0))
	} else if reason != "" {
		settle(park(sh.Rows, reason, &st))
		return st, time.Time{}
	}
	site, err := g.o.Store.SiteByID(ctx, sh.Site)
	if err != nil {
		settle(back(sh.Rows))
		return st, now.Add(sh.Backoff(1, 0))
	}
	gs := site.Settings.Google
	var live []*model.Delivery
	var events []google.Event
	for _, d := range sh.Rows {
		switch {
		case !d.DeadlineAt.IsZero() && !now.Before(d.DeadlineAt):
			d.State, d.LastError = model.DeliveryExpired, "its 90-day window at Google passed unsent"
			st.Expired++
		case gs == nil:
			d.State, d.LastError = model.DeliveryDead, "the site no longer has a google block"
			st.Dead++
		default:
			var e google.Event
			if err := json.Unmarshal(d.Payload, &e); err != nil {
				d.State, d.LastError = model.DeliveryDead, "unreadable payload: "+err.Error()
				st.Dead++
				continue
			}
			if err := google.Check(&e); err != nil {
				d.State, d.LastError = model.DeliveryDead, err.Error()
				st.Dead++
				continue
			}
			live = append(live, d)
			events = append(events, e)
			continue
		}
		d.UpdatedAt = now
	}
	if done := settled(sh.Rows, live); len(done) > 0 {
		settle(done)
	}
	if len(live) == 0 {
		return st, time.Time{}
	}
	ts, err := g.o.Tokens(sh.Site)
	if err != nil {
		return g.fail(ctx, sh, share, live, err, &st)
	}
	mode := gs.Mode
	if mode == "" {
		mode = model.GoogleModeLive
	}
	t := google.Target{OperatingAccountID: gs.OperatingAccountID, LoginAccountID: gs.LoginAccountID,
		ValidateOnly: mode == model.GoogleModeValidate}
	out, n, sendErr := g.o.Sender.IngestAll(ctx, ts, t, events)
	st.Requests += n
	now = sh.Now()
	var accepted, rest []*model.Delivery
	byRequest := map[string][]*model.Delivery{}
	for i, d := range live {
		o := out[i]
		switch {
		case o.Accepted:
			d.State, d.Mode, d.LastError = model.DeliverySent, mode, ""
			d.Attempts++
			sent := now
			d.SentAt, d.UpdatedAt = &sent, now
			d.Response, _ = json.Marshal(map[string]any{"requestId": o.RequestID, "validateOnly": t.ValidateOnly})
			accepted = append(accepted, d)
			if o.RequestID != "" {
				byRequest[o.RequestID] = append(byRequest[o.RequestID], d)
			}
			st.Sent++
		case o.Err != nil:
			d.State, d.LastError, d.UpdatedAt = model.DeliveryDead, o.Err.Error(), now
			d.Attempts++
			accepted = append(accepted, d)
			st.Dead++
		default:
			rest = append(rest, d)
		}
	}
	for id, rows := range byRequest {
		g.poll(ctx, ts, id, rows, &st)
	}
	if len(accepted) > 0 {
		settle(accepted)
	}
	if sendErr == nil {
		return st, time.Time{}
	}
	return g.fail(ctx, sh, share, rest, sendErr, &st)
}

// fail settles the rows a request-level failure left: a pause parks them
// with the reason, anything else retries them after a backoff and holds
// the share until then.
func (g *Google) fail(ctx context.Context, sh *Share, share model.Share, rows []*model.Delivery, err error, st *Stats) (Stats, time.Time) {
	now := sh.Now()
	switch google.Classify(err) {
	case google.ClassPause:
		reason := google.PauseReason(err)
		if perr := g.o.Store.DestinationPauseSet(ctx, share, reason, now); perr != nil {
			sh.Logger().Error("google: pause", "site", string(sh.Site), "err", perr)
		}
		sh.Logger().Error("google deliveries paused for site", "site", string(sh.Site), "reason", reason)
		sh.Record(ctx, park(rows, reason, st))
		return *st, time.Time{}
	case google.ClassInvalid:
		for _, d := range rows {
			d.State, d.LastError, d.UpdatedAt = model.DeliveryDead, err.Error(), now
			d.Attempts++
			st.Dead++
		}
		sh.Record(ctx, rows)
		return *st, time.Time{}
	}
	attempt := 1
	for _, d := range rows {
		attempt = max(attempt, d.Attempts+1)
	}
	next := now.Add(sh.Backoff(attempt, google.RetryAfter(err)))
	for _, d := range rows {
		d.Attempts++
		d.State, d.LastError, d.NextAt, d.UpdatedAt = model.DeliveryRetry, err.Error(), next, now
		if !d.DeadlineAt.IsZero() && next.After(d.DeadlineAt) {
			d.State, d.LastError = model.DeliveryExpired, "its 90-day window at Google ran out while retrying: "+err.Error()
			st.Expired++
			continue
		}
		st.Retry++
	}
	sh.Record(ctx, rows)
	return *st, next
}

// poll asks how Google processed an accepted request and records each
// destination's result on its rows: a destination Google failed
// dead-letters its rows with Google's reasons; still processing after
// the polls is recorded as such (Google accepted the rows, they stay sent).
func (g *Google) poll(ctx context.Context, ts oauth2.TokenSource, requestID string, rows []*model.Delivery, st *Stats) {
	var res *google.StatusResponse
	for i := 0; i < g.o.Polls; i++ {
		r, err := g.o.Sender.Status(ctx, ts, requestID)
		if err == nil {
			res = r
			if r.Done() {
				break
			}
		}
		if i+1 < g.o.Polls && g.o.PollWait > 0 {
			select {
			case <-ctx.Done():
				i = g.o.Polls
			case <-time.After(g.o.PollWait):
			}
		}
	}
	if res == nil {
		return
	}
	for _, d := range rows {
		var e google.Event
		if json.Unmarshal(d.Payload, &e) != nil || len(e.DestinationReferences) == 0 {
			continue
		}
		for _, ds := range res.PerDestination {
			if ds.Destination.ProductDestinationID != e.DestinationReferences[0] && ds.Destination.Reference != e.DestinationReferences[0] {
				continue
			}
			d.Response, _ = json.Marshal(map[string]any{"requestId": requestID, "status": ds})
			if ds.RequestStatus == google.StatusFailed {
				d.State, d.SentAt = model.DeliveryDead, nil
				d.LastError = "Google failed the request for conversion action " + e.DestinationReferences[0] + reasons(ds)
				st.Sent--
				st.Dead++
			}
		}
	}
}

func reasons(ds google.DestinationStatus) string {
	if ds.ErrorInfo == nil || len(ds.ErrorInfo.ErrorCounts) == 0 {
		return ""
	}
	s := ":"
	for _, c := range ds.ErrorInfo.ErrorCounts {
		s += fmt.Sprintf(" %s (%s)", c.Reason, c.RecordCount)
	}
	return s
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

// back gives rows back unchanged, for the next claim.
func back(rows []*model.Delivery) []*model.Delivery { return rows }

// settled is the rows not in live.
func settled(all, live []*model.Delivery) []*model.Delivery {
	in := make(map[*model.Delivery]bool, len(live))
	for _, d := range live {
		in[d] = true
	}
	var out []*model.Delivery
	for _, d := range all {
		if !in[d] {
			out = append(out, d)
		}
	}
	return out
}

var _ Destination = (*Google)(nil)
