package model

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"sync"
	"time"
)

const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

// NewID returns a unique, time-sortable id with a prefix: 48 bits of
// milliseconds and 80 random bits in Crockford base32 (a ULID in lower case),
// e.g. "ld_01hx...".
func NewID(prefix string, now time.Time) string {
	return encodeID(prefix, timeFirst(now))
}

// timeFirst returns 48 bits of now's milliseconds, big-endian, then 80
// random bits: the layout of NewID and of a version 7 UUID.
func timeFirst(now time.Time) [16]byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.UnixMilli())<<16)
	rand.Read(b[6:])
	return b
}

// IDGen makes ids like NewID that also sort in the order they were made
// within one millisecond (the random part is incremented), so entries
// written in one transaction keep their order. Safe for concurrent use.
type IDGen struct {
	mu     sync.Mutex
	lastMS int64
	last   [16]byte
}

// New returns the next id.
func (g *IDGen) New(prefix string, now time.Time) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	ms := now.UnixMilli()
	if ms <= g.lastMS {
		// Same (or an earlier) millisecond: count up from the last id.
		for i := 15; i >= 6; i-- {
			g.last[i]++
			if g.last[i] != 0 {
				break
			}
		}
		return encodeID(prefix, g.last)
	}
	g.lastMS = ms
	binary.BigEndian.PutUint64(g.last[:8], uint64(ms)<<16)
	rand.Read(g.last[6:])
	g.last[6] &= 0x7f // room to count up without carrying into the time
	return encodeID(prefix, g.last)
}

// encodeID writes 128 bits as 26 Crockford base32 digits after prefix.
func encodeID(prefix string, b [16]byte) string {
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	var out [26]byte
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return prefix + string(out[:])
}

// NewUUID returns a random (version 4) UUID, the form Meta and the browser
// use for event ids.
func NewUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return FormatUUID(b)
}

// NewUUIDv7 returns a time-ordered (version 7) UUID: 48 bits of
// milliseconds, then random bits. Event ids the server mints are of this
// kind: the unique indexes that hold them then grow at their end, where a
// random id would dirty a page of its own in every commit.
func NewUUIDv7(now time.Time) string {
	b := timeFirst(now)
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	return FormatUUID(b)
}

// FormatUUID writes 16 bytes in the 8-4-4-4-12 hex form of a UUID; the
// caller sets the version and variant bits.
func FormatUUID(b [16]byte) string {
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}
