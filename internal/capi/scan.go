package capi

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file reads stored payloads without encoding/json's reflection and
// its two passes (a validity scan, then the decode), for the two things
// the drain does with every payload: Check reads the fields Precheck looks
// at (readEvent) and Send copies the payload into the request
// (isMarshaled). Both answer only when they are sure to agree with
// encoding/json; anything unusual (a syntax error, a null, a type
// json.Unmarshal would refuse, a key it might match by case) makes them
// say so, and the caller goes to encoding/json, which then decides and
// words any error exactly as before. FuzzReadEvent and FuzzAppendBody hold
// them to that.

// maxScanDepth bounds the nesting the scanner follows; deeper payloads go
// to encoding/json (whose own limit is 10,000).
const maxScanDepth = 100

// Classes of a byte inside a JSON string, for jsonScan.str.
const (
	byteOrdinary = iota
	byteQuote
	byteBackslash
	byteControl // below 0x20: not allowed in a JSON string
	byteHTML    // <, > or &: json.Marshal writes them as \u003c, \u003e, \u0026
	byteHigh    // 0x80 and above: UTF-8 to check
)

var strClass = func() (t [256]uint8) {
	for c := range 0x20 {
		t[c] = byteControl
	}
	t['"'], t['\\'] = byteQuote, byteBackslash
	t['<'], t['>'], t['&'] = byteHTML, byteHTML, byteHTML
	for c := 0x80; c < 0x100; c++ {
		t[c] = byteHigh
	}
	return t
}()

// jsonScan walks JSON bytes as RFC 8259 (and encoding/json) accept them.
type jsonScan struct {
	b []byte
	i int
	// src is b as a string, for readEvent: the strings it reads are
	// pieces of it, one allocation a payload rather than one a field;
	// lists holds their lists, the same.
	src   string
	lists []string
	// spaced: whitespace was met between tokens; escaped: a string held
	// a byte json.Marshal escapes (<, >, &, U+2028, U+2029).
	spaced, escaped bool
	// floats: numbers must fit a float64, as json.Unmarshal wants of those
	// it decodes into an interface (custom_data's).
	floats bool
}

func (s *jsonScan) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
			s.spaced = true
		default:
			return
		}
	}
}

// next skips whitespace and then c, telling whether c was there.
func (s *jsonScan) next(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string at s.i (whitespace already skipped). raw is what is
// between its quotes; plain tells that it has no escape and is valid
// UTF-8, so that json.Unmarshal gives its bytes as they are.
func (s *jsonScan) str() (raw []byte, plain, ok bool) {
	b := s.b // a local: the loops below need not load it again
	if s.i >= len(b) || b[s.i] != '"' {
		return nil, false, false
	}
	start := s.i + 1
	plain, ascii := true, true
	for i := start; i < len(b); i++ {
		// Most bytes are ordinary: pass them in a tight loop.
		for i < len(b) && strClass[b[i]] == byteOrdinary {
			i++
		}
		if i == len(b) {
			break
		}
		switch strClass[b[i]] {
		case byteQuote:
			raw = b[start:i]
			s.i = i + 1
			if !ascii && plain {
				plain = utf8.Valid(raw)
			}
			return raw, plain, true
		case byteBackslash:
			plain = false
			i++
			if i >= len(b) {
				return nil, false, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) || !isHex(string(b[i+1:i+5]), 4) {
					return nil, false, false
				}
				i += 4
			default:
				return nil, false, false
			}
		case byteControl:
			return nil, false, false
		case byteHTML:
			s.escaped = true
		case byteHigh:
			ascii = false
			if b[i] == 0xE2 && i+2 < len(b) && b[i+1] == 0x80 && b[i+2]&^1 == 0xA8 {
				s.escaped = true
			}
		}
	}
	return nil, false, false
}

// number reads a number at s.i: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jsonScan) number() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i++; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		}
	}
	if s.floats {
		if _, err := strconv.ParseFloat(string(b[s.i:i]), 64); err != nil {
			return false // 1e400: json.Unmarshal's error
		}
	}
	s.i = i
	return true
}

