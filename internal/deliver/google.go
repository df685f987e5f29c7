package deliver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
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
	DeliveriesAwaitingGoogle(ctx context.Context, since time.Time, limit int) ([]*model.Delivery, error)
	DeliveryAnswer(ctx context.Context, d *model.Delivery, now time.Time) error
}

// GoogleOptions configure the google destination.
type GoogleOptions struct {
	Store  GoogleStore
	Sender GoogleSender
	// Tokens are the token sources of the sites, one per credential.
	Tokens func(site model.SiteID) (oauth2.TokenSource, error)
	Logger *slog.Logger
	Now    func() time.Time
}

// followWindow is how long after sending Follow asks about a request
// Google has not finished; followBatch how many rows one run reads.
const (
	followWindow = 24 * time.Hour
	followBatch  = 1000
)

// Google is the handler of the google destination: a share's rows go to
// the site's Google Ads account through the Data Manager API, in requests
// of at most 2,000 events. A refused batch is split (google.IngestAll) and
// each event at fault dead-lettered with Google's reason; a transient
// failure retries every unsent row with the runner's backoff and jitter
// and holds the share until then; a refused credential or account setup
// pauses the share with Google's reason in plain words, keeping its rows.
// After an accepted request it asks requestStatus:retrieve once and
// records each destination's result on the rows; Follow asks again about
// the requests Google was still processing.
type Google struct{ o GoogleOptions }

// NewGoogle returns the google destination's handler.
func NewGoogle(o GoogleOptions) *Google {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Google{o: o}
}

// Deliver sends one claim; see Handler.
func (g *Google) Deliver(ctx context.Context, sh *Claim) (Stats, time.Time) {
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
		d.UpdatedAt = now
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
		}
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
	var done, rest []*model.Delivery
	type sentRows struct {
		rows []*model.Delivery
		refs []string
	}
	byRequest := map[string]*sentRows{}
	for i, d := range live {
		o := out[i]
		switch {
		case o.Accepted:
			d.State, d.Mode, d.LastError = model.DeliverySent, mode, ""
			d.Attempts++
			sent := now
			d.SentAt, d.UpdatedAt = &sent, now
			d.Response, _ = json.Marshal(answer{RequestID: o.RequestID, ValidateOnly: t.ValidateOnly, Awaiting: o.RequestID != ""})
			done = append(done, d)
			if o.RequestID != "" {
				sr := byRequest[o.RequestID]
				if sr == nil {
					sr = &sentRows{}
					byRequest[o.RequestID] = sr
				}
				sr.rows, sr.refs = append(sr.rows, d), append(sr.refs, events[i].DestinationReferences[0])
			}
			st.Sent++
		case o.Err != nil:
			d.State, d.LastError, d.UpdatedAt = model.DeliveryDead, o.Err.Error(), now
			d.Attempts++
			done = append(done, d)
			st.Dead++
		default:
			rest = append(rest, d)
		}
	}
	// Google usually answers within seconds: one question now, and
	// Follow asks again about what is still processing.
	for id, sr := range byRequest {
		if res, err := g.o.Sender.Status(ctx, ts, id); err == nil {
			failed := applyStatus(id, res, sr.rows, sr.refs)
			st.Sent -= failed
			st.Dead += failed
		}
	}
	if len(done) > 0 {
		settle(done)
	}
	if sendErr == nil {
		return st, time.Time{}
	}
	return g.fail(ctx, sh, share, rest, sendErr, &st)
}

