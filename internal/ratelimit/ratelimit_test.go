package ratelimit_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/ratelimit"
	"github.com/cleanads/cleanads/internal/testkit"
)

func newClock() *testkit.Clock {
	return testkit.NewClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
}
func rate(n int, per time.Duration) model.Rate { return model.Rate{N: n, Per: per} }

func TestBurstThenRate(t *testing.T) {
	c := newClock()
	l := ratelimit.New(ratelimit.Options{Now: c.Now})
	r := rate(60, time.Minute)
	for i := 0; i < 60; i++ {
		if ok, _ := l.Allow("ip:1", r); !ok {
			t.Fatalf("request %d of the burst refused", i)
		}
	}
	ok, wait := l.Allow("ip:1", r)
	if ok || wait != time.Second {
		t.Fatalf("61st: %v, wait %v", ok, wait)
	}
	if ok, _ := l.Allow("ip:2", r); !ok {
		t.Errorf("another key was limited")
	}
	c.Add(500 * time.Millisecond)
	if ok, wait := l.Allow("ip:1", r); ok || wait != 500*time.Millisecond {
		t.Errorf("after half a token: %v %v", ok, wait)
	}
	c.Add(500 * time.Millisecond)
	if ok, _ := l.Allow("ip:1", r); !ok {
		t.Errorf("a refilled token was refused")
	}
	if ok, _ := l.Allow("ip:1", rate(0, 0)); !ok {
		t.Errorf("an off rate refused")
	}
}

func TestIdleSweepBoundsMemory(t *testing.T) {
	c := newClock()
	l := ratelimit.New(ratelimit.Options{Now: c.Now, MaxKeys: 100})
	r := rate(10, time.Minute)
	for i := 0; i < 50; i++ {
		l.Allow(fmt.Sprint("ip:", i), r)
	}
	if l.Len() != 50 {
		t.Fatalf("len %d", l.Len())
	}
	c.Add(time.Minute)
	l.Allow("ip:new", r)
	if l.Len() != 1 {
		t.Errorf("idle buckets kept: %d", l.Len())
	}
	// A flood of distinct keys: the table stops at its bound; newcomers
	// beyond it pass untracked, while the keys it holds stay limited.
	for i := 0; i < 1000; i++ {
		if ok, _ := l.Allow(fmt.Sprint("flood:", i), r); !ok {
			t.Fatalf("a newcomer of the flood was refused")
		}
	}
	if l.Len() != 100 || l.Untracked() != 901 {
		t.Errorf("table %d, untracked %d", l.Len(), l.Untracked())
	}
	for i := 0; i < 9; i++ {
		l.Allow("ip:new", r)
	}
	if ok, _ := l.Allow("ip:new", r); ok {
		t.Errorf("a tracked key escaped its limit while the table was full")
	}
}

// BenchmarkKeyBytes reports the heap a full table holds for each key: the
// buckets of the visitors of the last minute stay in memory under load
// (110,000 of them after bench.sh's collect and leads steps).
func BenchmarkKeyBytes(b *testing.B) {
	keys := make([]string, keysForBench)
	for i := range keys {
		keys[i] = fmt.Sprintf("ip:10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
	}
	r := rate(60, time.Minute)
	var perKey float64
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		l := ratelimit.New(ratelimit.Options{})
		for _, k := range keys {
			l.Allow(string([]byte(k)), r) // a key of its own, as a request's
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perKey = float64(after.HeapAlloc-before.HeapAlloc) / float64(len(keys))
		runtime.KeepAlive(l)
	}
	b.ReportMetric(perKey, "B/key")
}

// keysForBench is how many keys BenchmarkKeyBytes puts in the table.
const keysForBench = 100_000
