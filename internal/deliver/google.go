package deliver

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"golang.org/x/oauth2"

	"github.com/cleanads/cleanads/internal/google"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
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

// Google is the handler of the google destination: the Google platform
// (google.Platform) through PlatformHandler, as every platform's rows
// go, and Follow, which asks again about the requests Google was still
// processing when they were sent.
type Google struct {
	*PlatformHandler
	o GoogleOptions
}

// NewGoogle returns the google destination's handler.
func NewGoogle(o GoogleOptions) *Google {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	p := google.NewPlatform(o.Sender, func(site *model.Site) (oauth2.TokenSource, error) { return o.Tokens(site.ID) },
		platform.Deps{Logger: o.Logger, Now: o.Now})
	return &Google{PlatformHandler: NewPlatformHandler(p, o.Store), o: o}
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
		var a google.Answer
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
		for i, d := range group {
			a, failed, words := google.StatusOf(k.id, res, refs[i])
			if a.Awaiting {
				continue
			}
			d.Response, _ = json.Marshal(a)
			if failed {
				d.State, d.SentAt, d.LastError = model.DeliveryDead, nil, words
			} else if words != "" {
				d.LastError = words
			}
			if err := g.o.Store.DeliveryAnswer(ctx, d, now); err != nil {
				return done, err
			}
			done++
		}
	}
	return done, nil
}

var _ Handler = (*Google)(nil)
