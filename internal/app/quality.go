package app

import (
	"context"
	"sync"
	"time"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
)

// How Meta's dataset quality figures are read for the readiness page: with
// a short timeout (the page waits for them), and kept a while, since Meta
// recomputes them over days and a page reload must not call it again.
const (
	QualityTimeout = 5 * time.Second
	qualityKeep    = 10 * time.Minute
	qualityKeepErr = time.Minute
)

// QualityReader reads Meta's Dataset Quality API; *capi.Client is one. The
// Graph a Service is given is asked for it, so the wiring stays one client.
type QualityReader interface {
	DatasetQuality(ctx context.Context, a capi.GraphAuth, datasetID string) (*capi.DatasetQuality, error)
}

// Why Meta's figures were not read.
const (
	QualityNoGraph = "no_graph" // the server has no Meta client
	QualityNoPixel = "no_pixel"
	QualityNoToken = "no_token"
	QualityDryRun  = "dry_run" // the site sends nothing to Meta
	QualityError   = "error"   // Meta refused, or could not be reached: Err
)

// MetaQuality is what Meta says of a site's dataset, or why it was not read.
type MetaQuality struct {
	// Quality is Meta's answer, nil when Reason is set.
	Quality *capi.DatasetQuality
	ReadAt  time.Time
	Reason  string
	// Err is Meta's refusal (a *capi.APIError) or the failure on the way,
	// when Reason is QualityError.
	Err error
}

type qualityEntry struct {
	pixel, token string
	until        time.Time
	q            MetaQuality
}

// qualityCache keeps each site's last read.
type qualityCache struct {
	mu   sync.Mutex
	read map[model.SiteID]qualityEntry
}

// MetaQuality reads Meta's quality figures of the site's dataset (its
// pixel) with the site's token, or says why it does not: no Meta client,
// no pixel or token, a dry-run site. A read is kept ten minutes (an error
// one minute) for the same pixel and token.
func (s *Service) MetaQuality(ctx context.Context, site *model.Site) MetaQuality {
	m := site.Settings.Meta
	reader, ok := s.graph.(QualityReader)
	switch {
	case !ok || s.graph == nil:
		return MetaQuality{Reason: QualityNoGraph}
	case m.PixelID == "":
		return MetaQuality{Reason: QualityNoPixel}
	case site.AccessToken == "":
		return MetaQuality{Reason: QualityNoToken}
	case m.Mode == model.ModeDryRun:
		return MetaQuality{Reason: QualityDryRun}
	}
	now := s.now()
	c := &s.quality
	c.mu.Lock()
	e, ok := c.read[site.ID]
	c.mu.Unlock()
	if ok && e.pixel == m.PixelID && e.token == site.AccessToken && now.Before(e.until) {
		return e.q
	}
	rctx, cancel := context.WithTimeout(ctx, QualityTimeout)
	defer cancel()
	q, err := reader.DatasetQuality(rctx, capi.GraphAuth{AccessToken: site.AccessToken}, m.PixelID)
	out, keep := MetaQuality{Quality: q, ReadAt: now}, qualityKeep
	if err != nil {
		out, keep = MetaQuality{Reason: QualityError, Err: err, ReadAt: now}, qualityKeepErr
		s.log.WarnContext(ctx, "meta dataset quality not read", "site", string(site.ID), "err", err)
	}
	c.mu.Lock()
	if c.read == nil {
		c.read = map[model.SiteID]qualityEntry{}
	}
	c.read[site.ID] = qualityEntry{pixel: m.PixelID, token: site.AccessToken, until: now.Add(keep), q: out}
	c.mu.Unlock()
	return out
}