// literal reads word (true, false or null) at s.i.
func (s *jsonScan) literal(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// value skips any JSON value, checking its syntax.
func (s *jsonScan) value(depth int) bool {
	s.space()
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, _, ok := s.str()
		return ok
	case c == '{':
		if depth >= maxScanDepth {
			return false
		}
		s.i++
		if s.next('}') {
			return true
		}
		for {
			s.space()
			if _, _, ok := s.str(); !ok || !s.next(':') || !s.value(depth+1) {
				return false
			}
			if s.next('}') {
				return true
			}
			if !s.next(',') {
				return false
			}
		}
	case c == '[':
		if depth >= maxScanDepth {
			return false
		}
		s.i++
		if s.next(']') {
			return true
		}
		for {
			if !s.value(depth + 1) {
				return false
			}
			if s.next(']') {
				return true
			}
			if !s.next(',') {
				return false
			}
		}
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	}
	return false
}

// isMarshaled tells whether p is one JSON value exactly as json.Marshal
// writes a json.RawMessage: valid, with no whitespace between tokens and
// nothing json.Marshal escapes, so that it can go into a request as it is.
// Payloads written by json.Marshal or AppendPageView are.
func isMarshaled(p []byte) bool {
	s := jsonScan{b: p}
	return s.value(0) && s.i == len(p) && !s.spaced && !s.escaped
}

// eventKeys and userDataKeys are the JSON names of Event's and UserData's
// fields, which encoding/json also matches in any case.
var (
	eventKeys = []string{"event_name", "event_time", "event_id", "action_source", "event_source_url",
		"referrer_url", "messaging_channel", "opt_out", "user_data", "custom_data"}
	userDataKeys = []string{"em", "ph", "fn", "ln", "ge", "db", "ct", "st", "zp", "country", "external_id",
		"client_ip_address", "client_user_agent", "fbc", "fbp", "lead_id", "ctwa_clid", "page_id",
		"subscription_id", "fb_login_id", "whatsapp_business_account_id"}
)

// readEvent decodes from p the fields of e that Precheck reads, giving
// them the values json.Unmarshal would (the others stay unset). It returns
// false when it cannot be sure that json.Unmarshal would decode p without
// error to those values; e is then to be thrown away and p decoded by
// json.Unmarshal.
func readEvent(p []byte, e *Event) bool {
	s := jsonScan{b: p, src: string(p), lists: make([]string, 0, 12)}
	if !s.object(func(key []byte) bool { return s.eventField(key, e) }) {
		return false
	}
	s.space()
	return s.i == len(p)
}

// object reads an object whose every member's value field reads: false
// for a key with an escape or invalid UTF-8, or a syntax error.
func (s *jsonScan) object(field func(key []byte) bool) bool {
	if !s.next('{') {
		return false
	}
	if s.next('}') {
		return true
	}
	for {
		s.space()
		raw, plain, ok := s.str()
		if !ok || !plain || !s.next(':') {
			return false
		}
		s.space()
		if !field(raw) {
			return false
		}
		if s.next('}') {
			return true
		}
		if !s.next(',') {
			return false
		}
	}
}

// other skips the value of a key that is none of known, unless
// encoding/json might match it to one of them by case.
func (s *jsonScan) other(key []byte, known []string) bool {
	for _, k := range known {
		if strings.EqualFold(string(key), k) {
			return false
		}
	}
	for i := range len(key) {
		if key[i] >= utf8.RuneSelf {
			return false // encoding/json folds some non-ASCII letters to ASCII ones
		}
	}
	return s.value(1)
}

