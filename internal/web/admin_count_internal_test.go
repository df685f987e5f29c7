package web

import (
	"testing"

	"github.com/cleanads/cleanads/internal/store"
)

// TestCountShowsTheCap: a delivery count the store stopped counting
// (store.CountCap+1) reads "10000+"; the others as they are.
func TestCountShowsTheCap(t *testing.T) {
	count := (&adminUI{}).funcs("en")["count"].(func(int) string)
	for n, want := range map[int]string{0: "0", 42: "42", store.CountCap: "10000", store.CountCap + 1: "10000+"} {
		if got := count(n); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
}
