package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// The site most tests use: a dental clinic in Istanbul.
const (
	// SiteID is the id of the site Site builds.
	SiteID model.SiteID = "dent"
	// Origin is the site's one origin, where its forms and tracker run.
	Origin = "https://www.istanbuldis.example"
	// SiteKey is the site's API key in the CLI tests' config files.
	SiteKey = "dent-key-0123456789abcdef"
)

// Site returns site "dent" (name "Dent", country TR, the one origin
// Origin, no platform), changed by each edit in turn. Tests set what they
// are about in the edits (its Meta settings, an access token), so the
// builder's defaults never decide an assertion.
func Site(edits ...func(*model.Site)) *model.Site {
	s := &model.Site{ID: SiteID, Name: "Dent", Settings: model.SiteSettings{
		Country: "TR", Origins: []string{Origin}}}
	for _, edit := range edits {
		edit(s)
	}
	return s
}

// SiteUpserter is what AddSite stores a site with: *store.DB and *store.Tx.
type SiteUpserter interface {
	SiteUpsert(ctx context.Context, s *model.Site, now time.Time) error
}

// AddSite stores s as of now and returns it; an error fails the test.
func AddSite(t testing.TB, db SiteUpserter, s *model.Site, now time.Time) *model.Site {
	t.Helper()
	if err := db.SiteUpsert(context.Background(), s, now); err != nil {
		t.Fatalf("storing site %s: %v", s.ID, err)
	}
	return s
}

// AddSites stores a bare site (its name its id) for each id, as of now:
// the sites that rows in a store test belong to.
func AddSites(t testing.TB, db SiteUpserter, now time.Time, ids ...model.SiteID) {
	t.Helper()
	for _, id := range ids {
		AddSite(t, db, &model.Site{ID: id, Name: string(id)}, now)
	}
}

// WithMeta is the edit that gives the site a Meta pixel in the given mode
// (model.ModeDryRun, ModeTest, ModeLive).
func WithMeta(pixel, mode string) func(*model.Site) {
	return func(s *model.Site) { s.Settings.Meta.PixelID, s.Settings.Meta.Mode = pixel, mode }
}
