package qualify

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// fold lower-cases s with Turkish casing (İ and I both become i, so that
// "İŞ BAŞVURUSU", "iş başvurusu" and "is basvurusu" compare equal) and strips
// the diacritics of the languages we read, so matching tolerates both
// keyboards without Turkish or German letters and people who use them.
func fold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			b.WriteByte(byte(r))
		case r == 'ß':
			b.WriteString("ss")
		case r >= 0x0600 && r <= 0x06FF:
			// Arabic script: diacritics and tatweel dropped, the variant
			// letters written as their plain one, as people type both.
			if a := arabicFold(r); a >= 0 {
				b.WriteRune(a)
			}
		default:
			if f, ok := foldMap[r]; ok {
				b.WriteByte(f)
			} else {
				b.WriteRune(unicode.ToLower(r))
			}
		}
	}
	return b.String()
}

// arabicFold maps a letter of Arabic script to the letter matching reads:
// the alef forms to alef, ta marbuta to ha, alef maqsura and Persian yeh to
// yeh, Persian kaf to kaf; -1 for the diacritics and tatweel.
func arabicFold(r rune) rune {
	switch {
	case r >= 0x064B && r <= 0x065F, r == 0x0670, r == 0x0640:
		return -1
	}
	switch r {
	case 'أ', 'إ', 'آ', 'ٱ':
		return 'ا'
	case 'ة':
		return 'ه'
	case 'ى', 'ی':
		return 'ي'
	case 'ک':
		return 'ك'
	}
	return r
}

// foldMap maps accented and Turkish letters to their plain ASCII letter. It is
// never written after package initialisation.
var foldMap = func() map[rune]byte {
	m := make(map[rune]byte)
	add := func(letters string, to byte) {
		for _, r := range letters {
			m[r] = to
		}
	}
	add("İıÌÍÎÏìíîï", 'i')
	add("ŞşŚśŠš", 's')
	add("ĞğĜĝ", 'g')
	add("ÇçĆćČč", 'c')
	add("ÖöØøÒÓÔÕòóôõŒœ", 'o')
	add("ÜüÙÚÛùúûŪū", 'u')
	add("ÄäÀÁÂÃÅàáâãåĀā", 'a')
	add("ÉéÈèÊêËëĒēĘę", 'e')
	add("Ññ", 'n')
	add("Ýýÿ", 'y')
	add("Łł", 'l')
	add("Žž", 'z')
	return m
}()

// tokens splits folded text into words: runs of letters and digits. An
// apostrophe ends a word, so the Turkish suffix in "CV'mi" or "Google'da"
// becomes a word of its own and the stem still matches.
func tokens(folded string, dst []string) []string {
	start := -1
	for i, r := range folded {
		word := r < utf8.RuneSelf && (('a' <= r && r <= 'z') || ('0' <= r && r <= '9')) ||
			r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r))
		if word {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			dst = append(dst, folded[start:i])
			start = -1
		}
	}
	if start >= 0 {
		dst = append(dst, folded[start:])
	}
	return dst
}

// keyboardRows are the letter rows of QWERTY, QWERTZ, AZERTY and Turkish Q
// keyboards, folded.
var keyboardRows = [...]string{
	"qwertyuiop", "asdfghjkl", "zxcvbnm",
	"qwertzuiop", "yxcvbnm",
	"azertyuiop", "qsdfghjklm", "wxcvbn",
	"qwertyuiopgu", "asdfghjklsi", "zxcvbnmoc",
}

// mash tells why a folded word of Latin letters looks typed without
// meaning, or "": a short unit repeated, or five neighbouring keys of one
// keyboard row. A missing vowel is no sign (GmbH, Szczepański, "mrb").
func mash(w string) string {
	if len(w) < 3 {
		return ""
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			// Digits or letters of other scripts: only a unit said
			// again and again ("لالالالالا", "سيبسيبسيب") is judged
			// here, in any script.
			if c >= utf8.RuneSelf && repeatedRunes(w) {
				return "repeated"
			}
			return ""
		}
	}
	if repeatedUnit(w) {
		return "repeated"
	}
	if keyboardRun(w, 5) {
		return "keyboard"
	}
	return ""
}

// unusual tells whether a word looks typed without meaning by its letters'
// statistics: most of its neighbouring letters are pairs people rarely
// write in the corpus's languages (intent.Model.Unusual). Only words of the
// Latin and Arabic scripts are judged, which the corpus knows well enough.
func (r *Rules) unusual(w string) string {
	if r.intent == nil {
		return ""
	}
	for _, c := range w {
		if c >= utf8.RuneSelf && !unicode.Is(unicode.Latin, c) && !unicode.Is(unicode.Arabic, c) {
			return ""
		}
	}
	if u, _, _ := r.intent.Unusual(w); u {
		return "rare_letters"
	}
	return ""
}

// repeatedUnit reports whether w is one short unit said again and again:
// "aaaa", "asdasd", "hjhjhj".
func repeatedUnit(w string) bool {
	for unit := 1; unit <= 3; unit++ {
		if len(w) < 3*unit || len(w)%unit != 0 {
			continue
		}
		ok := true
		for i := unit; i < len(w); i++ {
			if w[i] != w[i-unit] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// repeatedRunes is repeatedUnit over the letters of any script: one unit
// of one to three letters, said at least three times.
func repeatedRunes(w string) bool {
	var buf [32]rune
	rs := buf[:0]
	for _, c := range w {
		if !unicode.IsLetter(c) || len(rs) == len(buf) {
			return false
		}
		rs = append(rs, c)
	}
	for unit := 1; unit <= 3; unit++ {
		if len(rs) < 3*unit || len(rs)%unit != 0 {
			continue
		}
		ok := true
		for i := unit; i < len(rs); i++ {
			if rs[i] != rs[i-unit] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// rowAdjacent has, for each row of keyboardRows, bit b of entry a set when
// letters a and b sit next to each other on that row; anyAdjacent is their
// union. They are built once and never written afterwards.
var rowAdjacent, anyAdjacent = func() (adj [len(keyboardRows)][26]uint32, union [26]uint32) {
	for r, row := range keyboardRows {
		for i := 1; i < len(row); i++ {
			a, b := row[i-1]-'a', row[i]-'a'
			adj[r][a] |= 1 << b
			adj[r][b] |= 1 << a
		}
		for a := range union {
			union[a] |= adj[r][a]
		}
	}
	return adj, union
}()

// keyboardRun reports whether w (folded letters a-z) holds n or more
// neighbouring keys of one keyboard row in a row, either way: "asdfg",
// "poiuy". Neighbours on different layouts do not chain: "guzer" uses
// three layouts and is a name (Oğuz Erdem).
func keyboardRun(w string, n int) bool {
	// Most words have no such run on any layout: one pass over the union
	// rules them out before the rows are tried one by one.
	if !adjacentRun(&anyAdjacent, w, n) {
		return false
	}
	for r := range rowAdjacent {
		if adjacentRun(&rowAdjacent[r], w, n) {
			return true
		}
	}
	return false
}

// adjacentRun reports whether w holds n or more letters in a row, each next
// to the one before by adj.
func adjacentRun(adj *[26]uint32, w string, n int) bool {
	run := 1
	for i := 1; i < len(w); i++ {
		if adj[w[i-1]-'a']&(1<<(w[i]-'a')) != 0 {
			run++
			if run >= n {
				return true
			}
		} else {
			run = 1
		}
	}
	return false
}
