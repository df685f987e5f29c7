package web

import (
	"context"
	"sync"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// DefaultSiteTTL is how long a site read from the database serves requests
// before it is read again (Options.SiteTTL).
const DefaultSiteTTL = 2 * time.Second

// siteCache keeps the sites the public endpoints read on every request:
// sites change rarely, and a change (an origin, a setting, a new token)
// reaches requests within the TTL, on every node, without any signal
// between nodes. Unknown sites are not cached, so a site added to the
// database is served at once. The cached *model.Site is shared: handlers
// only read it.
type siteCache struct {
	ttl   time.Duration
	now   func() time.Time
	load  func(ctx context.Context, id model.SiteID) (*model.Site, error)
	mu    sync.RWMutex
	sites map[model.SiteID]cachedSite
}

type cachedSite struct {
	site    *model.Site
	expires time.Time
}

// siteCacheMax bounds the cache; an agency runs hundreds of sites, and ids
// come from requests, so anything past this is read each time.
const siteCacheMax = 10000

func (c *siteCache) get(ctx context.Context, id model.SiteID) (*model.Site, error) {
	now := c.now()
	c.mu.RLock()
	e, ok := c.sites[id]
	c.mu.RUnlock()
	if ok && now.Before(e.expires) {
		return e.site, nil
	}
	s, err := c.load(ctx, id)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.sites == nil {
		c.sites = map[model.SiteID]cachedSite{}
	}
	if _, had := c.sites[id]; had || len(c.sites) < siteCacheMax {
		c.sites[id] = cachedSite{site: s, expires: now.Add(c.ttl)}
	}
	c.mu.Unlock()
	return s, nil
}

// forget drops a site, so the next request reads it again.
func (c *siteCache) forget(id model.SiteID) {
	c.mu.Lock()
	delete(c.sites, id)
	c.mu.Unlock()
}
