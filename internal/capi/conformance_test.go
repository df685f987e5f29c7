package capi

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// vectorsPath is Meta's collected normalisation vectors, in the shared/
// directory cloned beside the repository.
const vectorsPath = "../../../shared/data/meta-normalize-vectors/accept.jsonl"

// The gates of TestMetaVectors. minStrict is what the issue asks for: the
// share of rows whose accepted output we produce exactly (99.52% now, 2,893
// of 2,907), so a new disagreement cannot be waved through by listing it.
// minAgreement also counts a deliberate row as agreeing when we give the
// answer of the parameter builder or the docs pinned there.
const (
	minAgreement = 0.995
	minStrict    = 0.995
)

type acceptRow struct {
	Field  string    `json:"field"`
	Input  string    `json:"input"`
	Accept []*string `json:"accept"`
}

// regionOf holds the default region of the rows whose source meant a phone
// number of a known region; such a row must then match.
var regionOf = map[[2]string]string{
	// Meta's documentation example: "Input: US phone number (650)555-1212".
	// Without a region every Meta library keeps the digits (6505551212).
	{"ph", "(650)555-1212"}: "US",
}

// disagreement is a vector row whose accepted output comes from one of
// Meta's libraries only, while the parameter builder's rule (or, where the
// builder errs, Meta's documentation) gives another answer, which is ours:
// want ("" = rejected). class groups the rows for the report.
type disagreement struct {
	want  string
	class string
	why   string
}

// deliberate lists the rows where Meta's sources disagree with each other
// and the accepted output is the losing side's, since no builder test pins
// that input. Each row's want is the builder's answer, checked against the
// builder's own tests of inputs of the same shape named in why. Every other
// row of accept.jsonl must match exactly.
var deliberate = map[[2]string]disagreement{
	// The PHP SDK runs FILTER_SANITIZE_EMAIL, which deletes the characters
	// it does not like and keeps the rest; the builder's address pattern
	// rejects them (its tests reject "test\"@example.com" and
	// "test@example(.com"; the pattern has no ( or ) in a local part).
	// Deleting is no repair: in "foo(.bar)@baz.com" the parenthesis is an
	// RFC 5322 comment, so the address is foo@baz.com.
	{"em", `foo(.bar)@baz.com/`}: {class: "email: PHP SDK sanitiser", why: "builder's pattern has no ( ) in a local part"},
	{"em", `foo"@bar.com`}:       {class: "email: PHP SDK sanitiser", why: `builder rejects "test\"@example.com"`},
	{"em", `foo()@bar.com`}:      {class: "email: PHP SDK sanitiser", why: "builder's pattern has no ( ) in a local part"},
	// The Python SDK only checks .+@.+\..+ (its test asserts that a hash
	// comes out, not which); the builder rejects quoted local parts
	// ("\"test user\"@example.com" is rejected in its PHP tests), a
	// backslash ("test\\@example.com") and a second @.
	{"em", `"a b"@c.d`}: {class: "email: quoted local part", why: `builder rejects "\"test user\"@example.com"`},
	{"em", `a\@b@c.d`}:  {class: "email: quoted local part", why: `builder rejects "test\\@example.com" and a second @`},
	// The Java SDK refuses phones of more than 16 characters; the builder
	// keeps every digit ("+1-555-123-4567-890-123-456-789", 23 digits, and
	// a run of 100 ones are kept in its tests).
	{"ph", "123456123456123456123456"}: {want: "123456123456123456123456", class: "phone: Java length limit",
		why: "builder keeps 23 and 100 digits"},
	// The PHP, Java and Python SDKs delete digits from a city; the builder
	// keeps them ("Los Angeles 90210" -> "losangeles90210", "District9" ->
	// "district9" in its tests).
	{"ct", "Seattle-98121"}:     {want: "seattle98121", class: "city: digits", why: `builder keeps "Los Angeles 90210" -> "losangeles90210"`},
	{"ct", "Stanley Park 1234"}: {want: "stanleypark1234", class: "city: digits", why: `builder keeps "Los Angeles 90210" -> "losangeles90210"`},
	// Java keeps a full state name ("washingtondc"); the builder, whose
	// table has no District of Columbia, finds "washington" inside it and
	// answers wa, the state. Meta's documentation wants the two-letter ANSI
	// code, which for the District is dc.
	{"st", "Washington, D.C."}: {want: "dc", class: "state: District of Columbia",
		why: "Java keeps washingtondc, builder says wa (Washington state); docs want the ANSI code dc"},
	// The PHP, Java and Python SDKs (and the docs' example "m11ae") remove
	// spaces from a postcode; the builder keeps the inner space ("SW1A 1AA"
	// -> "sw1a 1aa", "V6B 1A1" -> "v6b 1a1", "111 22" -> "111 22": 14
	// accepted rows, from its Node, PHP and browser code alike).
	{"zp", "NR9 5AL"}: {want: "nr9 5al", class: "postcode: inner space", why: `builder keeps "SW1A 1AA" -> "sw1a 1aa"`},
	// Java only trims and lowercases names; the builder and the docs ("no
	// punctuation") remove punctuation ("Smith-Jones" -> "smithjones").
	{"fn", "firstname-2"}: {want: "firstname2", class: "name: hyphen", why: `builder strips it: "Smith-Jones" -> "smithjones"`},
	{"fn", "firstname-3"}: {want: "firstname3", class: "name: hyphen", why: `builder strips it: "Smith-Jones" -> "smithjones"`},
	{"ln", "lastname-1"}:  {want: "lastname1", class: "name: hyphen", why: `builder strips it: "Smith-Jones" -> "smithjones"`},
	{"ln", "lastname-2"}:  {want: "lastname2", class: "name: hyphen", why: `builder strips it: "Smith-Jones" -> "smithjones"`},
}

