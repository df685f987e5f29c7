package qualify

import (
	"bufio"
	"bytes"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
)

// The phrase lists a site can extend in qualify.phrases.
const (
	ListVendor = "vendor" // sales pitches: VENDOR_PITCH
	ListJob    = "job"    // job applications: JOB_APPLICATION
	ListPrice  = "price"  // asking for a price: PRICE_ONLY
	ListFiller = "filler" // words that say nothing alone: NO_MESSAGE, PRICE_ONLY
	ListTest   = "test"   // what people type to test a form: TEST_ENTRY
	// The weaker signs: each alone says little, several together (or one
	// with a strong phrase of vendor or job) make the reason.
	ListVendorSign = "vendor_sign" // signs of a pitch: VENDOR_PITCH
	ListJobSign    = "job_sign"    // signs of someone asking for work: JOB_APPLICATION
	ListCompany    = "company"     // company and role words in the name field: VENDOR_PITCH
	// ListBook is asking to come in (an appointment, a visit): intent beyond
	// a price, so never PRICE_ONLY or NO_MESSAGE.
	ListBook = "book"
	// ListQuote is asking for a quote or for someone to come and see the
	// job: evidence of a request where the model already leans to one.
	ListQuote = "quote"
)

// ListNames are the names of the phrase lists, in a fixed order.
func ListNames() []string {
	return []string{ListVendor, ListJob, ListPrice, ListFiller, ListTest, ListVendorSign, ListJobSign, ListCompany, ListBook, ListQuote}
}

//go:embed data/phrases/*.txt data/disposable_email_blocklist.conf data/free_email_domains.txt
var dataFS embed.FS

// Lists are the word and phrase lists and the disposable e-mail domains the
// rules read. A Lists is immutable once built: the With methods return a new
// one, so one Lists can back the rules of every site at once.
type Lists struct {
	// phrases maps list -> language -> phrases as written in the files.
	phrases    map[string]map[string][]string
	disposable map[string]struct{}
	// free holds the consumer mail providers: whole domains, and "name."
	// for a name under any top-level domain.
	free map[string]struct{}
}

// defaultLists parses the embedded lists once; the result is never changed.
var defaultLists = sync.OnceValue(func() *Lists {
	l, err := loadEmbedded(dataFS)
	if err != nil {
		// The files are part of the binary and covered by tests.
		panic("qualify: embedded lists: " + err.Error())
	}
	return l
})

// DefaultLists returns the lists embedded in the binary: phrases in Turkish,
// English and German (and the grey area's, test entries', company forms'
// and booking's in Spanish, French, Italian, Portuguese and Arabic too) and
// the CC0 disposable e-mail domain list. It is parsed
// once and shared; callers must not (and cannot) change it.
func DefaultLists() *Lists { return defaultLists() }