func (s *jsonScan) eventField(key []byte, e *Event) bool {
	switch string(key) {
	case "event_name":
		return s.text(&e.EventName)
	case "event_time":
		return s.int64(&e.EventTime)
	case "action_source":
		return s.text(&e.ActionSource)
	case "event_source_url":
		return s.text(&e.EventSourceURL)
	case "messaging_channel":
		return s.text(&e.MessagingChannel)
	case "event_id", "referrer_url":
		_, _, ok := s.str()
		return ok
	case "opt_out":
		return s.literal("true") || s.literal("false")
	case "user_data":
		u := &e.UserData
		return s.object(func(key []byte) bool { return s.userField(key, u) })
	case "custom_data":
		if s.i >= len(s.b) || s.b[s.i] != '{' {
			return false
		}
		s.floats = true
		ok := s.value(1)
		s.floats = false
		return ok
	}
	return s.other(key, eventKeys)
}

func (s *jsonScan) userField(key []byte, u *UserData) bool {
	switch string(key) {
	case "em":
		return s.texts(&u.Email)
	case "ph":
		return s.texts(&u.Phone)
	case "fn":
		return s.texts(&u.FirstName)
	case "ln":
		return s.texts(&u.LastName)
	case "ge":
		return s.texts(&u.Gender)
	case "db":
		return s.texts(&u.DateOfBirth)
	case "ct":
		return s.texts(&u.City)
	case "st":
		return s.texts(&u.State)
	case "zp":
		return s.texts(&u.Zip)
	case "country":
		return s.texts(&u.Country)
	case "external_id":
		return s.texts(&u.ExternalID)
	case "client_ip_address":
		return s.text(&u.ClientIPAddress)
	case "client_user_agent":
		return s.text(&u.ClientUserAgent)
	case "fbc":
		return s.text(&u.FBC)
	case "fbp":
		return s.text(&u.FBP)
	case "ctwa_clid":
		return s.text(&u.CTWAClid)
	case "subscription_id":
		return s.text(&u.SubscriptionID)
	case "fb_login_id":
		return s.text(&u.FBLoginID)
	case "whatsapp_business_account_id":
		return s.text(&u.WhatsAppBusinessAccountID)
	case "page_id":
		_, _, ok := s.str()
		return ok
	case "lead_id":
		// A number is kept as its digits; a string (json.Number takes
		// one holding a number) goes to encoding/json.
		start := s.i
		if s.i >= len(s.b) || s.b[s.i] != '-' && (s.b[s.i] < '0' || s.b[s.i] > '9') || !s.number() {
			return false
		}
		u.LeadID = json.Number(s.b[start:s.i])
		return true
	}
	return s.other(key, userDataKeys)
}

// text reads a string into dst. One with an escape or invalid UTF-8 (rare
// in what we write) is unquoted by encoding/json itself.
func (s *jsonScan) text(dst *string) bool {
	start := s.i
	raw, plain, ok := s.str()
	switch {
	case !ok:
		return false
	case plain:
		*dst = s.src[s.i-1-len(raw) : s.i-1]
		return true
	}
	var v string
	if json.Unmarshal(s.b[start:s.i], &v) != nil {
		return false
	}
	*dst = v
	return true
}

// texts reads an array of strings into dst, replacing what it held (as
// json.Unmarshal does; an empty array gives an empty, non-nil slice).
func (s *jsonScan) texts(dst *[]string) bool {
	if !s.next('[') {
		return false
	}
	from := len(s.lists)
	if !s.next(']') {
		for {
			var v string
			s.space()
			if !s.text(&v) {
				return false
			}
			s.lists = append(s.lists, v)
			if s.next(']') {
				break
			}
			if !s.next(',') {
				return false
			}
		}
	}
	*dst = s.lists[from:len(s.lists):len(s.lists)]
	return true
}

// int64 reads an integer into dst; a fraction, an exponent or a number
// out of range makes json.Unmarshal refuse the payload, and so false.
func (s *jsonScan) int64(dst *int64) bool {
	start := s.i
	if s.i >= len(s.b) || s.b[s.i] != '-' && (s.b[s.i] < '0' || s.b[s.i] > '9') || !s.number() {
		return false
	}
	n, err := strconv.ParseInt(string(s.b[start:s.i]), 10, 64)
	if err != nil {
		return false
	}
	*dst = n
	return true
}
