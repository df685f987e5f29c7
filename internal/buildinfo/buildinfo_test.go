package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"},
		{Key: "vcs.time", Value: "2026-12-03T16:00:00Z"}, {Key: "vcs.modified", Value: "true"}}
	for _, tc := range []struct {
		name, version, override string
		settings                []debug.BuildSetting
		short, line             string
	}{
		{"release", "v1.2.3", "", nil, "v1.2.3", "cleanads v1.2.3 built with go1.26.8"},
		{"pseudo with vcs", "v0.0.0-20261203160000-0123456789ab+dirty", "", vcs, "v0.0.0-20261203160000-0123456789ab+dirty",
			"cleanads v0.0.0-20261203160000-0123456789ab+dirty (commit 0123456789ab, 2026-12-03T16:00:00Z, uncommitted changes) built with go1.26.8"},
		{"devel with vcs", "(devel)", "", vcs, "devel-0123456789ab+dirty", "cleanads devel-0123456789ab+dirty (commit"},
		{"devel bare", "", "", nil, "devel", "cleanads devel built with"},
		{"stamped at link time", "(devel)", "v2.0.0", nil, "v2.0.0", "cleanads v2.0.0 built"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := fromBuildInfo(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: tc.version}, Settings: tc.settings}, tc.override)
			if in.Short() != tc.short {
				t.Errorf("Short = %q, want %q", in.Short(), tc.short)
			}
			if !strings.HasPrefix(in.String(), tc.line) {
				t.Errorf("String = %q, want it to start with %q", in.String(), tc.line)
			}
		})
	}
}

func TestReadInTests(t *testing.T) {
	in := Read()
	if in.GoVersion == "" || in.Short() == "" {
		t.Errorf("Read() = %+v: want a Go version and a version", in)
	}
}
