package web

import (
	"context"
	"encoding/json"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// The causes of a failed delivery, as the owner is told them.
const (
	causeUnreachable = "unreachable" // no answer: network, DNS, timeout
	causeServer      = "server"      // the platform answered with its own error (5xx)
	causeThrottled   = "throttled"   // the platform asked us to slow down
	causeAuth        = "auth"        // the platform refused the access token
	causeRejected    = "rejected"    // the platform (or our check before sending) refused the event
	causeHeld        = "held"        // the platform takes nothing until the account or settings change
)

// failure is what became of a failed delivery in the owner's words: the
// cause and, when the platform answered, what it said.
type failure struct {
	Cause string
	// Said is the platform's own message, empty when it said nothing (it
	// could not be reached, or our check refused the event first).
	Said string
}

// platformName names a destination for the owner.
func platformName(dest string) string {
	if dest == model.DestinationGoogle {
		return "Google Ads"
	}
	return "Meta"
}

// failureOf reads a delivery's stored error and answer: which cause, and
// what the platform said, if it said anything. Errors of our own (a
// cancelled or expired event) have no cause.
func failureOf(dest string, state model.DeliveryState, lastError string, response []byte) failure {
	if lastError == "" {
		return failure{}
	}
	if dest == model.DestinationGoogle {
		return googleFailure(state, lastError)
	}
	if state == model.DeliveryPaused {
		return failure{Cause: causeAuth}
	}
	var answer struct {
		Error *struct {
			Class   string `json:"class"`
			Status  int    `json:"status"`
			Message string `json:"message"`
			UserMsg string `json:"error_user_msg"`
		} `json:"error"`
		Precheck *struct{} `json:"precheck"`
	}
	if json.Unmarshal(response, &answer) != nil || answer.Error == nil && answer.Precheck == nil {
		if state == model.DeliveryDead {
			return failure{Cause: causeRejected}
		}
		return failure{}
	}
	if answer.Precheck != nil {
		return failure{Cause: causeRejected}
	}
	e := answer.Error
	f := failure{}
	if e.Class == "" {
		// Written before the class was stored: only Meta's answers were.
		e.Class = "rejected"
		if state != model.DeliveryDead {
			e.Class = "transient"
		}
		if e.Status == 0 {
			e.Status = -1
		}
	}
	if e.Status != 0 {
		f.Said = e.Message
		if e.UserMsg != "" && e.UserMsg != e.Message {
			f.Said = strings.TrimSuffix(f.Said, ".") + ". " + e.UserMsg
		}
	}
	switch e.Class {
	case "auth":
		f.Cause = causeAuth
	case "throttled":
		f.Cause = causeThrottled
	case "rejected":
		f.Cause = causeRejected
	default:
		f.Cause = causeServer
		if e.Status == 0 {
			f.Cause = causeUnreachable
		}
	}
	return f
}

var googleHTTP = regexp.MustCompile(`^google: HTTP (\d+)`)

// googleFailure reads a Google Ads row's error, which is stored as text.
func googleFailure(state model.DeliveryState, msg string) failure {
	if strings.HasPrefix(msg, "google oauth") {
		return failure{Cause: causeAuth}
	}
	if state == model.DeliveryPaused {
		// The pause's reason is Google's refusal in our words (terms not
		// accepted, no access to the account, ...).
		return failure{Cause: causeHeld, Said: msg}
	}
	if strings.HasPrefix(msg, "google check") {
		return failure{Cause: causeRejected}
	}
	if state == model.DeliverySent {
		// Google took the request only in part: its report on the rest.
		return failure{Said: msg}
	}
	m := googleHTTP.FindStringSubmatch(msg)
	if m == nil && strings.HasPrefix(msg, "google: ") {
		// Google's verdict on this one event.
		return failure{Cause: causeRejected, Said: strings.TrimPrefix(msg, "google: ")}
	}
	if m == nil {
		if state == model.DeliveryRetry {
			return failure{Cause: causeUnreachable}
		}
		if state == model.DeliveryDead {
			return failure{Cause: causeRejected}
		}
		return failure{}
	}
	f := failure{Said: strings.TrimSpace(strings.TrimPrefix(msg, m[0]))}
	f.Said = strings.TrimPrefix(f.Said, ": ")
	switch code, _ := strconv.Atoi(m[1]); {
	case code == 401 || code == 403:
		f.Cause = causeAuth
	case code == 429:
		f.Cause = causeThrottled
	case code >= 500:
		f.Cause = causeServer
	default:
		f.Cause = causeRejected
	}
	return f
}

// causeText says a cause in plain words.
func causeText(lang, platform, cause string) string {
	switch cause {
	case causeUnreachable:
		return tr(lang, "%s could not be reached: its servers did not answer.", platform)
	case causeServer:
		return tr(lang, "%s's servers answered with an error on their side.", platform)
	case causeThrottled:
		return tr(lang, "%s asked us to slow down: too many requests for now.", platform)
	case causeAuth:
		return tr(lang, "%s refused the access token.", platform)
	case causeRejected:
		return tr(lang, "%s refused the event.", platform)
	case causeHeld:
		return tr(lang, "%s takes no events until something is fixed in the account or the site's settings.", platform)
	}
	return ""
}

// stateWord is a delivery state or mode as the owner reads it: "dry_run" is
// "dry run" in English.
func stateWord(lang, s string) string {
	if s == string(model.DeliveryDryRun) && lang != "tr" {
		return "dry run"
	}
	return tr(lang, s)
}

// trouble is one banner: a platform that cannot be reached or refuses, for
// one site.
type trouble struct {
	Site, SiteName, Platform, Cause string
	// Waiting is how many events wait to be sent again; Refused how many
	// were refused and can still be replayed.
	Waiting, Refused int
	Since, Until     string
	// Reason is why the platform holds events, when it said.
	Reason string
	// Fix is what the owner can do, Link where.
	Fix, Link string
}

// troubles gathers the failures of a site's deliveries (every site's when
// site is empty) into one banner per site, platform and cause.
func (s *Server) troubles(ctx context.Context, lang string, site model.SiteID, sites []*model.Site) ([]trouble, error) {
	fails, err := s.db.DeliveryFailures(ctx, site, s.now())
	if err != nil {
		return nil, err
	}
	names, paused := map[model.SiteID]string{}, map[model.SiteID]bool{}
	for _, st := range sites {
		names[st.ID], paused[st.ID] = st.Name, st.PausedReason != ""
	}
	type key struct {
		site  model.SiteID
		dest  string
		cause string
	}
	type acc struct {
		waiting, refused int
		oldest, deadline time.Time
		reason           string
	}
	groups := map[key]*acc{}
	var order []key
	for _, f := range fails {
		if _, ok := names[f.Site]; !ok {
			continue // a site the user may not see
		}
		dest := f.Destination
		if dest == model.DestinationWebhook {
			continue // the site's page lists its posts with their answers
		}
		if dest == model.DestinationMetaLeadgen || dest == "" {
			dest = model.DestinationMeta
		}
		fl := failureOf(dest, f.State, f.LastError, f.Response)
		if fl.Cause == "" || fl.Cause == causeAuth && dest == model.DestinationMeta && paused[f.Site] {
			// The layout's banner already says Meta refused the token.
			continue
		}
		k := key{f.Site, dest, fl.Cause}
		a := groups[k]
		if a == nil {
			a = &acc{}
			groups[k] = a
			order = append(order, k)
		}
		if fl.Cause == causeHeld {
			a.reason = fl.Said
		}
		if f.State == model.DeliveryDead {
			a.refused += f.N
		} else {
			a.waiting += f.N
		}
		if a.oldest.IsZero() || f.Oldest.Before(a.oldest) {
			a.oldest = f.Oldest
		}
		if a.deadline.IsZero() || f.Deadline.Before(a.deadline) {
			a.deadline = f.Deadline
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].site != order[j].site {
			return order[i].site < order[j].site
		}
		return order[i].dest < order[j].dest
	})
	var out []trouble
	for _, k := range order {
		a := groups[k]
		platform := platformName(k.dest)
		t := trouble{Site: string(k.site), SiteName: names[k.site], Platform: platform,
			Cause: causeText(lang, platform, k.cause), Waiting: a.waiting, Refused: a.refused,
			Since: s.when(a.oldest), Until: s.when(a.deadline), Reason: a.reason, Link: "/admin/sites/" + string(k.site)}
		if t.SiteName == "" {
			t.SiteName = string(k.site)
		}
		switch k.cause {
		case causeUnreachable, causeServer, causeThrottled:
			t.Fix, t.Link = tr(lang, "Nothing to do: they are sent again by themselves when %s answers.", platform), ""
		case causeAuth:
			t.Fix = tr(lang, "Set a new access token in the site's settings.")
		case causeHeld:
			t.Fix = tr(lang, "The site's page says why; once it is fixed, resume there.")
		case causeRejected:
			t.Fix = tr(lang, "Open a refused event below to read why; once the cause is fixed, replay it.")
			t.Link = "/admin/deliveries?state=dead&site=" + string(k.site)
		}
		out = append(out, t)
	}
	return out, nil
}

// traceID is Meta's per-request trace id in a stored error, which makes
// otherwise identical failures look different.
var traceID = regexp.MustCompile(`\s*\[fbtrace_id [^\]]*\]`)

// deliveryGroup is a delivery row and the rows listed after it that failed
// the same way, shown as one.
type deliveryGroup struct {
	deliveryRow
	Others []deliveryRow
}

// groupFailures folds rows that failed alike (state, site, platform, the
// same error) into the first of them; other rows stay as they are.
func groupFailures(rows []deliveryRow) []deliveryGroup {
	var out []deliveryGroup
	at := map[string]int{}
	for _, r := range rows {
		if r.LastError == "" || r.State == string(model.DeliverySent) {
			out = append(out, deliveryGroup{deliveryRow: r})
			continue
		}
		k := strings.Join([]string{r.State, r.Site, strconv.FormatBool(r.Google),
			traceID.ReplaceAllString(r.LastError, "")}, "\x00")
		if i, ok := at[k]; ok {
			out[i].Others = append(out[i].Others, r)
			continue
		}
		at[k] = len(out)
		out = append(out, deliveryGroup{deliveryRow: r})
	}
	return out
}
