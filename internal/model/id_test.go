package model

import (
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
