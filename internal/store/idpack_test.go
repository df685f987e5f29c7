package store

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// TestPackIDRoundTrip: every id the code mints packs to 17 bytes and reads
// back as the same string; ids of one kind sort packed as they did as
// text, and the prefixed kinds in the order of their prefixes (UUIDs,
// whose text may begin with any hex digit, sort before them all).
func TestPackIDRoundTrip(t *testing.T) {
	var g model.IDGen
	at := time.Date(2026, 12, 7, 15, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 200 {
		now := at.Add(time.Duration(i%7) * time.Millisecond)
		for _, p := range idPrefixes[1:] {
			ids = append(ids, g.New(p, now), model.NewID(p, now))
		}
		ids = append(ids, model.NewUUID(), model.NewUUIDv7(now))
	}
	ids = append(ids, "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
		"ld_00000000000000000000000000", "ld_7zzzzzzzzzzzzzzzzzzzzzzzzz")
	packed := make(map[string][]byte)
	for _, id := range ids {
		b, ok := packID(id)
		if !ok || len(b) != 17 {
			t.Fatalf("%q: packed %x, %v", id, b, ok)
		}
		if s, ok := unpackID(b); !ok || s != id {
			t.Fatalf("%q: packed %x, read back %q %v", id, b, s, ok)
		}
		packed[id] = b
	}
	var uuids, prefixed []string
	for _, id := range ids {
		if len(id) == 36 {
			uuids = append(uuids, id)
		} else {
			prefixed = append(prefixed, id)
		}
	}
	for _, kind := range [][]string{uuids, prefixed} {
		byText := slices.Clone(kind)
		slices.Sort(byText)
		byPacked := slices.Clone(kind)
		slices.SortFunc(byPacked, func(a, b string) int { return bytes.Compare(packed[a], packed[b]) })
		if !slices.Equal(byText, byPacked) {
			t.Errorf("the packed ids do not sort as their text: %d ids of %d", len(kind), len(ids))
		}
	}
	if bytes.Compare(packed[uuids[0]], packed[prefixed[0]]) >= 0 {
		t.Error("a UUID sorts after a prefixed id")
	}
}

// TestPackIDLeavesOtherText: what is not a canonical id stays text, so
// that each string has one stored form.
func TestPackIDLeavesOtherText(t *testing.T) {
	uuid := model.NewUUID()
	id := model.NewID("ld_", time.Now())
	for _, s := range []string{"", "ld_1", "d_0001", "e_d_0001", "erased-" + id, "st-" + id,
		strings.ToUpper(uuid), "LD_" + id[3:], "ld_" + strings.ToUpper(id[3:]),
		"ld_8" + id[4:],                         // 130 bits: more than 128
		"ld_i" + id[4:], "ld_" + id[3:28] + "u", // not Crockford's lower-case digits
		"zz_" + id[3:], "ld_" + id[3:] + "0", id[:28],
		strings.ReplaceAll(uuid, "-", "_"), uuid[:35] + "g", "{" + uuid[1:35] + "}",
		"leadads-123456789012345678", "hello world, this is thirty-six ch",
	} {
		if b, ok := packID(s); ok {
			t.Errorf("%q packed as %x", s, b)
		}
	}
	// A 17-byte blob that is not a packed id reads as it is.
	for _, b := range [][]byte{[]byte(`{"a":1,"b":"xyz"}`), append([]byte{0}, make([]byte, 16)...), append([]byte{byte(len(idPrefixes) + 1)}, make([]byte, 16)...)} {
		if s, ok := unpackID(b); ok {
			t.Errorf("%x read as %q", b, s)
		}
	}
}
