package web

import (
	"slices"
	"testing"

	"github.com/cleanads/cleanads/internal/model"
)

// TestCoverageKeysAreCounted: every key the dashboard and the readiness
// page show the coverage of is one the coverage counters count; a key
// added to a page alone would show 0% however many events carry it.
func TestCoverageKeysAreCounted(t *testing.T) {
	for _, k := range append(append([]matchKey{}, matchKeys...), readinessKeys...) {
		if !slices.Contains(model.CoverageKeys, k.key) {
			t.Errorf("%s is shown but not counted (model.CoverageKeys)", k.key)
		}
	}
}
