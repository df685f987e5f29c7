package capi

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// AppendPageView appends e as json.Marshal would write it, when e holds only
// what a visit's PageView holds (its name, time, id, action source, page and
// referrer, and IP, user agent, fbc and fbp), and reports false, appending
// nothing, for any other event. Every visit encodes one, so this skips
// encoding/json's reflection for the common shape; the bytes are the same
// (TestAppendPageViewMatchesMarshal).
func AppendPageView(dst []byte, e *Event) ([]byte, bool) {
	u := &e.UserData
	if e.MessagingChannel != "" || e.OptOut || e.CustomData != nil || u.LeadID != "" || u.CTWAClid != "" ||
		u.PageID != "" || u.SubscriptionID != "" || u.FBLoginID != "" || u.WhatsAppBusinessAccountID != "" {
		return dst, false
	}
	for _, l := range u.hashedLists() {
		if len(l) != 0 {
			return dst, false
		}
	}
	dst = append(dst, `{"event_name":`...)
	dst = appendJSONString(dst, e.EventName)
	dst = append(dst, `,"event_time":`...)
	dst = strconv.AppendInt(dst, e.EventTime, 10)
	dst = appendField(dst, `,"event_id":`, e.EventID)
	dst = append(dst, `,"action_source":`...)
	dst = appendJSONString(dst, e.ActionSource)
	dst = appendField(dst, `,"event_source_url":`, e.EventSourceURL)
	dst = appendField(dst, `,"referrer_url":`, e.ReferrerURL)
	dst = append(dst, `,"user_data":{`...)
	n := len(dst)
	dst = appendField(dst, `,"client_ip_address":`, u.ClientIPAddress)
	dst = appendField(dst, `,"client_user_agent":`, u.ClientUserAgent)
	dst = appendField(dst, `,"fbc":`, u.FBC)
	dst = appendField(dst, `,"fbp":`, u.FBP)
	if len(dst) > n {
		// The first field's comma goes.
		dst = append(dst[:n], dst[n+1:]...)
	}
	return append(dst, "}}"...), true
}

// appendField appends a string field that is left out when empty
// (omitempty); key comes with its comma and colon.
func appendField(dst []byte, key, v string) []byte {
	if v == "" {
		return dst
	}
	return appendJSONString(append(dst, key...), v)
}

// appendJSONString appends s as a JSON string, as encoding/json writes it:
// the quote and the backslash escaped with a backslash, <, > and & as
// \u003c, \u003e and \u0026 (encoding/json escapes them for HTML), other
// printable ASCII and valid UTF-8 copied; a string with a control
// character, invalid UTF-8, U+2028 or U+2029 is left to encoding/json.
func appendJSONString(dst []byte, s string) []byte {
	n0 := len(dst)
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		for i < len(s) && plainASCII[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
				b, _ := json.Marshal(s) // a string always encodes
				return append(dst[:n0], b...)
			}
			i += size
			continue
		case c < 0x20:
			b, _ := json.Marshal(s)
			return append(dst[:n0], b...)
		case c == '"' || c == '\\':
			dst = append(append(dst, s[start:i]...), '\\', c)
		default: // <, > or &
			dst = append(append(dst, s[start:i]...), '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// plainASCII marks the bytes encoding/json copies as they are, whatever
// follows them: printable ASCII and DEL, but the quote, the backslash, <, >
// and &. Read only.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = !strings.ContainsRune(`"\<>&`, rune(c))
	}
	return t
}()
