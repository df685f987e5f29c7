package model

import (
	"testing"
	"time"
)

// TestReadyWaitBuckets: a wait's bucket is its whole tenths of a day (0
// for none or a negative one, a year at most), its Dim round-trips, and
// the median from buckets is MedianDays of the waits rounded down to a
// tenth of a day.
func TestReadyWaitBuckets(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want int
	}{{-time.Hour, 0}, {0, 0}, {2 * time.Hour, 0}, {144 * time.Minute, 1}, {48 * time.Hour, 20}, {3 * 365 * 24 * time.Hour, WaitBuckets}} {
		if got := WaitBucket(c.d); got != c.want {
			t.Errorf("WaitBucket(%v) = %d, want %d", c.d, got, c.want)
		}
	}
	for _, dim := range []string{ReadyWaitDim(KindLead, "Lead", 0), ReadyWaitDim("stage:won", "Purchase|x", 42)} {
		kind, name, b, ok := ParseReadyWaitDim(dim)
		if !ok || ReadyWaitDim(kind, name, b) != dim {
			t.Errorf("%q: %q %q %d %v", dim, kind, name, b, ok)
		}
	}
	if _, _, _, ok := ParseReadyWaitDim("won EUR"); ok {
		t.Error("a dim it did not make parsed")
	}
	for _, waits := range [][]time.Duration{
		{48 * time.Hour, 96 * time.Hour},
		{12 * time.Hour, 12 * time.Hour, 13 * time.Hour},
		{time.Hour, 50 * time.Hour, 30 * 24 * time.Hour, 31 * 24 * time.Hour},
		nil,
	} {
		buckets := map[int]int{}
		rounded := make([]time.Duration, len(waits))
		for i, w := range waits {
			buckets[WaitBucket(w)]++
			rounded[i] = time.Duration(WaitBucket(w)) * WaitTenth
		}
		if got, want := MedianBucketDays(buckets), MedianDays(rounded); got < want-1e-9 || got > want+1e-9 {
			t.Errorf("%v: median from buckets %v, of the rounded waits %v", waits, got, want)
		}
	}
}
