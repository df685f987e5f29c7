package intent

import (
	"unicode"
	"unicode/utf8"
)

// The feature space: every feature is hashed into one of Buckets rows.
const (
	bucketBits = 18
	// Buckets is how many rows of weights the model has.
	Buckets = 1 << bucketBits
	// maxWords bounds the words read from one message.
	maxWords = 160
	minGram  = 2
	maxGram  = 5
)

// Feature kinds, hashed in front of a feature's bytes so that the word "ab"
// and the character pair "ab" are different features.
const (
	kindWord   = 'w'
	kindPair   = 'p'
	kindGram   = 'g'
	kindLength = 'l'
	kindShape  = 's'
	kindCross  = 'x'
	kindStart  = '^'
)

// word is one word of a message: its normalised form and where it stands
// in the text as typed, for the evidence.
type word struct {
	// norm is buf[ns:ne] of the buffer the words were split into.
	ns, ne     int
	start, end int
}

// feature is one hashed feature and the words it belongs to (-1: the text
// as a whole), for the evidence.
type feature struct {
	h    uint32
	a, b int16
}

// Digits folds every decimal digit of any script (Arabic-Indic, Persian,
// Devanagari, full-width, ...) to its ASCII digit, leaving everything else as
// it is; text without such digits comes back unchanged.
func Digits(s string) string {
	ascii := true
	for _, r := range s {
		if r >= utf8.RuneSelf && unicode.IsDigit(r) {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if d, ok := digitValue(r); ok {
			b = append(b, byte('0'+d))
			continue
		}
		b = utf8.AppendRune(b, r)
	}
	return string(b)
}

// digitValue returns the value of a decimal digit of any script.
func digitValue(r rune) (int, bool) {
	if '0' <= r && r <= '9' {
		return int(r - '0'), true
	}
	if r < utf8.RuneSelf || !unicode.IsDigit(r) {
		return 0, false
	}
	// Unicode puts every script's decimal digits in runs of ten, each run
	// starting at its zero.
	for _, rg := range unicode.Nd.R16 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10, true
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10, true
		}
	}
	return 0, false
}

// foldRune maps one rune of a message to what the model reads: lower case
// with Turkish casing (İ and I both i), diacritics of Latin letters dropped,
// the variant letters of Arabic script unified (alef forms, ta marbuta,
// alef maqsura, Persian yeh and kaf), every digit 0. It returns -1 for a rune
// the model ignores (Arabic diacritics, tatweel, joiners).
func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		switch {
		case 'A' <= r && r <= 'Z':
			return r + 'a' - 'A'
		case '0' <= r && r <= '9':
			return '0'
		}
		return r
	}
	if f, ok := latinFold[r]; ok {
		return f
	}
	switch {
	case unicode.IsDigit(r):
		return '0'
	case r >= 0x064B && r <= 0x065F, r == 0x0670, r == 0x0640, r == 0x200C, r == 0x200D, r == 0x200E, r == 0x200F:
		return -1
	}
	switch r {
	case 'أ', 'إ', 'آ', 'ٱ':
		return 'ا'
	case 'ة':
		return 'ه'
	case 'ى', 'ی', 'ئ':
		return 'ي'
	case 'ؤ':
		return 'و'
	case 'ک':
		return 'ك'
	case 'ß':
		return 's'
	}
	if unicode.Is(unicode.Mn, r) {
		return -1
	}
	return unicode.ToLower(r)
}

// latinFold maps accented and Turkish letters to their plain letter. It is
// built once and never written afterwards.
var latinFold = func() map[rune]rune {
	m := make(map[rune]rune)
	add := func(letters string, to rune) {
		for _, r := range letters {
			m[r] = to
		}
	}
	add("İıÌÍÎÏìíîïĪī", 'i')
	add("ŞşŚśŠšȘș", 's')
	add("ĞğĜĝ", 'g')
	add("ÇçĆćČč", 'c')
	add("ÖöØøÒÓÔÕòóôõŌō", 'o')
	add("ÜüÙÚÛùúûŪūŮů", 'u')
	add("ÄäÀÁÂÃÅàáâãåĀāĄą", 'a')
	add("ÉéÈèÊêËëĒēĘęĚě", 'e')
	add("ÑñŃńŇň", 'n')
	add("ÝýÿŸ", 'y')
	add("Łł", 'l')
	add("ŽžŹźŻż", 'z')
	add("Ťť", 't')
	add("Řř", 'r')
	add("Ďď", 'd')
	return m
}()

