// Package ratelimit owns CleanAds' request limits: token buckets kept in
// memory, one per key (a visitor's address, an API key). Each node limits
// on its own; with several nodes a client may get up to one rate per node.
package ratelimit

import (
	"hash/maphash"
	"sync"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// DefaultMaxKeys bounds how many buckets are kept (about 50 bytes each).
const DefaultMaxKeys = 100_000

// sweepEvery is how often idle buckets are dropped.
const sweepEvery = time.Minute

// Options configure a Limiter; zero values mean the defaults.
type Options struct {
	Now     func() time.Time
	MaxKeys int
}

// Limiter hands out requests from per-key token buckets.
type Limiter struct {
	now     func() time.Time
	maxKeys int

	// epoch is when the Limiter was made: a bucket keeps its last time
	// as the (monotonic) time since, 8 bytes where a time.Time takes 24.
	epoch time.Time

	mu sync.Mutex
	// buckets holds the buckets by their key's 64-bit hash (seeded at
	// random, so no client can pick keys that share a bucket; two of
	// 100,000 keys do by chance once in about 4 billion tables), by value in
	// the map's own slots: under load the table holds a key for each
	// visitor of the last minute (110,000 in bench.sh's collect steps),
	// and a key's text and a bucket of its own were two allocations each.
	// 99 bytes a key before, 50 now (BenchmarkKeyBytes).
	seed      maphash.Seed
	buckets   map[uint64]bucket
	lastSweep time.Time
	untracked int64
}

type bucket struct {
	tokens float64
	last   time.Duration // since the Limiter's epoch
	per    time.Duration // the rate's period: a bucket idle this long is full again
}

// New returns a Limiter.
func New(o Options) *Limiter {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxKeys <= 0 {
		o.MaxKeys = DefaultMaxKeys
	}
	return &Limiter{now: o.Now, maxKeys: o.MaxKeys, epoch: o.Now(), seed: maphash.MakeSeed(), buckets: map[uint64]bucket{}}
}

// Allow takes one request from key's bucket at rate r (r.N requests per
// r.Per, and a burst of r.N). When the bucket is empty it returns false and
// how long until the next request would be allowed. An off rate allows all.
func (l *Limiter) Allow(key string, r model.Rate) (bool, time.Duration) {
	if r.Off() {
		return true, 0
	}
	now := l.now()
	at := now.Sub(l.epoch)
	l.mu.Lock()
	defer l.mu.Unlock()
	h := maphash.String(l.seed, key)
	b, ok := l.buckets[h]
	// A full table is swept at most once a second: under a flood of new
	// keys a sweep per request would cost more than it frees.
	if since := now.Sub(l.lastSweep); !ok && (since >= sweepEvery || len(l.buckets) >= l.maxKeys && since >= time.Second) {
		l.sweep(now)
	}
	if !ok {
		if len(l.buckets) >= l.maxKeys {
			// The table is full of recently active keys: a flood from
			// more addresses than it holds, each sending little. A bucket
			// per address could not stop it, and one shared bucket would
			// refuse every new visitor of a real campaign; so the
			// newcomer passes untracked and memory stays bounded.
			l.untracked++
			return true, 0
		}
		b = bucket{tokens: float64(r.N), last: at}
	}
	b.per = r.Per
	perToken := r.Per / time.Duration(r.N)
	if el := at - b.last; el > 0 {
		b.tokens = min(float64(r.N), b.tokens+float64(el)/float64(perToken))
		b.last = at
	}
	allowed := b.tokens >= 1
	if allowed {
		b.tokens--
	}
	l.buckets[h] = b
	if allowed {
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) * float64(perToken))
	return false, max(wait, time.Millisecond)
}

// sweep drops buckets idle long enough to be full again: forgetting them
// changes nothing, and memory stays bounded by the keys active recently.
func (l *Limiter) sweep(now time.Time) {
	l.lastSweep = now
	at := now.Sub(l.epoch)
	for k, b := range l.buckets {
		if at-b.last >= b.per {
			delete(l.buckets, k)
		}
	}
}

// Untracked returns how many requests passed unlimited because the table
// was full.
func (l *Limiter) Untracked() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.untracked
}

// Len returns how many buckets are kept.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}
