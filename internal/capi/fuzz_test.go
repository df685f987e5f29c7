package capi

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// seedVectors adds up to limit rows of Meta's normalisation vectors (and
// the documentation's examples) to a fuzz corpus as (field, value).
func seedVectors(f *testing.F, add func(field, value string), limit int) {
	for _, r := range [][2]string{
		{"em", " Ayse@Example.COM "}, {"em", "John_Smith@gmail.com"}, {"ph", "0532 412 87 19"},
		{"ph", "+90 0532 412 87 19"}, {"ph", "(650)555-1212"}, {"ph", "0044 20 7946 0958"},
		{"fn", "İsmail"}, {"ln", "Valéry"}, {"fn", "정"}, {"db", "2/16/1997"}, {"db", "19970216"},
		{"ge", "Kadın"}, {"ct", "Zürich"}, {"st", "California"}, {"zp", "98121-9431"}, {"zp", "V6B 1A1"},
		{"country", "United States"}, {"external_id", " CRM-42 "},
		{"em", "62a14e44f765419d10fea99367361a727c12365e2520f32218d505ed9aa0f62f"},
	} {
		add(r[0], r[1])
	}
	fh, err := os.Open(vectorsPath)
	if err != nil {
		return // the shared data is optional for fuzzing; the seeds above remain
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for n := 0; n < limit && sc.Scan(); n++ {
		var row acceptRow
		if json.Unmarshal(sc.Bytes(), &row) == nil {
			add(row.Field, row.Input)
		}
	}
}

// FuzzNormalize: every match-key normaliser, on any value and default
// region, never panics; what it accepts is valid UTF-8, normalises to
// itself again (Meta's rules are projections: trimming, lowercasing,
// dropping characters, picking a code), and hashes to 64 lowercase hex;
// what it refuses wraps ErrRejected.
func FuzzNormalize(f *testing.F) {
	seedVectors(f, func(field, value string) { f.Add(field, value, "TR") }, 400)
	fields := HashedFields()
	f.Fuzz(func(t *testing.T, field, value, country string) {
		if i := strings.IndexByte(field, '#'); i >= 0 {
			// "#n" picks the nth field, so mutations keep hitting real ones.
			if n, err := parseSmall(field[i+1:]); err == nil {
				field = fields[n%len(fields)]
			}
		}
		n, err := Normalize(field, value, country)
		if err != nil {
			if !errors.Is(err, ErrRejected) {
				t.Fatalf("Normalize(%q, %q): error %v does not wrap ErrRejected", field, value, err)
			}
			if _, herr := HashField(field, value, country); herr == nil {
				t.Fatalf("HashField(%q, %q) accepted what Normalize refused (%v)", field, value, err)
			}
			return
		}
		if n == "" || !utf8.ValidString(n) && utf8.ValidString(value) {
			t.Fatalf("Normalize(%q, %q) = %q: empty or invalid UTF-8", field, value, n)
		}
		// A normalised phone already carries its country code: Meta's rule
		// for it is digits only, so it is re-read without a default region
		// (with one, a national reading could prefix the code again).
		again, err := Normalize(field, n, country)
		if field == FieldPhone {
			again, err = Normalize(field, n, "")
		}
		if err != nil || again != n {
			t.Fatalf("Normalize(%q) not idempotent: %q -> %q -> %q (%v)", field, value, n, again, err)
		}
		h, err := HashField(field, value, country)
		if err != nil {
			// Only an MD5-looking value may be refused after normalising.
			if !isHex(n, 32) {
				t.Fatalf("HashField(%q, %q) refused a normalised value %q: %v", field, value, n, err)
			}
			return
		}
		if !IsSHA256Hex(h) {
			t.Fatalf("HashField(%q, %q) = %q: not 64 lowercase hex", field, value, h)
		}
		// A birth date is eight digits. Not necessarily a real date: Meta's
		// vectors pass eight digits through unchecked ("15011990" is
		// accepted as is), and so do we, to hash what Meta's builder does.
		if field == FieldBirthDate && !isHex(n, 64) && !isHex(n, 32) {
			if len(n) != 8 || strings.Trim(n, "0123456789") != "" {
				t.Fatalf("birth date %q normalised to %q, not eight digits", value, n)
			}
		}
	})
}

// FuzzNormalizePhone: any string as a phone, with any default region,
// never panics; an accepted phone is ASCII digits (or a hash passed
// through), without a leading zero, and normalises to itself again under
// Meta's rule for a number that has its country code (digits only).
func FuzzNormalizePhone(f *testing.F) {
	seedVectors(f, func(field, value string) {
		if field == FieldPhone {
			f.Add(value, "TR")
			f.Add(value, "US")
		}
	}, 4000)
	for _, c := range []string{"", "TR", "DE", "GB", "us", "ZZ", "XX", "001"} {
		f.Add("+49 (0)30 1234567", c)
	}
	f.Fuzz(func(t *testing.T, value, country string) {
		n, err := NormalizePhone(value, country)
		if err != nil {
			if !errors.Is(err, ErrRejected) {
				t.Fatalf("NormalizePhone(%q): %v does not wrap ErrRejected", value, err)
			}
			return
		}
		if isHex(n, 64) || isHex(n, 32) {
			return
		}
		if n[0] == '0' {
			t.Fatalf("NormalizePhone(%q, %q) = %q starts with 0", value, country, n)
		}
		for i := 0; i < len(n); i++ {
			if n[i] < '0' || n[i] > '9' {
				t.Fatalf("NormalizePhone(%q, %q) = %q: not digits only", value, country, n)
			}
		}
		again, err := NormalizePhone(n, "")
		if err != nil || again != n {
			t.Fatalf("NormalizePhone(%q, %q) not idempotent: %q -> %q (%v)", value, country, n, again, err)
		}
	})
}

func parseSmall(s string) (int, error) {
	n := 0
	if s == "" || len(s) > 3 {
		return 0, errors.New("not a small number")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errors.New("not a small number")
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, nil
}
