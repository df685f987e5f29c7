package model

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestIDGenSortsInOrderMade(t *testing.T) {
	var g IDGen
	now := time.Now()
	var ids []string
	for i := 0; i < 1000; i++ {
		ids = append(ids, g.New("h_", now))
	}
	ids = append(ids, g.New("h_", now.Add(time.Millisecond)), g.New("h_", now.Add(-time.Hour)))
	if !sort.StringsAreSorted(ids) {
		t.Error("ids made in order do not sort in order")
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] || len(id) != 28 || !strings.HasPrefix(id, "h_") {
			t.Fatalf("bad or repeated id %q", id)
		}
		seen[id] = true
	}
	if a, b := NewID("x", now), NewID("x", now.Add(time.Millisecond)); a >= b {
		t.Errorf("NewID does not sort by time: %s %s", a, b)
	}
}

func TestNewUUID(t *testing.T) {
	u := NewUUID()
	if len(u) != 36 || u[14] != '4' || !strings.Contains("89ab", string(u[19])) || u == NewUUID() {
		t.Errorf("not a v4 UUID: %s", u)
	}
}

func TestNewUUIDv7(t *testing.T) {
	t0 := time.UnixMilli(1796205600123)
	u := NewUUIDv7(t0)
	if len(u) != 36 || u[14] != '7' || !strings.Contains("89ab", string(u[19])) || u == NewUUIDv7(t0) {
		t.Errorf("not a v7 UUID: %s", u)
	}
	if got, want := strings.ReplaceAll(u, "-", "")[:12], fmt.Sprintf("%012x", t0.UnixMilli()); got != want {
		t.Errorf("%s does not start with the time: %s", u, got)
	}
	// Later ids sort after earlier ones: the point of version 7.
	if later := NewUUIDv7(t0.Add(time.Millisecond)); later <= u {
		t.Errorf("%s (a millisecond later) sorts before %s", later, u)
	}
}
