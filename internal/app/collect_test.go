package app

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

func TestNextFBC(t *testing.T) {
	t0 := time.UnixMilli(1796205600123).UTC()
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	fbc := func(d time.Duration, click string) string { return "fb.1." + itoa(at(d).UnixMilli()) + "." + click }
	cases := []struct {
		name          string
		cur           string
		curAt         time.Time
		fbclid, pixel string
		now           time.Time
		want          string
		wantAt        time.Time
	}{
		{"nothing", "", time.Time{}, "", "", t0, "", time.Time{}},
		{"first click minted", "", time.Time{}, "AAA", "", t0, fbc(0, "AAA"), t0},
		{"same click keeps first time", fbc(0, "AAA"), t0, "AAA", "", at(time.Hour), fbc(0, "AAA"), t0},
		{"no click keeps it", fbc(0, "AAA"), t0, "", "", at(time.Hour), fbc(0, "AAA"), t0},
		{"new click replaces", fbc(0, "AAA"), t0, "BBB", "", at(time.Hour), fbc(time.Hour, "BBB"), at(time.Hour)},
		{"pixel when we have none", "", time.Time{}, "", fbc(-time.Hour, "PIX"), t0, fbc(-time.Hour, "PIX"), at(-time.Hour)},
		{"pixel's value for the same new click", "", time.Time{}, "PIX", fbc(-time.Second, "PIX"), t0, fbc(-time.Second, "PIX"), at(-time.Second)},
		{"pixel's newer click", fbc(0, "AAA"), t0, "", fbc(time.Hour, "NEW"), at(2 * time.Hour), fbc(time.Hour, "NEW"), at(time.Hour)},
		{"pixel's older click loses", fbc(0, "AAA"), t0, "", fbc(-time.Hour, "OLD"), at(time.Hour), fbc(0, "AAA"), t0},
		{"pixel's copy of ours", fbc(0, "AAA"), t0, "", fbc(time.Minute, "AAA"), at(time.Hour), fbc(0, "AAA"), t0},
		{"pixel value in seconds ignored", "", time.Time{}, "", "fb.1.1796205600.PIX", t0, "", time.Time{}},
		{"pixel value from the future ignored", "", time.Time{}, "", fbc(time.Hour, "PIX"), t0, "", time.Time{}},
		{"fbclid that a cookie would alter ignored", "", time.Time{}, "a b;c", "", t0, "", time.Time{}},
		{"a builder appendix is the same click", "fb.1." + itoa(t0.UnixMilli()) + ".AAA.Ab", t0, "AAA", "", at(time.Hour), "fb.1." + itoa(t0.UnixMilli()) + ".AAA.Ab", t0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, gotAt := nextFBC(c.cur, c.curAt, c.fbclid, c.pixel, c.now)
			if got != c.want || !gotAt.Equal(c.wantAt) {
				t.Errorf("nextFBC = %q at %v, want %q at %v", got, gotAt, c.want, c.wantAt)
			}
		})
	}
}

func TestNextFBP(t *testing.T) {
	now := time.UnixMilli(1796205600123)
	if got := nextFBP("fb.1.1796205000000.1", "fb.1.1796205000001.2", now); got != "fb.1.1796205000000.1" {
		t.Errorf("ours is kept: %q", got)
	}
	if got := nextFBP("", "fb.1.1796205000001.2", now); got != "fb.1.1796205000001.2" {
		t.Errorf("the pixel's is taken: %q", got)
	}
	a, b := nextFBP("", "", now), nextFBP("", "junk", now)
	if a == b || a[:19] != "fb.1.1796205600123." || b[:19] != "fb.1.1796205600123." {
		t.Errorf("minted: %q %q", a, b)
	}
}

func TestMayQueueLead(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		consent string
		given   *bool
		want    bool
	}{
		{model.ConsentImplied, nil, true},
		{model.ConsentImplied, &yes, true},
		{model.ConsentImplied, &no, false},
		{"", nil, true},
		{model.ConsentRequired, nil, false},
		{model.ConsentRequired, &no, false},
		{model.ConsentRequired, &yes, true},
	} {
		site := &model.Site{Settings: model.SiteSettings{Consent: c.consent}}
		if got := mayQueueLead(site, &model.Lead{Consent: c.given}); got != c.want {
			t.Errorf("consent %q, given %v: %v, want %v", c.consent, c.given, got, c.want)
		}
	}
}

