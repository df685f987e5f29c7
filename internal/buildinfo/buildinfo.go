// Package buildinfo owns what a cleanads binary knows about itself: the
// module version, the commit and time it was built from, whether the tree
// had uncommitted changes, and the Go version, all read from the build
// information the Go toolchain embeds (runtime/debug.ReadBuildInfo).
// Standard library only.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// stamped overrides the module version when set at link time, for builds
// made where the toolchain cannot see the version control (an image built
// without .git): go build -ldflags "-X github.com/cleanads/cleanads/internal/buildinfo.stamped=v1.2.3".
var stamped string

// Info is what the binary was built from.
type Info struct {
	// Version is the module version ("v1.2.3", a pseudo-version
	// "v0.0.0-20261203161500-abcdef123456", with "+dirty" when the tree had
	// changes), or "(devel)" when the toolchain knew none.
	Version   string
	Revision  string // the commit, empty when unknown
	Time      string // the commit's time (RFC 3339), empty when unknown
	Dirty     bool   // uncommitted changes in the tree it was built from
	GoVersion string
}

// Read returns the running binary's Info.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: "(devel)"}
	}
	return fromBuildInfo(bi, stamped)
}

func fromBuildInfo(bi *debug.BuildInfo, override string) Info {
	in := Info{Version: bi.Main.Version, GoVersion: bi.GoVersion}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.time":
			in.Time = s.Value
		case "vcs.modified":
			in.Dirty = s.Value == "true"
		}
	}
	if override != "" {
		in.Version = override
	}
	if in.Version == "" {
		in.Version = "(devel)"
	}
	return in
}

// Short is the version as one word, for logs and the database: the module
// version, or, for a development build, "devel" with the commit when known.
func (in Info) Short() string {
	if in.Version != "(devel)" {
		return in.Version
	}
	if in.Revision == "" {
		return "devel"
	}
	s := "devel-" + shortRev(in.Revision)
	if in.Dirty {
		s += "+dirty"
	}
	return s
}

// String is the line "cleanads version" prints.
func (in Info) String() string {
	var b strings.Builder
	b.WriteString("cleanads " + in.Short())
	if in.Revision != "" {
		b.WriteString(" (commit " + shortRev(in.Revision))
		if in.Time != "" {
			b.WriteString(", " + in.Time)
		}
		if in.Dirty {
			b.WriteString(", uncommitted changes")
		}
		b.WriteString(")")
	}
	b.WriteString(" built with " + in.GoVersion)
	return b.String()
}

func shortRev(r string) string {
	if len(r) > 12 {
		return r[:12]
	}
	return r
}
