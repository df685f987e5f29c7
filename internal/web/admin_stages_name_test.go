package web

import (
	"regexp"
	"strings"
	"testing"
)

// TestValidStageNameIsThePattern checks validStageName against the regexp
// it replaced, on names at and around its limits, in several scripts, with
// every allowed and some refused characters, and on invalid UTF-8.
func TestValidStageNameIsThePattern(t *testing.T) {
	pattern := regexp.MustCompile(`^[\p{L}\p{N}][\p{L}\p{N} _.-]{0,39}$`)
	names := []string{"", " ", "a", "meeting", "Meeting 2", "won_deal", "v1.2", "a-b", "-a", "_a", ".a", " a", "a ",
		"görüşme", "встреча", "会議", "موعد", "٣", "Ⅻ", "½", "a\tb", "a\nb", "a/b", "a,b", "a;b", "a\"b", "a'b", "a+b",
		"a\u00a0b", "a\u200bb", "\xff", "a\xffb", "a\ufffd", "😀", "a😀", strings.Repeat("ş", 40), strings.Repeat("ş", 41)}
	for _, base := range []string{"a", "ş", "1", "会"} {
		for n := 38; n <= 42; n++ {
			names = append(names, strings.Repeat(base, n), base+strings.Repeat(" ", n-1), base+strings.Repeat("-", n-1)+"\n")
		}
	}
	for r := rune(0); r < 0x3100; r += 7 {
		names = append(names, string(r), "a"+string(r), string(r)+"a")
	}
	for _, name := range names {
		if got, want := validStageName(name), pattern.MatchString(name); got != want {
			t.Errorf("validStageName(%q) = %v, the pattern says %v", name, got, want)
		}
	}
}
