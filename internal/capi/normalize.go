package capi

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/nyaruka/phonenumbers"
)

// The customer-information fields Meta wants normalised and SHA-256 hashed.
const (
	FieldEmail      = "em"
	FieldPhone      = "ph"
	FieldFirstName  = "fn"
	FieldLastName   = "ln"
	FieldGender     = "ge"
	FieldBirthDate  = "db"
	FieldCity       = "ct"
	FieldState      = "st"
	FieldZip        = "zp"
	FieldCountry    = "country"
	FieldExternalID = "external_id"
)

// HashedFields lists the fields Normalize and HashField accept, in Meta's
// documentation order.
func HashedFields() []string {
	return []string{FieldEmail, FieldPhone, FieldFirstName, FieldLastName, FieldGender,
		FieldBirthDate, FieldCity, FieldState, FieldZip, FieldCountry, FieldExternalID}
}

// ErrRejected is wrapped by every error Normalize returns for a value that is
// empty or invalid: such a value is dropped, never hashed.
var ErrRejected = errors.New("value rejected")

func reject(field, why string) error {
	return fmt.Errorf("%s: %s: %w", field, why, ErrRejected)
}

// Normalize returns value normalised for field as Meta documents it and as
// Meta's parameter builder does, or an error wrapping ErrRejected that says
// why the value cannot be used. country is the ISO-3166 alpha-2 default
// region for phone numbers (may be empty). A value that already looks hashed
// (64 or 32 hex digits) is returned as given, trimmed, as the builder's
// per-field normalisers return it; HashField lowercases it.
func Normalize(field, value, country string) (string, error) {
	switch field {
	case FieldEmail:
		return NormalizeEmail(value)
	case FieldPhone:
		return NormalizePhone(value, country)
	case FieldFirstName, FieldLastName:
		return normalizeName(field, value)
	case FieldGender:
		return normalizeGender(value)
	case FieldBirthDate:
		return normalizeBirthDate(value)
	case FieldCity:
		return normalizeCity(value)
	case FieldState:
		return normalizeTwoLetter(FieldState, value, stateCodes, stateNames)
	case FieldZip:
		return normalizeZip(value)
	case FieldCountry:
		return normalizeTwoLetter(FieldCountry, value, countryCodes, countryNames)
	case FieldExternalID:
		return normalizeExternalID(value)
	}
	return "", fmt.Errorf("unknown field %q: %w", field, ErrRejected)
}

// Hash returns the lowercase hex SHA-256 of a normalised value.
func Hash(normalized string) string {
	sum := sha256.Sum256([]byte(normalized))
	return hex.EncodeToString(sum[:])
}

// HashField normalises value for field and returns its SHA-256 as Meta wants
// it. A value that is already a SHA-256 (64 hex digits of either case)
// passes through once, lowercased, and is not hashed again, as in the
// builder's hashing step. An MD5-looking value (32 hex digits) is refused,
// since Meta matches SHA-256 only, except as an external_id, where it is an
// id like any other and is hashed (lowercased first). Empty and invalid
// values return an error and are never hashed.
func HashField(field, value, country string) (string, error) {
	n, err := Normalize(field, value, country)
	if err != nil {
		return "", err
	}
	return hashNormalized(field, n)
}

// hashNormalized is HashField after Normalize.
func hashNormalized(field, n string) (string, error) {
	if h, ok := hashedForm(n); ok {
		switch {
		case len(h) == 64:
			return h, nil
		case field != FieldExternalID:
			return "", reject(field, "looks like an MD5 hash; Meta matches SHA-256 only")
		}
		n = h
	}
	return Hash(n), nil
}

// IsSHA256Hex tells whether s is 64 lowercase hex digits, the form Meta
// requires for hashed customer data.
func IsSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// isHex tells whether s is n hex digits of either case.
func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// looksHashed tells whether s already looks hashed: a SHA-256 or an MD5 in
// hex of either case. Meta's parameter builder has two layers, and treats
// such a value in each: its per-field normalisers return it untouched (the
// Node and browser ones a SHA-256 only, the PHP ones an MD5 too), and its
// hashing step passes it on lowercased instead of hashing it again.
// Normalize does the first, HashField the second (hashedForm).
func looksHashed(s string) bool { return isHex(s, 64) || isHex(s, 32) }

