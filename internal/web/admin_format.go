package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
)

// when formats a time for admin pages, in the configured zone.
func (s *Server) when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.In(s.loc).Format("2006-01-02 15:04")
}

// ago says how long ago t was, roughly.
func ago(lang string, now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return tr(lang, "just now")
	case d < time.Hour:
		return tr(lang, "%d min ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return tr(lang, "%d h ago", int(d/time.Hour))
	}
	return tr(lang, "%d days ago", int(d/(24*time.Hour)))
}

// span writes a duration as days and hours, or hours and minutes.
func span(lang string, d time.Duration) string {
	if d >= 24*time.Hour {
		return tr(lang, "%d d %d h", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
	}
	return tr(lang, "%d h %d min", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// confirmBy is when a review lead stops being confirmable: Meta takes the
// qualified event only within 7 days of the submit time, and the site's
// review timeout may end it sooner.
func confirmBy(l *model.Lead) time.Time {
	end := l.SubmittedAt.Add(model.MaxEventAge)
	if l.ReviewUntil != nil && l.ReviewUntil.Before(end) {
		end = *l.ReviewUntil
	}
	return end
}

// windowNote says how long a review lead can still be confirmed; urgent
// under a day.
func windowNote(lang string, l *model.Lead, now time.Time) (note string, urgent bool) {
	if l.Verdict != model.VerdictReview {
		return "", false
	}
	left := confirmBy(l).Sub(now)
	if left <= 0 {
		return tr(lang, "Meta's window has closed"), true
	}
	return tr(lang, "%s left to confirm", span(lang, left)), left < 24*time.Hour
}

// leadName is how a lead is called on pages: its name, else its e-mail or
// phone.
func leadName(lang string, l *model.Lead) string {
	switch {
	case l.Name != "":
		return l.Name
	case l.FirstName != "" || l.LastName != "":
		return strings.TrimSpace(l.FirstName + " " + l.LastName)
	case l.Email != "":
		return l.Email
	case l.Phone != "":
		return l.Phone
	}
	return tr(lang, "(no name)")
}

// reasonText is a reason in words in lang: the rules' message for its code,
// else the message stored with it, else its code made readable.
func reasonText(lang string, r model.Reason) string {
	if m := qualify.Message(r.Code, lang, r.Evidence); m != r.Code {
		return m
	}
	if r.Message != "" {
		return r.Message
	}
	w := strings.ReplaceAll(strings.ToLower(r.Code), "_", " ")
	if w == "" {
		return ""
	}
	return strings.ToUpper(w[:1]) + w[1:]
}

// topReason is the reason that weighs most: a final one, else the most
// points. A verdict decided since by evidence, a CRM or the owner is
// explained by the last reason they added: a clean lead must not read "held
// until the person answers".
func topReason(l *model.Lead) (model.Reason, bool) {
	if len(l.Reasons) == 0 {
		return model.Reason{}, false
	}
	if l.DecidedBy != "" && l.DecidedBy != model.DecidedByRules {
		for i := len(l.Reasons) - 1; i >= 0; i-- {
			if !qualify.RuleReason(l.Reasons[i].Code) {
				return l.Reasons[i], true
			}
		}
	}
	rs := append([]model.Reason(nil), l.Reasons...)
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].Final != rs[j].Final {
			return rs[i].Final
		}
		return rs[i].Points > rs[j].Points
	})
	return rs[0], true
}

// evidenceText writes a reason's evidence as "key: value" pairs.
func evidenceText(ev map[string]any) string {
	keys := make([]string, 0, len(ev))
	for k := range ev {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %v", k, ev[k]))
	}
	return strings.Join(parts, ", ")
}

// prettyJSON indents JSON for reading; what is not JSON is shown as it is.
func prettyJSON(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return string(b)
	}
	return out.String()
}

// mask shows only the end of a secret.
func mask(secret string) string {
	if secret == "" {
		return ""
	}
	if len(secret) <= 8 {
		return "••••"
	}
	return "••••••••" + secret[len(secret)-4:]
}
