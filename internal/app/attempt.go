package app

import (
	"context"
	"errors"
	"maps"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
	"github.com/cleanads/cleanads/internal/store"
)

// AttemptWindow is how long a lead t.js sent without a form plugin's word
// stays open for a later attempt with the same event_id: a form that the
// site's own server refused (a wrong phone number, a missing field) is
// usually corrected and sent again within a minute; five minutes covers a
// slow correction, while the lead's events still reach Meta within minutes
// of the submit (the pixel's Lead, fired at once, pairs with the server's
// by event_id for 48 hours) and the inbox shows a final verdict soon. Its
// outbox rows wait until the window closes; each later attempt opens it
// for another AttemptWindow.
const AttemptWindow = 5 * time.Minute

// opens says whether a lead stays open for a later attempt: a browser's
// JSON post that no form plugin confirmed. A plain form post, the site's
// own server's post and every other caller's lead are final.
func opens(in *LeadInput) bool { return in.Browser && !in.Confirmed }

// dueAt is when an event queued now for the lead may go: at once, or when
// the lead's attempt window closes, so nothing is sent for a lead that may
// still change.
func dueAt(lead *model.Lead, now time.Time) time.Time {
	if lead.OpenUntil != nil && lead.OpenUntil.After(now) {
		return *lead.OpenUntil
	}
	return now
}

// attempt is what Submit has judged of a post ahead of its transaction.
type attempt struct {
	site    *model.Site
	in      *LeadInput
	rules   *qualify.Rules
	qc      qualify.Context
	token   qualify.TokenCheck // the post's token, its nonce taken as the lead's own
	visitor *model.Visitor
	// prepared is the platforms' per-lead work (platform.Preparer).
	prepared map[string]any
}

// reattempt makes next, a later post with old's event_id, the lead old
// stands for, when old is still open (its window has not closed, its
// rules' verdict stands, LeadEventsHeld) and the post differs from it (a
// retry of the same post changes nothing): next takes
// old's id, source and first arrival, is judged again, its events replace
// the held ones, and the history says what the new attempt changed. It
// reports whether it did.
func (s *Service) reattempt(ctx context.Context, tx *store.Tx, old, next *model.Lead, a attempt, now time.Time) (bool, error) {
	if old.OpenUntil == nil || !old.OpenUntil.After(now) || !a.in.Browser || old.DecidedBy != model.DecidedByRules ||
		leadSource(next) != model.SourceWeb {
		return false, nil
	}
	changed := attemptChanges(old, next)
	if len(changed) == 0 {
		return false, nil
	}
	if held, err := tx.LeadEventsHeld(ctx, old.ID, now); err != nil || !held {
		return false, err
	}
	next.ID, next.ReceivedAt, next.Source, next.SourceDetail = old.ID, old.ReceivedAt, old.Source, old.SourceDetail
	if next.VisitorID == "" {
		next.VisitorID = old.VisitorID
	}
	linkVisitor(next, a.visitor)
	qc := a.qc
	qc.Token = a.token
	prev, at, match, err := tx.LeadPrevious(ctx, a.site.ID, next.EmailKey, next.PhoneKey, next.ReceivedAt.Add(-a.rules.DuplicateWindow()), old.ID)
	if err != nil && !errors.Is(err, model.ErrNotFound) {
		return false, err
	}
	if prev != "" {
		qc.Previous = &qualify.Previous{LeadID: prev, At: at, Match: match}
	}
	next.Decision = a.rules.Score(next, qc)
	next.ReviewUntil = nil
	if next.Verdict == model.VerdictReview {
		until := next.SubmittedAt.Add(a.rules.ReviewTimeout())
		next.ReviewUntil = &until
	}
	data := map[string]any{"verdict": next.Verdict, "score": next.Score, "decided_by": next.DecidedBy,
		"was": old.Verdict, "changed": strings.Join(changed, ", "),
		"note": "The visitor sent the form again: the lead holds this attempt's values."}
	if next.OpenUntil != nil {
		data["open_until"] = next.OpenUntil.Format(time.RFC3339)
	}
	if err := tx.LeadAttemptSet(ctx, next); err != nil {
		return false, err
	}
	if next.Verdict != old.Verdict {
		if err := s.queueNotify(ctx, tx, next, now); err != nil {
			return false, err
		}
		if err := s.queueHooks(ctx, tx, next, hooksOfVerdict(next, old.Verdict), now); err != nil {
			return false, err
		}
	}
	if err := tx.HistoryInsert(ctx, &model.HistoryEntry{
		ID: s.ids.New("h_", now), LeadID: next.ID, At: now, Kind: model.HistoryVerdict, Data: data,
	}); err != nil {
		return false, err
	}
	if mayQueueLead(a.site, next) {
		if err := s.enqueueLead(ctx, tx, a.site, next, a.prepared, now); err != nil {
			return false, err
		}
	}
	return true, nil
}

// leadSource is the lead's source, SourceWeb when it names none.
func leadSource(l *model.Lead) string {
	if l.Source == "" {
		return model.SourceWeb
	}
	return l.Source
}

// attemptChanges names the fields a later attempt changed; none for a
// retry of the same post.
func attemptChanges(old, next *model.Lead) []string {
	var out []string
	for _, f := range []struct {
		name string
		same bool
	}{
		{"email", old.Email == next.Email},
		{"phone", old.Phone == next.Phone},
		{"name", old.Name == next.Name && old.FirstName == next.FirstName && old.LastName == next.LastName},
		{"message", old.Message == next.Message},
		{"fields", maps.Equal(old.Fields, next.Fields) || len(old.Fields)+len(next.Fields) == 0},
		{"hp", old.Honeypot == next.Honeypot},
		{"fill_ms", (old.FillMS == nil) == (next.FillMS == nil) && (old.FillMS == nil || *old.FillMS == *next.FillMS)},
	} {
		if !f.same {
			out = append(out, f.name)
		}
	}
	return out
}
