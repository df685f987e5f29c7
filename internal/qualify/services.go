package qualify

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify/intent"
)

// CodeServiceNamed is evidence of a request from the site's own words: the
// message names a service the site sells (qualify.services) and the
// built-in model reads it as a request, even if not surely enough alone.
// It gives 0 points; like MODEL_REQUEST it is what lets a lead be clean.
const CodeServiceNamed = "SERVICE_NAMED"

// Limits of the site's service words (qualify.services).
const (
	maxServices     = 200
	maxServiceRunes = 80
	// serviceStemRunes: a service's word of this many letters or more also
	// matches the longer words it starts ("implant" in "implantlar",
	// "Zahnreinigung" in "Zahnreinigungen"); a shorter one matches whole.
	serviceStemRunes = 4
	// serviceMaxJunkP is the most the model may lean toward junk (offer,
	// job seeker, nonsense together) for a service named to count: the
	// site's words settle a request the model is unsure of, never a pitch
	// that names the site's service ("more implant patients").
	serviceMaxJunkP = 0.2
)

// servicePatterns turns the site's service words into phrases of the rules'
// phrase lists: each word of four letters or more is a stem ("implant*"),
// unless the owner wrote a pattern already. Problems are keyed by the
// setting's index.
func servicePatterns(services []string, bad func(key, format string, args ...any)) []string {
	if len(services) > maxServices {
		bad("services", "%d services, at most %d", len(services), maxServices)
		return nil
	}
	out := make([]string, 0, len(services))
	for i, s := range services {
		s = strings.TrimSpace(s)
		if utf8.RuneCountInString(s) > maxServiceRunes {
			bad(fmt.Sprintf("services[%d]", i), "%q is longer than %d letters", s, maxServiceRunes)
			continue
		}
		fields := strings.Fields(s)
		for j, f := range fields {
			if strings.ContainsRune(f, '*') {
				continue
			}
			if utf8.RuneCountInString(fold(f)) >= serviceStemRunes && len(tokens(fold(f), nil)) == 1 {
				fields[j] = f + "*"
			}
		}
		p := strings.Join(fields, " ")
		if _, ok := parsePhrase(p); !ok {
			bad(fmt.Sprintf("services[%d]", i), "%q has no words", s)
			continue
		}
		out = append(out, p)
	}
	return out
}

// scoreServices gives SERVICE_NAMED when the message names one of the
// site's services and nothing speaks against a request: the model's
// likeliest class is a request with little lean toward junk, and no rule
// that reads the words (a pitch's or a job seeker's phrases, a test entry,
// gibberish, links, the grey area) nor any final one (a honeypot, a
// measured fast fill) has spoken. It reports whether it did. It takes no
// reason back: what holds a lead still holds it.
func (r *Rules) scoreServices(s *scoring, msg []string, m meaning) bool {
	if r.services == nil || len(r.services.phrases) == 0 || !m.judged {
		return false
	}
	if m.j.Class != intent.Request || m.j.JunkP() > serviceMaxJunkP {
		return false
	}
	for _, x := range s.reasons {
		if x.Final || textCodes[x.Code] {
			return false
		}
		switch x.Code {
		case CodePriceOnly, CodeNoMessage, CodeEmailDisposable:
			return false
		}
	}
	var buf [8]span
	spans := r.services.find(msg, buf[:0])
	if len(spans) == 0 {
		return false
	}
	var words []string
	for _, sp := range spans {
		words = appendUnique(words, r.services.phrases[sp.phrase].text)
	}
	ev := map[string]any{"services": words[:min(len(words), 4)], "p": percent(m.j.Probs[intent.Request])}
	s.reasons = append(s.reasons, model.Reason{Code: CodeServiceNamed, Evidence: ev,
		Message: Message(CodeServiceNamed, "en", ev)})
	return true
}
