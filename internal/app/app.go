// Package app owns the use cases that cross packages: accepting a lead
// (judge it, store it, queue its events, all in one transaction), recording
// evidence and stages. The web handlers and the CLI call it; it never speaks
// HTTP.
package app

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/platforms"
	"github.com/cleanads/cleanads/internal/qualify"
	"github.com/cleanads/cleanads/internal/store"
)

// Options are the dependencies of a Service.
type Options struct {
	Store  *store.DB
	Logger *slog.Logger
	Now    func() time.Time
	// Lists are the word lists and disposable domains of the rules; nil
	// means the embedded ones.
	Lists *qualify.Lists
	// SecretKey (config secret_key) signs form tokens; when empty a random
	// key is generated once and kept in the database.
	SecretKey string
	// Graph sends events to Meta at once (send-test); *capi.Client is one.
	Graph Graph
	// Notifier is woken after events are queued; the delivery runner is
	// one. Nil is fine: the runner polls.
	Notifier Notifier
	// Platforms are the ad platforms a lead's events may go to; nil means
	// platforms.All with Graph as Meta's client (and no Google client).
	Platforms []platform.Platform
}

// Graph posts one request of events to Meta.
type Graph interface {
	Send(ctx context.Context, req capi.SendRequest) (*capi.Response, error)
}

// Notifier hears that events were queued.
type Notifier interface{ Wake() }

// Service runs the use cases.
type Service struct {
	db         *store.DB
	log        *slog.Logger
	now        func() time.Time
	rulesCache rulesCache
	textCache  textCache
	ids        model.IDGen
	graph      Graph
	notify     Notifier
	quality    qualityCache // Meta's dataset quality per site (quality.go)
	platforms  []platform.Platform
	hooks      hookCache // each site's outgoing webhooks (outhook.go)

	secret string
	keyMu  sync.Mutex
	key    []byte    // the form-token key, loaded once
	macs   sync.Pool // *keyedMAC: HMACs keyed with key (tokenMAC)
}

// New returns a Service.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Lists == nil {
		o.Lists = qualify.DefaultLists()
	}
	if o.Platforms == nil {
		var meta capi.Sender
		if o.Graph != nil {
			meta = o.Graph
		}
		o.Platforms = platforms.All(platform.Deps{Logger: o.Logger, Now: o.Now}, platforms.Clients{Meta: meta})
	}
	return &Service{db: o.Store, log: o.Logger, now: o.Now, rulesCache: rulesCache{lists: o.Lists},
		secret: o.SecretKey, graph: o.Graph, notify: o.Notifier, platforms: o.Platforms}
}
