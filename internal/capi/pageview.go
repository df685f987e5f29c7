package capi

import (
	"encoding/json"
	"strconv"
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
// printable ASCII other than the quote, the backslash and <, > and & (which
// encoding/json escapes for HTML) is copied; anything else is left to
// encoding/json.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always encodes
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
