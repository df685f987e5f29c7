package qualify

import (
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// phoneResult is what the phone rules found: at most one reason, and
// whether the number can reach someone.
type phoneResult struct {
	code     string
	evidence map[string]any
	usable   bool
}

// fictionalRange is a block of numbers reserved for films, TV and examples:
// national significant numbers starting with prefix.
type fictionalRange struct {
	cc     int32
	prefix string
	label  string
}

// fictionalRanges are the published drama and example ranges. Numbers in
// them never reach a person.
var fictionalRanges = [...]fictionalRange{
	// UK, Ofcom's numbers for drama.
	{44, "7700900", "UK drama 07700 900xxx"},
	{44, "1632960", "UK drama 01632 960xxx"},
	{44, "2079460", "UK drama 020 7946 0xxx"},
	{44, "1134960", "UK drama 0113 496 0xxx"},
	{44, "1144960", "UK drama 0114 496 0xxx"},
	{44, "1154960", "UK drama 0115 496 0xxx"},
	{44, "1174960", "UK drama 0117 496 0xxx"},
	{44, "1214960", "UK drama 0121 496 0xxx"},
	{44, "1314960", "UK drama 0131 496 0xxx"},
	{44, "1414960", "UK drama 0141 496 0xxx"},
	{44, "1514960", "UK drama 0151 496 0xxx"},
	{44, "1614960", "UK drama 0161 496 0xxx"},
	{44, "2890180", "UK drama 028 9018 0xxx"},
	{44, "2920180", "UK drama 029 2018 0xxx"},
	{44, "3069990", "UK drama 03069 990xxx"},
	{44, "8081570", "UK drama 08081 570xxx"},
	{44, "9098790", "UK drama 0909 879 0xxx"},
	// Australia, ACMA's numbers for fiction.
	{61, "49157", "AU fiction 0491 57x xxx"},
	{61, "25550", "AU fiction 02 5550 xxxx"},
	{61, "35550", "AU fiction 03 5550 xxxx"},
	{61, "75550", "AU fiction 07 5550 xxxx"},
	{61, "85550", "AU fiction 08 5550 xxxx"},
	{61, "27010", "AU fiction 02 7010 xxxx"},
	{61, "37010", "AU fiction 03 7010 xxxx"},
	{61, "77010", "AU fiction 07 7010 xxxx"},
	{61, "87010", "AU fiction 08 7010 xxxx"},
}

// fictional returns the fictional range a number is in, or "".
func fictional(cc int32, nsn string) string {
	if cc == 1 && len(nsn) == 10 && nsn[3:6] == "555" {
		// 555-0100..0199 is reserved for fiction; the rest of the 555
		// exchange was kept for information services and is not a person's.
		if nsn[6:8] == "01" {
			return "NANP 555-01xx"
		}
		return "NANP 555 exchange"
	}
	for _, f := range fictionalRanges {
		if f.cc == cc && strings.HasPrefix(nsn, f.prefix) {
			return f.label
		}
	}
	return ""
}

// digitPattern tells what made-up pattern a string of digits is, or "":
// all one digit, a run up or down, one short group repeated, or too few
// distinct digits.
func digitPattern(d string) string {
	if len(d) < 6 {
		return ""
	}
	same, up, down := true, true, true
	var seen [10]bool
	distinct := 0
	for i := 0; i < len(d); i++ {
		c := d[i] - '0'
		if !seen[c] {
			seen[c] = true
			distinct++
		}
		if i == 0 {
			continue
		}
		p := d[i-1] - '0'
		same = same && c == p
		up = up && c == (p+1)%10
		down = down && c == (p+9)%10
	}
	switch {
	case same:
		return "all_same"
	case up:
		return "ascending"
	case down:
		return "descending"
	case distinct <= 2:
		return "few_distinct"
	}
	for unit := 2; unit <= 3; unit++ {
		rep := true
		for i := unit; i < len(d); i++ {
			if d[i] != d[i-unit] {
				rep = false
				break
			}
		}
		if rep {
			return "repeating"
		}
	}
	return ""
}

// phonePattern checks the whole national number, then its subscriber part
// (the last seven digits), which is where people invent when they give a
// real operator prefix: 0532 111 11 11.
func phonePattern(nsn string) (pattern, part string) {
	if p := digitPattern(nsn); p != "" {
		return p, "number"
	}
	if len(nsn) >= 9 {
		if p := digitPattern(nsn[len(nsn)-7:]); p != "" {
			return p, "subscriber"
		}
	}
	return "", ""
}

func digitsOf(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; '0' <= c && c <= '9' {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// checkPhone judges a phone number given in region (the site's country, as
// ISO 3166 code). Numbers without a country code are read as national
// numbers of region; when region is empty they can only be checked for
// patterns.
func checkPhone(raw, region string, parse func(raw, region string) (*phonenumbers.PhoneNumber, error)) phoneResult {
	raw = strings.TrimSpace(raw)
	digits := digitsOf(raw)
	if digits == "" {
		return phoneResult{code: CodePhoneInvalid, evidence: map[string]any{"problem": "no digits", "region": regionOr(region)}}
	}
	intl := strings.HasPrefix(raw, "+") || strings.HasPrefix(digits, "00")
	if region == "" && !intl {
		// Without a region a national number cannot be validated: judge
		// the digits only (leading trunk zeros removed).
		d := strings.TrimLeft(digits, "0")
		if p, part := phonePattern(d); p != "" {
			return phoneResult{code: CodePhonePattern, evidence: map[string]any{"pattern": p, "part": part}}
		}
		if len(d) < 6 || len(d) > 15 {
			return phoneResult{code: CodePhoneInvalid, evidence: map[string]any{"problem": "impossible length", "region": "unknown"}}
		}
		return phoneResult{usable: true}
	}
	parseRegion := region
	if parseRegion == "" {
		parseRegion = "ZZ"
	}
	if parse == nil {
		parse = phonenumbers.Parse
	}
	n, err := parse(raw, parseRegion)
	if err != nil {
		d := strings.TrimLeft(digits, "0")
		if p, part := phonePattern(d); p != "" {
			return phoneResult{code: CodePhonePattern, evidence: map[string]any{"pattern": p, "part": part}}
		}
		return phoneResult{code: CodePhoneInvalid, evidence: map[string]any{"problem": "not a phone number", "region": regionOr(region)}}
	}
	nsn := phonenumbers.GetNationalSignificantNumber(n)
	cc := n.GetCountryCode()
	// A number is valid exactly when libphonenumber can give it a type;
	// asking once saves a second pass over the metadata.
	t := phonenumbers.GetNumberType(n)
	valid := t != phonenumbers.UNKNOWN
	if valid {
		// Special-rate numbers are vanity numbers by design (444 1 444), so
		// their type is judged before their digits.
		switch {
		case t == phonenumbers.PREMIUM_RATE:
			return phoneResult{code: CodePhonePremium, evidence: map[string]any{"type": "premium_rate"}}
		case t == phonenumbers.TOLL_FREE:
			return phoneResult{code: CodePhoneBusiness, evidence: map[string]any{"type": "toll_free"}, usable: true}
		case t == phonenumbers.SHARED_COST:
			return phoneResult{code: CodePhoneBusiness, evidence: map[string]any{"type": "shared_cost"}, usable: true}
		case t == phonenumbers.UAN:
			return phoneResult{code: CodePhoneBusiness, evidence: map[string]any{"type": "company_number"}, usable: true}
		case t == phonenumbers.VOIP && cc == 90:
			// Turkey's 850 numbers are company lines.
			return phoneResult{code: CodePhoneBusiness, evidence: map[string]any{"type": "company_number"}, usable: true}
		}
	}
	if f := fictional(cc, nsn); f != "" {
		return phoneResult{code: CodePhoneFictional, evidence: map[string]any{"range": f}}
	}
	if p, part := phonePattern(nsn); p != "" {
		return phoneResult{code: CodePhonePattern, evidence: map[string]any{"pattern": p, "part": part}}
	}
	if !valid {
		if !intl && region != "" && digits[0] != '0' {
			// A customer abroad may give their own country code without the
			// "+" (46 70 482 17 35): a number valid that way is theirs.
			if alt := checkPhone("+"+digits, region, parse); alt.usable && alt.code == "" {
				return alt
			}
		}
		problem := "invalid"
		if !phonenumbers.IsPossibleNumber(n) {
			problem = "impossible length"
		}
		r := phonenumbers.GetRegionCodeForNumber(n)
		if r == "" {
			r = phonenumbers.GetRegionCodeForCountryCode(int(cc))
		}
		return phoneResult{code: CodePhoneInvalid, evidence: map[string]any{"problem": problem, "region": regionOr(r)}}
	}
	return phoneResult{usable: true}
}

func regionOr(r string) string {
	if r == "" || r == "ZZ" {
		return "unknown"
	}
	return r
}
