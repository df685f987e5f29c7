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
	// rarePair: a pair seen fewer times than this in the corpus is rare.
	rarePair = 3
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

// countLetters adds the letter pairs of text's words to counts.
func countLetters(counts []uint8, text string) {
	words, buf := splitWords(text, nil, nil)
	for _, w := range words {
		letterPairs(string(buf[w.ns:w.ne]), func(b uint32) {
			if counts[b] < 255 {
				counts[b]++
			}
		})
	}
}

// Unusual reports whether a word's letters are mostly in pairs people
// rarely write, in any language the corpus has: keyboard mash such as
// "xjqzkv" or "ضصثقف", but not "GmbH", "Szczepański" or "Nguyen". Words of
// fewer than five letters are not judged. rare and pairs say how many of its
// letter pairs were rare.
func (m *Model) Unusual(word string) (unusual bool, rare, pairs int) {
	letters := 0
	for _, r := range word {
		if f := foldRune(r); f >= 0 && f != '0' {
			letters++
		}
	}
	if letters < 5 || len(m.letters) != letterBuckets {
		return false, 0, 0
	}
	letterPairs(word, func(b uint32) {
		pairs++
		if m.letters[b] < rarePair {
			rare++
		}
	})
	return 2*rare > pairs, rare, pairs
}
