// Package platforms lists the ad platforms CleanAds sends to. A platform is
// a package implementing platform.Platform; adding one is that package
// and one line in All.
package platforms

import (
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/google"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/tiktok"
)

// Clients are the API clients of the platforms that are not made from
// platform.Deps alone (nil: the platform builds events but cannot send).
type Clients struct {
	Meta         capi.Sender
	Google       google.Sender
	GoogleTokens google.TokenFunc
}

// All returns every platform, in the order the owner's pages show them.
func All(d platform.Deps, c Clients) []platform.Platform {
	return []platform.Platform{
		capi.NewMeta(c.Meta, d),
		google.NewPlatform(c.Google, c.GoogleTokens, d),
		tiktok.New(d),
	}
}
