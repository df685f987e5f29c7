package google

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/nyaruka/phonenumbers"
)

// ErrRejected is wrapped by every error of the normalisers: a value that is
// empty or cannot be used is left out, never hashed.
var ErrRejected = errors.New("value rejected")

func reject(field, why string) error {
	return fmt.Errorf("google %s: %s: %w", field, why, ErrRejected)
}

// Hash returns the lowercase hex SHA-256 of a normalised value, the form
// requests with encoding HEX carry.
func Hash(normalized string) string {
	sum := sha256.Sum256([]byte(normalized))
	return hex.EncodeToString(sum[:])
}

// IsHash tells whether s is 64 lowercase hex digits.
func IsHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// NormalizeEmail applies Google's rules: every whitespace removed (leading,
// trailing and inside), lower case, and for gmail.com and googlemail.com
// the dots of the local part and a +tag removed. Other domains keep their
// dots and plus signs.
func NormalizeEmail(s string) (string, error) {
	e := strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '\ufeff' {
			return -1
		}
		return r
	}, s)
	e = strings.ToLower(e)
	if e == "" {
		return "", reject("email", "empty")
	}
	at := strings.LastIndexByte(e, '@')
	if at <= 0 || at == len(e)-1 || strings.Count(e, "@") != 1 {
		return "", reject("email", "not an e-mail address")
	}
	local, domain := e[:at], e[at+1:]
	if !strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") {
		return "", reject("email", "no valid domain")
	}
	if domain == "gmail.com" || domain == "googlemail.com" {
		if i := strings.IndexByte(local, '+'); i >= 0 {
			local = local[:i]
		}
		local = strings.ReplaceAll(local, ".", "")
		if local == "" {
			return "", reject("email", "empty local part")
		}
	}
	return local + "@" + domain, nil
}

// NormalizePhone returns the number in E.164 with its plus sign and country
// code, read with country (ISO 3166-1 alpha-2) as the default region when it
// has no international prefix. A number that is not valid for its country
// (too short, an unassigned range) is refused.
func NormalizePhone(s, country string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", reject("phone", "empty")
	}
	n, err := phonenumbers.Parse(s, strings.ToUpper(country))
	if err != nil {
		return "", reject("phone", "cannot read it as a phone number")
	}
	if !phonenumbers.IsValidNumber(n) {
		return "", reject("phone", "not a valid number")
	}
	e := phonenumbers.Format(n, phonenumbers.E164)
	if !IsE164(e) {
		return "", reject("phone", "not E.164")
	}
	return e, nil
}

// IsE164 tells whether s is a plus sign and 8 to 15 digits.
func IsE164(s string) bool {
	if len(s) < 9 || len(s) > 16 || s[0] != '+' || s[1] == '0' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// namePrefixes and nameSuffixes are the titles Google asks to leave out of
// given and family names, compared without punctuation.
var (
	namePrefixes = map[string]bool{"mr": true, "mrs": true, "ms": true, "miss": true, "mx": true, "dr": true,
		"prof": true, "sir": true, "bay": true, "bayan": true, "herr": true, "frau": true}
	nameSuffixes = map[string]bool{"jr": true, "sr": true, "ii": true, "iii": true, "iv": true, "phd": true,
		"md": true, "esq": true}
)

// NormalizeGivenName lower-cases a given name, removes its punctuation and
// a leading title (Mrs., Dr., ...), and trims it.
func NormalizeGivenName(s string) (string, error) {
	w := nameWords(s)
	if len(w) > 1 && namePrefixes[w[0]] {
		w = w[1:]
	}
	if len(w) == 0 {
		return "", reject("given_name", "empty")
	}
	return strings.Join(w, " "), nil
}

// NormalizeFamilyName lower-cases a family name, removes its punctuation
// and a trailing suffix (Jr., III, ...), and trims it.
func NormalizeFamilyName(s string) (string, error) {
	w := nameWords(s)
	if len(w) > 1 && nameSuffixes[w[len(w)-1]] {
		w = w[:len(w)-1]
	}
	if len(w) == 0 {
		return "", reject("family_name", "empty")
	}
	return strings.Join(w, " "), nil
}

// nameWords lower-cases s, drops its punctuation and symbols (a hyphen or
// apostrophe inside a name joins its parts) and splits it into words.
func nameWords(s string) []string {
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			return unicode.ToLower(r)
		case unicode.IsSpace(r):
			return ' '
		}
		return -1
	}, s)
	return strings.Fields(s)
}

// NormalizeRegion returns an ISO 3166-1 alpha-2 code in upper case; it is
// sent in clear, never hashed.
func NormalizeRegion(s string) (string, error) {
	s = strings.ToUpper(strings.TrimSpace(s))
	if len(s) != 2 || s[0] < 'A' || s[0] > 'Z' || s[1] < 'A' || s[1] > 'Z' {
		return "", reject("region_code", "not a two-letter country code")
	}
	return s, nil
}

// NormalizePostalCode trims a postal code and upper-cases it; a United
// States code is five digits or five and a four-digit extension. It is
// sent in clear, never hashed.
func NormalizePostalCode(s, region string) (string, error) {
	s = strings.ToUpper(strings.TrimSpace(s))
	if s == "" {
		return "", reject("postal_code", "empty")
	}
	if region == "US" {
		d := strings.ReplaceAll(s, " ", "")
		if len(d) == 5 && allDigits(d) || len(d) == 10 && d[5] == '-' && allDigits(d[:5]) && allDigits(d[6:]) {
			return d, nil
		}
		return "", reject("postal_code", "a US code is five digits, optionally -NNNN")
	}
	return s, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
