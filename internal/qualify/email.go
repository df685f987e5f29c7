package qualify

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// emailProblem returns why an address is impossible, or "" when its syntax
// is fine. It accepts what real mail systems deliver (dots, plus tags,
// international letters) and refuses what no mailbox can be: a missing @,
// spaces, empty or doubled dots, a domain without a real top-level part.
func emailProblem(addr string) string {
	if len(addr) > 254 {
		return "too long"
	}
	at := strings.LastIndexByte(addr, '@')
	if at < 0 {
		return "no @"
	}
	local, domain := addr[:at], addr[at+1:]
	switch {
	case local == "":
		return "nothing before @"
	case domain == "":
		return "nothing after @"
	case len(local) > 64:
		return "name too long"
	case local[0] == '.' || local[len(local)-1] == '.' || strings.Contains(local, ".."):
		return "misplaced dot"
	}
	for _, r := range local {
		if r < utf8.RuneSelf {
			if ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') ||
				strings.ContainsRune(".!#$%&'*+/=?^_`{|}~-", r) {
				continue
			}
			return "invalid character"
		}
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return "invalid character"
		}
	}
	if !validDomain(strings.ToLower(domain)) {
		return "invalid domain"
	}
	return ""
}

// validDomain reports whether d (lower case) is a syntactically possible
// internet domain: two or more labels of letters, digits and inner hyphens,
// and a top-level label of two or more letters (or an IDN xn-- label).
func validDomain(d string) bool {
	if len(d) > 253 || !strings.Contains(d, ".") {
		return false
	}
	labels := 0
	for label := range strings.SplitSeq(d, ".") {
		labels++
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(('a' <= r && r <= 'z') || ('0' <= r && r <= '9') || r == '-' || (r >= utf8.RuneSelf && unicode.IsLetter(r))) {
				return false
			}
		}
	}
	tld := d[strings.LastIndexByte(d, '.')+1:]
	if strings.HasPrefix(tld, "xn--") {
		return true
	}
	if utf8.RuneCountInString(tld) < 2 {
		return false
	}
	for _, r := range tld {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return labels >= 2
}

// reservedDomain reports whether d is kept for examples and tests by
// RFC 2606 and RFC 6761, so no real mailbox lives there.
func reservedDomain(d string) bool {
	switch d {
	case "example.com", "example.net", "example.org":
		return true
	}
	tld := d[strings.LastIndexByte(d, '.')+1:]
	switch tld {
	case "test", "example", "invalid", "localhost", "local":
		return true
	}
	return strings.HasSuffix(d, ".example.com") || strings.HasSuffix(d, ".example.org") || strings.HasSuffix(d, ".example.net")
}