func loadEmbedded(fsys fs.FS) (*Lists, error) {
	l := &Lists{phrases: make(map[string]map[string][]string)}
	files, err := fs.Glob(fsys, "data/phrases/*.txt")
	if err != nil {
		return nil, err
	}
	for _, name := range files {
		base := strings.TrimSuffix(path.Base(name), ".txt")
		list, lang, ok := strings.Cut(base, ".")
		if !ok || !slices.Contains(ListNames(), list) {
			return nil, fmt.Errorf("%s: want <list>.<lang>.txt with a known list", name)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		if l.phrases[list] == nil {
			l.phrases[list] = make(map[string][]string)
		}
		l.phrases[list][lang] = parsePhraseFile(b)
	}
	f, err := fsys.Open("data/disposable_email_blocklist.conf")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if l.disposable, err = LoadDisposable(f); err != nil {
		return nil, fmt.Errorf("disposable_email_blocklist.conf: %w", err)
	}
	b, err := fs.ReadFile(fsys, "data/free_email_domains.txt")
	if err != nil {
		return nil, err
	}
	l.free = make(map[string]struct{})
	for _, d := range parsePhraseFile(b) {
		l.free[strings.TrimSuffix(strings.ToLower(d), "*")] = struct{}{}
	}
	return l, nil
}

// parsePhraseFile reads one phrase a line, skipping blank lines and # comments.
func parsePhraseFile(b []byte) []string {
	var out []string
	for line := range bytes.Lines(b) {
		s := strings.TrimSpace(string(line))
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		out = append(out, s)
	}
	return out
}

// LoadDisposable reads a disposable e-mail domain list: one domain a line,
// blank lines and lines starting with # ignored. Domains are lower-cased.
func LoadDisposable(r io.Reader) (map[string]struct{}, error) {
	set := make(map[string]struct{}, 9000)
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		s := strings.ToLower(strings.TrimSpace(sc.Text()))
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		if !validDomain(s) {
			return nil, fmt.Errorf("line %d: %q is not a domain", n, s)
		}
		set[s] = struct{}{}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(set) == 0 {
		return nil, fmt.Errorf("no domains")
	}
	return set, nil
}

// WithDisposable returns a copy of l that uses set as its disposable e-mail
// domains. set must not be changed afterwards.
func (l *Lists) WithDisposable(set map[string]struct{}) *Lists {
	return &Lists{phrases: l.phrases, disposable: set, free: l.free}
}

// WithDisposableFile returns a copy of l whose disposable e-mail domains are
// read from the file at path (a newer copy of the embedded list).
func (l *Lists) WithDisposableFile(path string) (*Lists, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("disposable domains: %w", err)
	}
	defer f.Close()
	set, err := LoadDisposable(f)
	if err != nil {
		return nil, fmt.Errorf("disposable domains %s: %w", path, err)
	}
	return l.WithDisposable(set), nil
}

// WithPhrases returns a copy of l with phrases added to one list in one
// language. It fails on an unknown list.
func (l *Lists) WithPhrases(list, lang string, phrases []string) (*Lists, error) {
	if !slices.Contains(ListNames(), list) {
		return nil, fmt.Errorf("unknown phrase list %q (want one of %s)", list, strings.Join(ListNames(), ", "))
	}
	out := &Lists{phrases: make(map[string]map[string][]string, len(l.phrases)+1), disposable: l.disposable, free: l.free}
	for k, v := range l.phrases {
		out.phrases[k] = maps.Clone(v)
	}
	if out.phrases[list] == nil {
		out.phrases[list] = make(map[string][]string)
	}
	out.phrases[list][lang] = append(slices.Clip(out.phrases[list][lang]), phrases...)
	return out, nil
}

// Phrases returns the phrases of one list in one language, as written.
func (l *Lists) Phrases(list, lang string) []string {
	return slices.Clone(l.phrases[list][lang])
}

// Languages returns the languages that have phrases in a list, sorted.
func (l *Lists) Languages(list string) []string {
	return slices.Sorted(maps.Keys(l.phrases[list]))
}

// IsDisposable reports whether an e-mail domain (or a domain it is under)
// is a disposable e-mail provider.
func (l *Lists) IsDisposable(domain string) bool {
	_, ok := disposableMatch(l.disposable, strings.ToLower(domain))
	return ok
}

// disposableMatch looks domain and each parent domain up in set and returns
// the entry found.
func disposableMatch(set map[string]struct{}, domain string) (string, bool) {
	for d := domain; d != ""; {
		if _, ok := set[d]; ok {
			return d, true
		}
		i := strings.IndexByte(d, '.')
		if i < 0 {
			break
		}
		d = d[i+1:]
	}
	return "", false
}