// fieldTally counts one field's rows and the rows we match exactly.
type fieldTally struct{ rows, matched int }

// TestMetaVectors checks every row of Meta's accept.jsonl against Normalize
// with no default region (the vectors come from libraries that know none,
// but for the rows in regionOf) and reports the agreement, overall and per
// field, and the rows we do not match, by class.
//
// A row matches when Normalize's answer is accepted, or, for a value that
// already looks hashed, the lowercased form hashedForm gives is: the
// builder has two layers, its per-field normalisers, which return such a
// value untouched, and its hashing step, which passes it on lowercased
// (HashField does so for a SHA-256), and the vectors test both.
func TestMetaVectors(t *testing.T) {
	f, err := os.Open(vectorsPath)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("Meta's vectors not found at %s (clone shared/ beside the repository to run this test)", vectorsPath)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var rows, matched, listed, clock int
	fields := map[string]*fieldTally{}
	byClass := map[string][]string{}
	for sc.Scan() {
		var r acceptRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %d: %v", rows+1, err)
		}
		if r.Field == FieldBirthDate && time.Now().Year() != 2026 && strings.Contains(r.Input, "202") {
			// The vectors were made in 2026; a year-of-birth bound of "next
			// year" moves with the clock.
			clock++
			continue
		}
		rows++
		ft := fields[r.Field]
		if ft == nil {
			ft = &fieldTally{}
			fields[r.Field] = ft
		}
		ft.rows++
		key := [2]string{r.Field, r.Input}
		d, isDeliberate := deliberate[key]
		got, err := Normalize(r.Field, r.Input, regionOf[key])
		if err != nil {
			got = ""
		}
		accept := make([]string, len(r.Accept))
		for i, a := range r.Accept {
			if a != nil {
				accept[i] = *a
			}
		}
		passed, hashed := hashedForm(trim(r.Input))
		switch {
		case slices.Contains(accept, got) || hashed && slices.Contains(accept, passed):
			matched++
			ft.matched++
			if isDeliberate {
				t.Errorf("%s %q: listed as a deliberate disagreement but matches", r.Field, r.Input)
			}
		case isDeliberate:
			listed++
			byClass[d.class] = append(byClass[d.class], fmt.Sprintf("%s %q: ours %q, accepted %q (%s)", r.Field, r.Input, got, accept, d.why))
			if got != d.want {
				t.Errorf("%s %q: deliberate answer %q, got %q", r.Field, r.Input, d.want, got)
			}
		default:
			byClass["unlisted"] = append(byClass["unlisted"], fmt.Sprintf("%s %q: ours %q, accepted %q", r.Field, r.Input, got, accept))
			t.Errorf("%s %q: got %q, accepted %q", r.Field, r.Input, got, accept)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if rows == 0 {
		t.Fatal("no vector rows read")
	}
	strict := float64(matched) / float64(rows)
	agreement := float64(matched+listed) / float64(rows)
	t.Logf("%d rows (%d clock-dependent left out): %d match (%.2f%%), %d deliberate disagreements; agreement with the reference answer %.2f%%",
		rows, clock, matched, 100*strict, listed, 100*agreement)
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		ft := fields[name]
		t.Logf("  %-11s %4d/%4d  %6.2f%%", name, ft.matched, ft.rows, 100*float64(ft.matched)/float64(ft.rows))
	}
	classes := make([]string, 0, len(byClass))
	for c := range byClass {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	for _, c := range classes {
		t.Logf("%s (%d):", c, len(byClass[c]))
		for _, line := range byClass[c] {
			t.Logf("    %s", line)
		}
	}
	if agreement < minAgreement {
		t.Errorf("agreement %.2f%% is below %.1f%%", 100*agreement, 100*minAgreement)
	}
	if strict < minStrict {
		t.Errorf("exact agreement %.2f%% is below %.1f%%", 100*strict, 100*minStrict)
	}
}
