package platform

import (
	"log/slog"
	"net/http"
	"time"
)

// Deps are what the program gives every platform's constructor
// (func New(platform.Deps) platform.Platform).
type Deps struct {
	// HTTP is the client for the platform's API; nil means the platform's
	// own with its own timeouts.
	HTTP *http.Client
	// Endpoints override a platform's API address by platform name: the
	// tests' local stand-ins, a proxy.
	Endpoints map[string]string
	Logger    *slog.Logger
	Now       func() time.Time
}

// Endpoint returns the overridden address of the named platform's API, or
// def.
func (d Deps) Endpoint(name, def string) string {
	if v := d.Endpoints[name]; v != "" {
		return v
	}
	return def
}

// Clock returns d.Now, or time.Now when unset.
func (d Deps) Clock() func() time.Time {
	if d.Now == nil {
		return time.Now
	}
	return d.Now
}

// Log returns d.Logger, or a logger that discards.
func (d Deps) Log() *slog.Logger {
	if d.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.Logger
}