// freeMail reports whether domain (lower case) belongs to a consumer mail
// provider, or to a university (students write from there): an address
// there is a person's, not a company's.
func freeMail(free map[string]struct{}, domain string) bool {
	if _, ok := free[domain]; ok {
		return true
	}
	if i := strings.IndexByte(domain, '.'); i > 0 {
		if _, ok := free[domain[:i+1]]; ok {
			return true
		}
	}
	for _, edu := range [...]string{".edu", ".ac.uk", ".edu.tr", ".ac.at"} {
		if strings.HasSuffix(domain, edu) {
			return true
		}
	}
	// German universities: uni-hamburg.de, mail.uni-koeln.de.
	return strings.HasPrefix(domain, "uni-") || strings.Contains(domain, ".uni-")
}

// phraseMatcher finds the phrases of one list in a text's words.
type phraseMatcher struct {
	phrases []phrase
	exact   map[string][]int // by the exact first word
	prefix  map[string][]int // by the first three letters of a prefix first word
	scan    []int            // first word is a suffix or a short prefix
}

type phrase struct {
	text  string
	words []wordPattern
}

type wordPattern struct {
	s    string
	kind byte // '=' whole word, '>' prefix ("staj*"), '<' suffix ("*bewerbung")
}

func (p wordPattern) match(w string) bool {
	switch p.kind {
	case '>':
		return strings.HasPrefix(w, p.s)
	case '<':
		return strings.HasSuffix(w, p.s)
	}
	return w == p.s
}

// span is one phrase found at words [start, end).
type span struct {
	phrase     int
	start, end int
}

func newPhraseMatcher(lines []string) *phraseMatcher {
	m := &phraseMatcher{exact: make(map[string][]int), prefix: make(map[string][]int)}
	seen := make(map[string]bool)
	for _, line := range lines {
		p, ok := parsePhrase(line)
		if !ok || seen[p.key()] {
			continue
		}
		seen[p.key()] = true
		i := len(m.phrases)
		m.phrases = append(m.phrases, p)
		switch first := p.words[0]; {
		case first.kind == '=':
			m.exact[first.s] = append(m.exact[first.s], i)
		case first.kind == '>' && len(first.s) >= 3:
			m.prefix[first.s[:3]] = append(m.prefix[first.s[:3]], i)
		default:
			m.scan = append(m.scan, i)
		}
	}
	return m
}

func (p phrase) key() string {
	var b strings.Builder
	for _, w := range p.words {
		b.WriteByte(w.kind)
		b.WriteString(w.s)
		b.WriteByte(' ')
	}
	return b.String()
}

// parsePhrase turns a line like "özgeçmiş*" or "first page of google" into
// folded word patterns.
func parsePhrase(line string) (phrase, bool) {
	p := phrase{text: strings.TrimSpace(line)}
	for _, f := range strings.Fields(line) {
		pre := strings.HasSuffix(f, "*")
		suf := strings.HasPrefix(f, "*")
		words := tokens(fold(strings.Trim(f, "*")), nil)
		for j, w := range words {
			kind := byte('=')
			if pre && j == len(words)-1 {
				kind = '>'
			} else if suf && j == 0 {
				kind = '<'
			}
			p.words = append(p.words, wordPattern{s: w, kind: kind})
		}
	}
	return p, len(p.words) > 0
}

// find returns the phrases found in words, longest first at each position
// and never overlapping, so "seo services" counts once, not as "seo" too.
func (m *phraseMatcher) find(words []string, dst []span) []span {
	for i := 0; i < len(words); {
		best := -1
		bestLen := 0
		try := func(ids []int) {
			for _, id := range ids {
				p := m.phrases[id]
				if len(p.words) <= bestLen || i+len(p.words) > len(words) {
					continue
				}
				ok := true
				for j, wp := range p.words {
					if !wp.match(words[i+j]) {
						ok = false
						break
					}
				}
				if ok {
					best, bestLen = id, len(p.words)
				}
			}
		}
		w := words[i]
		try(m.exact[w])
		if len(w) >= 3 {
			try(m.prefix[w[:3]])
		}
		try(m.scan)
		if best < 0 {
			i++
			continue
		}
		dst = append(dst, span{phrase: best, start: i, end: i + bestLen})
		i += bestLen
	}
	return dst
}