// The token's MAC is HMAC-SHA256 over its fields, whichever key signed
// before: an HMAC kept for reuse signs as a fresh one does, so tokens issued
// before (or by another node) still check.
func TestTokenMACReused(t *testing.T) {
	s := New(Options{})
	keys := [][]byte{[]byte("0123456789abcdef0123456789abcdef"), []byte("another key of thirty-two bytes!")}
	for i := range 6 {
		key := keys[i%2]
		m := hmac.New(sha256.New, key)
		m.Write([]byte("t1\x00dent\x00v_x\x00" + strconv.Itoa(i) + "\x00nonce"))
		want := base64.RawURLEncoding.EncodeToString(m.Sum(nil))
		for range 2 {
			if got := s.tokenMAC(key, "dent", "v_x", strconv.Itoa(i), "nonce"); got != want {
				t.Fatalf("use %d: MAC %s, want %s", i, got, want)
			}
		}
	}
}

func TestTokenRoundTrip(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	s := New(Options{})
	now := time.UnixMilli(1796205600123)
	tok := s.issueToken(key, "dent", "v_01hx0000000000000000000000", now)
	ft, ok := s.parseToken(key, "dent", tok)
	if !ok || ft.visitor != "v_01hx0000000000000000000000" || !ft.issued.Equal(now) || len(ft.nonce) != 22 {
		t.Fatalf("round trip: %+v %v", ft, ok)
	}
	if _, ok := s.parseToken(key, "other", tok); ok {
		t.Errorf("a token of dent passed for other")
	}
	if _, ok := s.parseToken([]byte("another key of thirty-two bytes!"), "dent", tok); ok {
		t.Errorf("a token passed under another key")
	}
	if a, b := s.issueToken(key, "dent", "", now), s.issueToken(key, "dent", "", now); a == b {
		t.Errorf("two tokens share a nonce")
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestVisitorChanged(t *testing.T) {
	t0 := time.UnixMilli(1796205600123).UTC()
	yes, no := true, false
	was := model.Visitor{ID: "v_1", FBC: "fb.1.1.A", FBCAt: t0, FBP: "fb.1.1.2", Consent: &yes, LastSeen: t0,
		LastIP: "203.0.113.9", LastUserAgent: "UA"}
	cases := []struct {
		name string
		edit func(v *model.Visitor)
		want bool
	}{
		{"nothing new", func(v *model.Visitor) {}, false},
		{"another page within the hour", func(v *model.Visitor) { v.LastSeen = t0.Add(59 * time.Minute) }, false},
		{"another address and agent within the hour", func(v *model.Visitor) { v.LastIP, v.LastUserAgent = "198.51.100.7", "UA2" }, false},
		{"an hour later", func(v *model.Visitor) { v.LastSeen = t0.Add(time.Hour) }, true},
		{"a new click", func(v *model.Visitor) { v.FBC, v.FBCAt = "fb.1.2.B", t0.Add(time.Minute) }, true},
		{"the click's time only", func(v *model.Visitor) { v.FBCAt = t0.Add(time.Second) }, true},
		{"a new fbp", func(v *model.Visitor) { v.FBP = "fb.1.1.3" }, true},
		{"consent withdrawn", func(v *model.Visitor) { v.Consent = &no }, true},
		{"consent forgotten", func(v *model.Visitor) { v.Consent = nil }, true},
		{"same consent, another pointer", func(v *model.Visitor) { y := true; v.Consent = &y }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := was
			c.edit(&v)
			if got := visitorChanged(&was, &v); got != c.want {
				t.Errorf("visitorChanged = %v, want %v", got, c.want)
			}
		})
	}
	if !visitorChanged(&model.Visitor{}, &was) {
		t.Error("a new visitor (no id before) must be written")
	}
}
