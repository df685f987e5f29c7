package intent

import "unicode/utf8"

// The letter statistics: how often each pair of neighbouring letters (a
// word's first and last letter paired with its boundary) occurs in the words
// people really write, hashed into letterBuckets counters. Keyboard mash is
// made of pairs no language uses much, in any script; a name or a word of a
// language without written vowels is not.
const (
	letterBits    = 15
	letterBuckets = 1 << letterBits
	// rarePerMillion: a pair is rare when it makes fewer than this many of
	// every million letter pairs the corpus's words hold (Header.LetterPairs),
	// uncommon under twice that. A rate, not a count: as the corpus grows,
	// every pair is seen more often, mash's pairs too ("kd", "fh"), and a
	// fixed count would call fewer and fewer of them rare (5 was right for
	// 5,100 lines, about 10 in a million; with 7,500 lines "kdjfhs" passed).
	rarePerMillion = 10
)

// letterPairs calls f with the bucket of each pair of neighbouring letters
// of a word (folded as the model reads it), boundaries included; digits and
// marks are skipped.
func letterPairs(w string, f func(b uint32)) {
	prev := '<'
	for _, r := range w {
		r = foldRune(r)
		if r < 0 || r == '0' {
			continue
		}
		f(letterBucket(prev, r))
		prev = r
	}
	if prev != '<' {
		f(letterBucket(prev, '>'))
	}
}

func letterBucket(a, b rune) uint32 {
	var buf [8]byte
	h := hashByte(fnvOffset, 'L')
	h = hashString(h, utf8.AppendRune(utf8.AppendRune(buf[:0], a), b))
	return (h ^ h>>letterBits) & (letterBuckets - 1)
}

// countLetters adds the letter pairs of text's words to counts and
// returns how many it counted.
func countLetters(counts []uint8, text string) int {
	n := 0
	words, buf := splitWords(text, nil, nil)
	for _, w := range words {
		letterPairs(string(buf[w.ns:w.ne]), func(b uint32) {
			n++
			if counts[b] < 255 {
				counts[b]++
			}
		})
	}
	return n
}

// Unusual reports whether a word looks typed without meaning by the
// statistics of its letters: most of its neighbouring letters are pairs
// people rarely write in the corpus's languages (fewer than rarePerMillion
// in a million of the corpus's letter pairs), or all its letters are on one
// row of a keyboard and a third of its pairs are uncommon (under twice that). So "xjqzkv", "kdjfhs" and
// "ضصثقف" are, and "GmbH", "Szczepański", "Nguyen" or "glass" are not. Words
// of fewer than five letters are not judged. rare and pairs say how many of
// its letter pairs were rare.
func (m *Model) Unusual(word string) (unusual bool, rare, pairs int) {
	letters := 0
	var folded [64]rune
	for _, r := range word {
		if f := foldRune(r); f >= 0 && f != '0' {
			if letters < len(folded) {
				folded[letters] = f
			}
			letters++
		}
	}
	if letters < 5 || len(m.letters) != letterBuckets || m.LetterPairs <= 0 {
		return false, 0, 0
	}
	// A pair seen c times is rare when c/LetterPairs < rarePerMillion/1e6.
	rareUnder := float64(m.LetterPairs) * rarePerMillion / 1e6
	uncommon := 0
	letterPairs(word, func(b uint32) {
		pairs++
		c := float64(m.letters[b])
		if c < rareUnder {
			rare++
		}
		if c < 2*rareUnder {
			uncommon++
		}
	})
	if 2*rare > pairs {
		return true, rare, pairs
	}
	return letters <= len(folded) && oneRow(folded[:letters]) && 3*uncommon >= pairs, rare, pairs
}

// keyboardRows are the rows of letters of the keyboards people mash: Latin
// QWERTY, QWERTZ and AZERTY, Turkish Q and F, Arabic, Russian and Greek,
// folded as the model reads them.
var keyboardRows = func() [][]rune {
	var rows [][]rune
	for _, r := range []string{
		"qwertyuiop", "asdfghjkl", "zxcvbnm", "qwertzuiop", "yxcvbnm", "azertyuiop", "qsdfghjklm", "wxcvbn",
		"qwertyuiopgu", "asdfghjklsi", "zxcvbnmoc", "fgiodrnhpqw", "uieaütkmly", "jövcçzsbx",
		"ضصثقفغعهخحجد", "شسيبلاتنمكط", "ئءؤرلاىةوزظ",
		"йцукенгшщзхъ", "фывапролджэ", "ячсмитьбю",
		"ςερτυθιοπ", "ασδφγηξκλ", "ζχψωβνμ",
	} {
		var row []rune
		for _, c := range r {
			if f := foldRune(c); f >= 0 {
				row = append(row, f)
			}
		}
		rows = append(rows, row)
	}
	return rows
}()

// oneRow reports whether every letter of a folded word is on one row of
// one keyboard.
func oneRow(w []rune) bool {
	for _, row := range keyboardRows {
		all := true
		for _, c := range w {
			if !slicesContains(row, c) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

func slicesContains(s []rune, c rune) bool {
	for _, x := range s {
		if x == c {
			return true
		}
	}
	return false
}
