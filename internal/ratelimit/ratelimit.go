// Package ratelimit owns CleanAds' request limits: token buckets kept in
// memory, one per key (a visitor's address, an API key). Each node limits
// on its own; with several nodes a client may get up to one rate per node.
package ratelimit

import (
	"sync"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// DefaultMaxKeys bounds how many buckets are kept (about 100 bytes each).
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

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
	untracked int64
}

type bucket struct {
	tokens float64
	last   time.Time
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
	return &Limiter{now: o.Now, maxKeys: o.MaxKeys, buckets: map[string]*bucket{}}
}

// Allow takes one request from key's bucket at rate r (r.N requests per
// r.Per, and a burst of r.N). When the bucket is empty it returns false and
// how long until the next request would be allowed. An off rate allows all.
func (l *Limiter) Allow(key string, r model.Rate) (bool, time.Duration) {
	if r.Off() {
		return true, 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	// A full table is swept at most once a second: under a flood of new
	// keys a sweep per request would cost more than it frees.
	if since := now.Sub(l.lastSweep); b == nil && (since >= sweepEvery || len(l.buckets) >= l.maxKeys && since >= time.Second) {
		l.sweep(now)
	}
	if b == nil {
		if len(l.buckets) >= l.maxKeys {
			// The table is full of recently active keys: a flood from
			// more addresses than it holds, each sending little. A bucket
			// per address could not stop it, and one shared bucket would
			// refuse every new visitor of a real campaign; so the
			// newcomer passes untracked and memory stays bounded.
			l.untracked++
			return true, 0
		}
		b = &bucket{tokens: float64(r.N), last: now}
		l.buckets[key] = b
	}
	b.per = r.Per
	perToken := r.Per / time.Duration(r.N)
	if el := now.Sub(b.last); el > 0 {
		b.tokens = min(float64(r.N), b.tokens+float64(el)/float64(perToken))
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) * float64(perToken))
	return false, max(wait, time.Millisecond)
}

// sweep drops buckets idle long enough to be full again: forgetting them
// changes nothing, and memory stays bounded by the keys active recently.
func (l *Limiter) sweep(now time.Time) {
	l.lastSweep = now
	for k, b := range l.buckets {
		if now.Sub(b.last) >= b.per {
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