// fail settles the rows a request-level failure left: a pause parks them
// with the reason, anything else retries them after a backoff and holds
// the share until then.
func (g *Google) fail(ctx context.Context, sh *Claim, share model.Share, rows []*model.Delivery, err error, st *Stats) (Stats, time.Time) {
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

// answer is what a Google row's response holds: the request that carried
// it, and Google's per-destination result once it has one.
type answer struct {
	RequestID    string                    `json:"requestId,omitempty"`
	ValidateOnly bool                      `json:"validateOnly,omitempty"`
	Awaiting     bool                      `json:"awaiting,omitempty"`
	Status       *google.DestinationStatus `json:"status,omitempty"`
}

// applyStatus records Google's per-destination result of a request on its
// rows (each row's destination is its conversion action): a destination
// Google failed dead-letters its rows with Google's reasons; one still
// processing leaves them awaiting. It returns how many rows it failed.
func applyStatus(requestID string, res *google.StatusResponse, rows []*model.Delivery, refs []string) int {
	failed := 0
	for k, d := range rows {
		ref := refs[k]
		for i := range res.PerDestination {
			ds := &res.PerDestination[i]
			if ds.Destination.ProductDestinationID != ref && ds.Destination.Reference != ref {
				continue
			}
			a := answer{RequestID: requestID, Status: ds}
			switch ds.RequestStatus {
			case google.StatusProcessing, google.StatusUnknown, "":
				a.Awaiting = true
			case google.StatusFailed:
				d.State, d.SentAt = model.DeliveryDead, nil
				d.LastError = "Google failed the request for conversion action " + ref + reasons(*ds)
				failed++
			case google.StatusPartialSuccess:
				// Google counts what failed and names no event: the row
				// stays sent, and says so.
				d.LastError = partialWords(ref, *ds)
			}
			d.Response, _ = json.Marshal(a)
		}
	}
	return failed
}

// Follow asks requestStatus:retrieve about the requests Google had not
// finished processing, sent within the last day, and records each
// destination's result on their rows. A periodic job runs it; it returns
// how many rows got their answer.
func (g *Google) Follow(ctx context.Context) (int, error) {
	now := g.o.Now()
	rows, err := g.o.Store.DeliveriesAwaitingGoogle(ctx, now.Add(-followWindow), followBatch)
	if err != nil {
		return 0, err
	}
	type key struct {
		site model.SiteID
		id   string
	}
	byRequest := map[key][]*model.Delivery{}
	var order []key
	for _, d := range rows {
		var a answer
		if json.Unmarshal(d.Response, &a) != nil || a.RequestID == "" {
			continue
		}
		k := key{d.SiteID, a.RequestID}
		if byRequest[k] == nil {
			order = append(order, k)
		}
		byRequest[k] = append(byRequest[k], d)
	}
	done := 0
	for _, k := range order {
		ts, err := g.o.Tokens(k.site)
		if err != nil {
			continue
		}
		res, err := g.o.Sender.Status(ctx, ts, k.id)
		if err != nil {
			g.o.Logger.Warn("google: request status", "site", string(k.site), "request", k.id, "err", err)
			continue
		}
		group := byRequest[k]
		refs := make([]string, len(group))
		for i, d := range group {
			var e google.Event
			if json.Unmarshal(d.Payload, &e) == nil && len(e.DestinationReferences) > 0 {
				refs[i] = e.DestinationReferences[0]
			}
		}
		applyStatus(k.id, res, group, refs)
		for _, d := range group {
			var a answer
			if json.Unmarshal(d.Response, &a) == nil && a.Awaiting {
				continue
			}
			if err := g.o.Store.DeliveryAnswer(ctx, d, now); err != nil {
				return done, err
			}
			done++
		}
	}
	return done, nil
}

// partialWords says what Google's PARTIAL_SUCCESS of a request means for
// one of its rows: how many of the request's events failed and why, and
// that Google does not say which.
func partialWords(ref string, ds google.DestinationStatus) string {
	total := ""
	if ds.EventsIngestionStatus != nil && ds.EventsIngestionStatus.RecordCount != "" {
		total = " of " + string(ds.EventsIngestionStatus.RecordCount)
	}
	var n int64
	if ds.ErrorInfo != nil {
		for _, c := range ds.ErrorInfo.ErrorCounts {
			k, _ := c.RecordCount.Int64()
			n += k
		}
	}
	return fmt.Sprintf("Google took the request for conversion action %s only in part: %d%s events failed%s. "+
		"Google does not say which: this event may be one of them", ref, n, total, reasons(ds))
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

var _ Handler = (*Google)(nil)
