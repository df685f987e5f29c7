// Package sources lists the lead sources CleanAds receives from. A source
// is a package implementing source.Source; adding one is that package and
// one line in All.
package sources

import (
	"github.com/cleanads/cleanads/internal/calls"
	"github.com/cleanads/cleanads/internal/hubspot"
	"github.com/cleanads/cleanads/internal/leadads"
	"github.com/cleanads/cleanads/internal/outhook"
	"github.com/cleanads/cleanads/internal/pipedrive"
	"github.com/cleanads/cleanads/internal/source"
	"github.com/cleanads/cleanads/internal/webforms"
	"github.com/cleanads/cleanads/internal/whatsapp"
)

// All returns every lead source, in the order the owner's pages show them.
func All(d source.Deps) []source.Source {
	return []source.Source{
		webforms.New(d),
		calls.New(d),
		hubspot.New(d),
		pipedrive.New(d),
		whatsapp.New(d),
		leadads.NewSource(d),
		outhook.New(d),
	}
}