// isWordRune reports whether r belongs to a word: letters, digits and
// combining marks of any script.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || r == 0x200C || r == 0x200D
}

// isSymbolRune reports whether r is a word on its own: an emoji or other
// symbol, which people do type as their whole message.
func isSymbolRune(r rune) bool {
	return r >= utf8.RuneSelf && (unicode.IsSymbol(r) || unicode.Is(unicode.Co, r)) && r != 0xFE0F
}

// splitWords appends the words of text to dst: runs of word runes, each
// symbol alone; an apostrophe or a hyphen ends a word, so a Turkish suffix
// after an apostrophe is a word of its own.
func splitWords(text string, buf []byte, dst []word) ([]word, []byte) {
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		if len(dst) < maxWords {
			from := len(buf)
			for _, r := range text[start:end] {
				if f := foldRune(r); f >= 0 {
					buf = utf8.AppendRune(buf, f)
				}
			}
			if len(buf) > from {
				dst = append(dst, word{ns: from, ne: len(buf), start: start, end: end})
			}
		}
		start = -1
	}
	for i, r := range text {
		switch {
		case isWordRune(r):
			if start < 0 {
				start = i
			}
		case isSymbolRune(r):
			flush(i)
			if len(dst) < maxWords {
				from := len(buf)
				buf = utf8.AppendRune(buf, r)
				dst = append(dst, word{ns: from, ne: len(buf), start: i, end: i + utf8.RuneLen(r)})
			}
		default:
			flush(i)
		}
	}
	flush(len(text))
	return dst, buf
}

// fnv-1a, 32 bits.
const (
	fnvOffset = 2166136261
	fnvPrime  = 16777619
)

func hashByte(h uint32, c byte) uint32 { return (h ^ uint32(c)) * fnvPrime }

func hashString(h uint32, s []byte) uint32 {
	for _, c := range s {
		h = (h ^ uint32(c)) * fnvPrime
	}
	return h
}

func bucket(h uint32) uint32 {
	// Fold the high bits in: FNV's low bits alone mix poorly.
	return (h ^ h>>bucketBits) & (Buckets - 1)
}

// extract appends the features of words to dst: each word, each pair of
// neighbouring words, the first word and the first two words as the start
// of the message (pitches and applications open alike in every language:
// "could we", "wir sind", "somos", "je suis"), the character n-grams (2 to 5 letters) of each word
// with its boundaries marked, the n-grams (3 to 5) across the boundary of
// each pair of neighbouring words, the length of the message in words, and the
// shape of the text (how many words have no vowel-like letter, how many are
// digits), which is how keyboard mash shows.
func extract(words []word, buf []byte, dst []feature) []feature {
	var runeStart [64]int
	var gramBuf [256]byte
	for i, w := range words {
		wi := int16(i)
		norm := buf[w.ns:w.ne]
		h := hashString(hashByte(fnvOffset, kindWord), norm)
		dst = append(dst, feature{h: bucket(h), a: wi, b: wi})
		if i > 0 {
			p := words[i-1]
			h := hashByte(hashString(hashByte(fnvOffset, kindPair), buf[p.ns:p.ne]), ' ')
			h = hashString(h, norm)
			dst = append(dst, feature{h: bucket(h), a: wi - 1, b: wi})
		}
		if i > 0 {
			dst = crossGrams(words[i-1], w, buf, int16(i), dst)
		}
		if i < 2 {
			// How the message starts: "could we", "wir sind", "somos".
			h := hashString(hashByte(fnvOffset, kindStart), norm)
			if i == 1 {
				h = hashString(hashByte(hashString(hashByte(fnvOffset, kindStart), buf[words[0].ns:words[0].ne]), ' '), norm)
			}
			dst = append(dst, feature{h: bucket(h), a: 0, b: wi})
		}
		// "<word>" in runes: the marks count as one rune each.
		s := append(append(append(gramBuf[:0], '<'), norm...), '>')
		n := 0
		for j := 0; j < len(s) && n < len(runeStart); {
			runeStart[n] = j
			n++
			_, size := utf8.DecodeRune(s[j:])
			j += size
		}
		if n == len(runeStart) {
			n-- // a very long word: its tail is not read
		}
		runeStart[n] = len(s)
		if n <= 3 {
			continue // one letter: the word itself says it all
		}
		for g := minGram; g <= maxGram; g++ {
			for j := 0; j+g <= n; j++ {
				h := hashString(hashByte(fnvOffset, kindGram), s[runeStart[j]:runeStart[j+g]])
				dst = append(dst, feature{h: bucket(h), a: wi, b: wi})
			}
		}
	}
	dst = append(dst, feature{h: bucket(hashByte(hashByte(fnvOffset, kindLength), lengthBucket(len(words)))), a: -1, b: -1})
	digits, noVowel, long := 0, 0, 0
	for _, w := range words {
		norm := buf[w.ns:w.ne]
		switch {
		case allZero(norm):
			digits++
		case utf8.RuneCount(norm) >= 4:
			long++
			if !hasVowel(norm) {
				noVowel++
			}
		}
	}
	dst = append(dst, feature{h: bucket(hashByte(hashByte(hashByte(fnvOffset, kindShape), 'd'), share(digits, len(words)))), a: -1, b: -1})
	if long > 0 {
		dst = append(dst, feature{h: bucket(hashByte(hashByte(hashByte(fnvOffset, kindShape), 'v'), share(noVowel, long))), a: -1, b: -1})
	}
	return dst
}