// hashedForm returns s lowercased when it already looks hashed, the form the
// builder's hashing step passes on.
func hashedForm(s string) (string, bool) {
	if looksHashed(s) {
		return asciiLower(s), true
	}
	return "", false
}

// isSpace is JavaScript's \s: Unicode white space plus the byte-order mark.
func isSpace(r rune) bool { return unicode.IsSpace(r) || r == '\ufeff' }

func trim(s string) string { return strings.TrimFunc(s, isSpace) }

// asciiLower lowercases A-Z only, without allocating when nothing changes.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// unicodeLower lowercases as JavaScript's toLowerCase does (Meta's pixel and
// parameter builder run it), which differs from strings.ToLower for the
// dotted capital I: U+0130 becomes "i" followed by U+0307.
func unicodeLower(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return asciiLower(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == '\u0130' {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// NormalizeEmail trims and lowercases an e-mail address and checks it has the
// shape Meta's parameter builder accepts: a dot-atom local part, "@", and a
// domain of at least two dot-separated labels of letters, digits and
// hyphens. Quoted local parts and non-ASCII addresses are rejected.
func NormalizeEmail(s string) (string, error) {
	t := trim(s)
	if t == "" {
		return "", reject(FieldEmail, "empty")
	}
	if looksHashed(t) {
		return t, nil
	}
	e := asciiLower(t)
	if why := emailProblem(e); why != "" {
		return "", reject(FieldEmail, why)
	}
	return e, nil
}

// emailProblem returns why e (lowercased) is not an e-mail address, or "".
func emailProblem(e string) string {
	if len(e) > 254 {
		return "longer than 254 characters"
	}
	at := strings.IndexByte(e, '@')
	if at < 0 {
		return "no @"
	}
	local, domain := e[:at], e[at+1:]
	if strings.IndexByte(domain, '@') >= 0 {
		return "more than one @"
	}
	if local == "" || len(local) > 64 {
		return "local part empty or longer than 64 characters"
	}
	prev := byte('.')
	for i := 0; i < len(local); i++ {
		c := local[i]
		switch {
		case c == '.':
			if prev == '.' {
				return "misplaced dot in local part"
			}
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+/=?^_`{|}~-", c) >= 0:
		default:
			return fmt.Sprintf("character %q not allowed in local part", rune(c))
		}
		prev = c
	}
	if prev == '.' {
		return "misplaced dot in local part"
	}
	labels := 0
	for label := range strings.SplitSeq(domain, ".") {
		labels++
		if label == "" || len(label) > 63 {
			return "empty or overlong domain label"
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return "domain label starts or ends with a hyphen"
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Sprintf("character %q not allowed in domain", rune(c))
			}
		}
	}
	if labels < 2 {
		return "domain has no dot"
	}
	return ""
}

// NormalizePhone returns a phone number as digits with its country code.
//
// The base rule is Meta's parameter builder's: keep the ASCII digits and drop
// leading zeros, so "+44 20 7946 0958" and "0044 20 7946 0958" both become
// "442079460958". Meta's vectors come from libraries that know no default
// region, so they expect digits only ("(555) 123-4567" -> "5551234567").
//
// On top of it, when country (ISO-3166 alpha-2) is given and the value is a
// national number that libphonenumber finds possible for that country, the
// country code is put in front and the national trunk prefix dropped:
// "0532 412 87 19" with "TR" becomes "905324128719". A value written in
// international form (a "+", or the region's international prefix) keeps its
// own code; where it is a valid number, its national trunk prefix is dropped
// too ("+90 0532 412 87 19" -> "905324128719"), otherwise the digits are
// kept as the vectors want. Digits that already start with the region's
// country code and parse as such keep it ("905324128719" stays).
func NormalizePhone(s, country string) (string, error) {
	return NormalizePhoneWith(s, country, nil)
}

// PhoneKeyWhole returns the key NormalizePhone gives s for country when s
// is a whole phone number, one libphonenumber finds valid there (read as
// national, or international with a "+", the region's international prefix
// or the country code in front), and false for anything less: part of a
// number, an extension, a hash. The inbox searches a whole number by its
// leads' phone keys, and part of one as text.
func PhoneKeyWhole(s, country string) (string, bool) {
	t := asciiDigits(trim(s))
	if t == "" || looksHashed(t) {
		return "", false
	}
	region := strings.ToUpper(country)
	if region == "" || phonenumbers.GetCountryCodeForRegion(region) == 0 {
		region = "ZZ"
	}
	pn, err := ParsePhone(t, region)
	if err != nil || pn.GetExtension() != "" || !phonenumbers.IsValidNumber(pn) {
		return "", false
	}
	k, err := NormalizePhone(s, country)
	if err != nil {
		return "", false
	}
	return k, true
}

// PhoneParser parses a phone number as
// phonenumbers.ParseAndKeepRawInputToNumber does: NormalizePhoneWith and
// qualify.CheckPhoneWith take one, so a caller that needs both parses the
// number once (libphonenumber's parse is tens of microseconds).
type PhoneParser func(raw, region string) (*phonenumbers.PhoneNumber, error)

// NormalizePhoneWith is NormalizePhone with the number parsed by parse
// (nil: parsed here).
func NormalizePhoneWith(s, country string, parse PhoneParser) (string, error) {
	// A number typed in Arabic-Indic or Persian digits is the same number,
	// and Meta matches it in ASCII digits. Full-width digits stay refused,
	// as Meta's own normaliser refuses them (its vectors say so).
	t := asciiDigits(trim(s))
	if t == "" {
		return "", reject(FieldPhone, "empty")
	}
	if looksHashed(t) {
		return t, nil
	}
	digits := phoneDigits(t)
	if digits == "" {
		return "", reject(FieldPhone, "no digits other than leading zeros")
	}
	if n, ok := phoneWithCountry(t, country, parse); ok {
		return n, nil
	}
	return digits, nil
}

// asciiDigits writes every decimal digit of another script (Unicode
// category Nd: Arabic-Indic ٠١٢, Persian ۰۱۲, ...) as its ASCII digit,
// but for full-width ones (０１２), which Meta's normaliser refuses; text
// without such digits comes back as it is.
func asciiDigits(s string) string {
	other := func(r rune) bool { return r >= utf8.RuneSelf && unicode.IsDigit(r) && (r < '０' || r > '９') }
	i := strings.IndexFunc(s, other)
	if i < 0 {
		return s
	}
	b := []byte(s[:i])
	for _, r := range s[i:] {
		if other(r) {
			r = '0' + digitOf(r)
		}
		b = utf8.AppendRune(b, r)
	}
	return string(b)
}

// digitOf is the value of a decimal digit: Unicode puts each script's
// digits in runs of ten from its zero.
func digitOf(r rune) rune {
	for _, rg := range unicode.Nd.R16 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			return (r - rune(rg.Lo)) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			return (r - rune(rg.Lo)) % 10
		}
	}
	return 0
}

// phoneDigits keeps the ASCII digits of s and drops leading zeros.
func phoneDigits(s string) string {
	var buf [32]byte
	b := buf[:0]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' && (c != '0' || len(b) > 0) {
			b = append(b, c)
		}
	}
	return string(b)
}

// phoneWithCountry parses s with libphonenumber and returns country code and
// national significant number when the rules in NormalizePhone allow.
func phoneWithCountry(s, country string, parse PhoneParser) (string, bool) {
	region := "ZZ"
	if country != "" {
		region = strings.ToUpper(country)
		if phonenumbers.GetCountryCodeForRegion(region) == 0 {
			region = "ZZ"
		}
	}
	international := s[0] == '+'
	if region == "ZZ" && !international {
		return "", false
	}
	if parse == nil {
		parse = ParsePhone
	}
	pn, err := parse(s, region)
	if err != nil {
		return "", false
	}
	switch pn.GetCountryCodeSource() {
	case phonenumbers.PhoneNumber_FROM_DEFAULT_COUNTRY:
		if !phonenumbers.IsPossibleNumber(pn) {
			return "", false
		}
	case phonenumbers.PhoneNumber_FROM_NUMBER_WITH_PLUS_SIGN, phonenumbers.PhoneNumber_FROM_NUMBER_WITH_IDD:
		// Extensions are kept by the vectors (digits run together), so only a
		// plain valid number is rewritten.
		if pn.GetExtension() != "" || !phonenumbers.IsValidNumber(pn) {
			return "", false
		}
	default:
		return "", false
	}
	return strconv.Itoa(int(pn.GetCountryCode())) + phonenumbers.GetNationalSignificantNumber(pn), true
}

// ParsePhone is the PhoneParser that parses every time.
func ParsePhone(raw, region string) (*phonenumbers.PhoneNumber, error) {
	var pn phonenumbers.PhoneNumber
	if err := phonenumbers.ParseAndKeepRawInputToNumber(raw, region, &pn); err != nil {
		return nil, err
	}
	return &pn, nil
}

// PhoneMemo parses phone numbers like ParsePhone and keeps the last
// answer: the checks of one lead's phone share its parse. It is for one
// goroutine.
type PhoneMemo struct {
	raw, region string
	n           *phonenumbers.PhoneNumber
	err         error
	done        bool
}

// Parse is a PhoneParser: the last answer again for the same raw number
// and region.
func (m *PhoneMemo) Parse(raw, region string) (*phonenumbers.PhoneNumber, error) {
	if m.done && m.raw == raw && m.region == region {
		return m.n, m.err
	}
	m.n, m.err = ParsePhone(raw, region)
	m.raw, m.region, m.done = raw, region, true
	return m.n, m.err
}

// isNamePunct is ASCII punctuation, which Meta's builder strips from names.
func isNamePunct(r rune) bool {
	return r < utf8.RuneSelf && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", byte(r)) >= 0
}

// normalizeName lowercases a first or last name and removes white space and
// ASCII punctuation; letters of every script are kept ("José" -> "josé").
func normalizeName(field, s string) (string, error) {
	t := trim(s)
	if looksHashed(t) {
		return t, nil
	}
	t = unicodeLower(t)
	out := strings.Map(func(r rune) rune {
		if isSpace(r) || isNamePunct(r) {
			return -1
		}
		return r
	}, t)
	if out == "" {
		return "", reject(field, "empty after removing spaces and punctuation")
	}
	return out, nil
}

// keepAlnum keeps ASCII letters (lowercased) and digits of s.
func keepAlnum(s string, letters, digits bool) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z' && letters:
			b = append(b, c+'a'-'A')
		case c >= 'a' && c <= 'z' && letters, c >= '0' && c <= '9' && digits:
			b = append(b, c)
		}
	}
	return string(b)
}

// normalizeCity keeps the Roman letters and digits, lowercased, as Meta's
// builder does (accented letters are dropped: "Zürich" -> "zrich"); the
// result must start with a letter.
func normalizeCity(s string) (string, error) {
	t := trim(s)
	if looksHashed(t) {
		return t, nil
	}
	out := keepAlnum(t, true, true)
	if out == "" {
		return "", reject(FieldCity, "no Roman letters or digits")
	}
	if out[0] < 'a' || out[0] > 'z' {
		return "", reject(FieldCity, "does not start with a Roman letter")
	}
	return out, nil
}

// normalizeTwoLetter turns a state or country into its two-letter code:
// letters only, lowercased; a two-letter value is kept; a known name, or a
// value containing one, becomes its code; anything else is cut to two
// letters.
func normalizeTwoLetter(field, s string, codes map[string]string, names []string) (string, error) {
	t := trim(s)
	if looksHashed(t) {
		return t, nil
	}
	l := keepAlnum(t, true, false)
	switch {
	case l == "":
		return "", reject(field, "no Roman letters")
	case len(l) <= 2:
		return l, nil
	}
	if c, ok := codes[l]; ok {
		return c, nil
	}
	for _, n := range names {
		if strings.Contains(l, n) {
			return codes[n], nil
		}
	}
	return l[:2], nil
}

// normalizeZip lowercases a postal code and keeps what comes before the
// first hyphen ("98121-9431" -> "98121"); inner spaces stay, as in Meta's
// builder ("V6B 1A1" -> "v6b 1a1"), except in a US ZIP+4, whose five digits
// are the code however they were spaced ("98 121-9431" -> "98121", as in
// Meta's SDK tests). At least two bytes are needed.
func normalizeZip(s string) (string, error) {
	t := trim(s)
	if looksHashed(t) {
		return t, nil
	}
	if i := strings.IndexByte(t, '-'); i >= 0 {
		head, tail := t[:i], trim(t[i+1:])
		t = head
		if digits := strings.ReplaceAll(head, " ", ""); len(digits) == 5 && allASCIIDigits(digits) &&
			len(tail) == 4 && allASCIIDigits(tail) {
			t = digits
		}
	}
	t = trim(unicodeLower(t))
	if len(t) < 2 {
		return "", reject(FieldZip, "shorter than two characters")
	}
	return t, nil
}

// normalizeExternalID lowercases an external id and removes its white space.
func normalizeExternalID(s string) (string, error) {
	t := trim(s)
	if looksHashed(t) {
		return t, nil
	}
	out := strings.Map(func(r rune) rune {
		if isSpace(r) {
			return -1
		}
		return r
	}, unicodeLower(t))
	if out == "" {
		return "", reject(FieldExternalID, "empty")
	}
	return out, nil
}

// normalizeGender maps a word for a man or a woman to "m" or "f". A note in
// brackets after the word is not part of it ("MALE (GenderEnum)", "Female
// (she/her)"), as in Meta's Java SDK tests; anything else beside the word
// ("male female", "m/f") is no gender.
func normalizeGender(s string) (string, error) {
	t := trim(s)
	if looksHashed(t) {
		return t, nil
	}
	if i := strings.IndexByte(t, '('); i > 0 && strings.HasSuffix(t, ")") &&
		isSpace(rune(t[i-1])) && !strings.ContainsAny(t[i+1:len(t)-1], "()") {
		t = trim(t[:i])
	}
	switch g := genders[asciiLower(t)]; g {
	case "m", "f":
		return g, nil
	}
	return "", reject(FieldGender, "not a recognised gender (m or f)")
}

// normalizeBirthDate reads a date of birth written with any separators, in
// year-month-day, month-day-year or day-month-year order (the order is
// inferred from which numbers can be a year, a month and a day), or as eight
// digits, and returns YYYYMMDD.
func normalizeBirthDate(s string) (string, error) {
	t := trim(s)
	if looksHashed(t) {
		return t, nil
	}
	var groups [3]string
	n := 0
	for i := 0; i < len(t); {
		if t[i] < '0' || t[i] > '9' {
			i++
			continue
		}
		j := i
		for j < len(t) && t[j] >= '0' && t[j] <= '9' {
			j++
		}
		if n < 3 {
			groups[n] = t[i:j]
		}
		n++
		i = j
	}
	if n >= 3 {
		if d, ok := dateFromNumbers(atoi(groups[0]), atoi(groups[1]), atoi(groups[2])); ok {
			return d, nil
		}
	}
	if n == 1 && len(groups[0]) == 8 {
		return groups[0], nil
	}
	return "", reject(FieldBirthDate, "not a date (year, month and day)")
}

func atoi(s string) int {
	if len(s) > 9 {
		return 1 << 30
	}
	n, _ := strconv.Atoi(s)
	return n
}

// maxBirthYear bounds a plausible year of birth: next year, as in Meta's
// builder.
func maxBirthYear() int { return time.Now().Year() + 1 }

func dateFromNumbers(n1, n2, n3 int) (string, bool) {
	var y, m, d int
	switch {
	case n1 > 31:
		y, m, d = n1, n2, n3
		if n2 > 12 {
			m, d = n3, n2
		}
	case n2 > 31:
		y, m, d = n2, n3, n1
		if n3 > 12 {
			m, d = n1, n3
		}
	default:
		y, m, d = n3, n1, n2
		if n1 > 12 {
			m, d = n2, n1
		}
	}
	if y < 1800 || y > maxBirthYear() || m < 1 || m > 12 || d < 1 || d > 31 {
		return "", false
	}
	return fmt.Sprintf("%04d%02d%02d", y, m, d), true
}

// allASCIIDigits tells whether s is one or more of the digits 0-9.
func allASCIIDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
