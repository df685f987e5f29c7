package capi

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// MaxClockSkew is how far in the future an event_time may be: Meta rejects
// events from the future, and clocks drift.
const MaxClockSkew = 5 * time.Minute

// The rules Precheck names in its errors.
const (
	RuleEventName      = "event_name"
	RuleEventTimeOld   = "event_time_too_old"
	RuleEventTimeAhead = "event_time_in_future"
	RuleActionSource   = "action_source"
	RuleUserAgent      = "website_requires_client_user_agent"
	RuleSourceURL      = "website_requires_event_source_url"
	RuleMessaging      = "business_messaging_requires_messaging_channel"
	RuleMessagingName  = "business_messaging_event_name"
	RuleMessagingUser  = "business_messaging_requires_whatsapp_ids"
	RuleFBC            = "fbc_format"
	RuleFBP            = "fbp_format"
	RuleHashed         = "hashed_key_format"
	RuleMatchKey       = "no_strong_match_key"
)

// PrecheckError is an event that would make Meta refuse the request it is
// in. Rule is one of the Rule constants.
type PrecheckError struct {
	Rule   string
	Detail string
}

// Error names the rule and the detail.
func (e *PrecheckError) Error() string {
	return "capi precheck: " + e.Rule + ": " + e.Detail
}

func failed(rule, format string, args ...any) error {
	return &PrecheckError{Rule: rule, Detail: fmt.Sprintf(format, args...)}
}

var actionSources = map[string]bool{
	SourceWebsite: true, SourceSystemGenerated: true, SourcePhoneCall: true, SourceChat: true,
	SourceEmail: true, SourceApp: true, SourcePhysicalStore: true, SourceBusinessMessaging: true,
	SourceOther: true,
}

// Precheck checks an event against Meta's rules before it is put in a
// batch, since one bad event fails the whole request: event_time within the
// last 7 days and not ahead of now by more than MaxClockSkew; a known
// action_source, with client_user_agent and event_source_url for website
// events; well-formed fbc and fbp; hashed keys as 64 lowercase hex; and at
// least one strong match key (em, ph, external_id, fbc, fbp, lead_id,
// ctwa_clid, subscription_id, fb_login_id, or IP with user agent). The error
// is a *PrecheckError naming the rule.
func Precheck(e *Event, now time.Time) error {
	if strings.TrimSpace(e.EventName) == "" {
		return failed(RuleEventName, "event_name is empty")
	}
	at := time.Unix(e.EventTime, 0)
	if e.EventTime <= 0 || now.Sub(at) > model.MaxEventAge {
		return failed(RuleEventTimeOld, "event_time %s is more than 7 days before %s",
			at.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	if at.Sub(now) > MaxClockSkew {
		return failed(RuleEventTimeAhead, "event_time %s is after %s", at.UTC().Format(time.RFC3339),
			now.UTC().Format(time.RFC3339))
	}
	if !actionSources[e.ActionSource] {
		return failed(RuleActionSource, "unknown action_source %q", e.ActionSource)
	}
	u := &e.UserData
	switch e.ActionSource {
	case SourceWebsite:
		if u.ClientUserAgent == "" {
			return failed(RuleUserAgent, "website event without client_user_agent")
		}
		if e.EventSourceURL == "" {
			return failed(RuleSourceURL, "website event without event_source_url")
		}
	case SourceBusinessMessaging:
		if e.MessagingChannel == "" {
			return failed(RuleMessaging, "business_messaging event without messaging_channel")
		}
		if err := precheckMessaging(e); err != nil {
			return err
		}
	}
	if u.FBC != "" {
		if err := CheckFBC(u.FBC, now); err != nil {
			return failed(RuleFBC, "%v", err)
		}
	}
	if u.FBP != "" {
		if err := CheckFBP(u.FBP, now); err != nil {
			return failed(RuleFBP, "%v", err)
		}
	}
	for i, list := range u.hashedLists() {
		for _, v := range list {
			if !IsSHA256Hex(v) {
				return failed(RuleHashed, "%s value is not 64 lowercase hex", HashedFields()[i])
			}
		}
	}
	if len(u.Email) == 0 && len(u.Phone) == 0 && len(u.ExternalID) == 0 && u.FBC == "" && u.FBP == "" &&
		u.LeadID == "" && u.CTWAClid == "" && u.SubscriptionID == "" && u.FBLoginID == "" &&
		(u.ClientIPAddress == "" || u.ClientUserAgent == "") {
		return failed(RuleMatchKey, "no em, ph, external_id, fbc, fbp, lead_id or IP with user agent")
	}
	return nil
}

// precheckMessaging checks a business_messaging event on WhatsApp: an
// event name Meta takes from a conversation, and the WhatsApp Business
// Account id with the ctwa_clid in user_data.
func precheckMessaging(e *Event) error {
	if e.MessagingChannel != ChannelWhatsApp {
		return nil
	}
	if !model.IsMessagingEventName(e.EventName) {
		return failed(RuleMessagingName, "%q is not an event Meta takes from a WhatsApp conversation", e.EventName)
	}
	if e.UserData.WhatsAppBusinessAccountID == "" || e.UserData.CTWAClid == "" {
		return failed(RuleMessagingUser, "a WhatsApp business_messaging event needs user_data.whatsapp_business_account_id and ctwa_clid")
	}
	return nil
}

// CheckFBC checks Meta's click id fb.<subdomainIndex>.<creationTime ms>.<fbclid>
// (a parameter-builder appendix after the fbclid is allowed).
func CheckFBC(fbc string, now time.Time) error {
	return checkCookie("fbc", fbc, now)
}

// CheckFBP checks Meta's browser id fb.<subdomainIndex>.<creationTime ms>.<random>.
func CheckFBP(fbp string, now time.Time) error {
	return checkCookie("fbp", fbp, now)
}

func checkCookie(name, v string, now time.Time) error {
	// strings.SplitN(v, ".", 4) without its slice: checked before every send.
	var parts [4]string
	rest, ok := v, true
	for i := range 3 {
		if parts[i], rest, ok = strings.Cut(rest, "."); !ok {
			break
		}
	}
	parts[3] = rest
	if !ok || parts[0] != "fb" {
		return fmt.Errorf("%s %q is not fb.<index>.<ms>.<value>", name, v)
	}
	if idx, err := strconv.Atoi(parts[1]); err != nil || idx < 0 || idx > 9 {
		return fmt.Errorf("%s %q: subdomain index %q is not 0-9", name, v, parts[1])
	}
	ms, err := strconv.ParseInt(parts[2], 10, 64)
	// Creation times in seconds (10 digits) are a common mistake Meta flags.
	if err != nil || ms < 1e12 {
		return fmt.Errorf("%s %q: creation time %q is not Unix milliseconds", name, v, parts[2])
	}
	if time.UnixMilli(ms).Sub(now) > MaxClockSkew {
		return fmt.Errorf("%s %q: creation time is in the future", name, v)
	}
	if parts[3] == "" {
		return fmt.Errorf("%s %q: value after the creation time is empty", name, v)
	}
	return nil
}