func lengthBucket(n int) byte {
	switch {
	case n <= 3:
		return byte('0' + n)
	case n <= 6:
		return 'a'
	case n <= 12:
		return 'b'
	case n <= 25:
		return 'c'
	case n <= 50:
		return 'd'
	}
	return 'e'
}

// share buckets a part of a whole: none, some, most, all.
func share(part, whole int) byte {
	switch {
	case part == 0:
		return '0'
	case part == whole:
		return '3'
	case 2*part > whole:
		return '2'
	}
	return '1'
}

func allZero(s []byte) bool {
	for _, c := range s {
		if c != '0' {
			return false
		}
	}
	return len(s) > 0
}

// hasVowel reports whether a folded word has a vowel of a Latin, Greek or
// Cyrillic alphabet, or any letter of a script written without them.
func hasVowel(s []byte) bool {
	for _, r := range string(s) {
		switch {
		case r < utf8.RuneSelf:
			switch r {
			case 'a', 'e', 'i', 'o', 'u', 'y':
				return true
			}
		case unicode.Is(unicode.Greek, r):
			switch r {
			case 'α', 'ε', 'η', 'ι', 'ο', 'υ', 'ω':
				return true
			}
		case unicode.Is(unicode.Cyrillic, r):
			switch r {
			case 'а', 'е', 'ё', 'и', 'о', 'у', 'ы', 'э', 'ю', 'я':
				return true
			}
		default:
			return true // Arabic and other scripts: not judged this way
		}
	}
	return false
}

// crossGrams appends the character n-grams (3 to 5 runes) that span the
// boundary between two neighbouring words: the end of one and the start of
// the next with a space between, so that a phrase still counts when a typo
// or a missing space splits or joins its words differently.
func crossGrams(p, w word, buf []byte, wi int16, dst []feature) []feature {
	var s [40]byte
	tail := lastRunes(buf[p.ns:p.ne], 4)
	head := firstRunes(buf[w.ns:w.ne], 4)
	b := append(append(append(s[:0], tail...), ' '), head...)
	var starts [10]int
	n := 0
	for j := 0; j < len(b) && n < len(starts)-1; {
		starts[n] = j
		n++
		_, size := utf8.DecodeRune(b[j:])
		j += size
	}
	starts[n] = len(b)
	space := utf8.RuneCount(tail)
	for g := 3; g <= 5; g++ {
		for j := max(0, space-g+1); j <= space && j+g <= n; j++ {
			h := hashString(hashByte(fnvOffset, kindCross), b[starts[j]:starts[j+g]])
			dst = append(dst, feature{h: bucket(h), a: wi - 1, b: wi})
		}
	}
	return dst
}

func lastRunes(s []byte, n int) []byte {
	i := len(s)
	for k := 0; k < n && i > 0; k++ {
		_, size := utf8.DecodeLastRune(s[:i])
		i -= size
	}
	return s[i:]
}

func firstRunes(s []byte, n int) []byte {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRune(s[i:])
		i += size
	}
	return s[:i]
}
