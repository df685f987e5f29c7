package qualify

import (
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// The evidence types.
const (
	EvidenceWhatsAppReply = "whatsapp_reply" // the person answered on WhatsApp
	EvidenceCall          = "call"           // a call took place, DurationS long
	EvidenceCustomer      = "customer"       // the owner says: a real customer
	EvidenceJunk          = "junk"           // the owner says: junk
)

// MinCallS is the shortest call, in seconds, that confirms a lead.
const MinCallS = 60

// Evidence is something that happened after a lead came in and tells
// whether it is real.
type Evidence struct {
	Type      string    `json:"type"`
	DurationS int       `json:"duration_s,omitempty"`
	At        time.Time `json:"at"`
}

// Validate reports what is wrong with evidence as received from a caller.
func (e Evidence) Validate() error {
	switch e.Type {
	case EvidenceWhatsAppReply, EvidenceCustomer, EvidenceJunk:
	case EvidenceCall:
		if e.DurationS < 0 {
			return model.Invalid("duration_s", "must not be negative")
		}
	default:
		return model.Invalid("type", fmt.Sprintf("unknown evidence type %q (want whatsapp_reply, call, customer or junk)", e.Type))
	}
	return nil
}

// ApplyEvidence returns the decision after ev and whether the verdict
// changed. The owner's word ("customer", "junk") is final and decides any
// lead, again and again if the owner changes their mind. A WhatsApp reply or
// a call of MinCallS or more moves a review lead to clean.
//
// A reply or a call does not turn a junk verdict of the rules clean: vendors
// and job seekers answer and call too, and a junk lead was judged on
// stronger signals than "someone is there". Only the owner reverses junk.
// Nor does it override the owner's own verdict. Evidence that changes
// nothing returns cur unchanged; otherwise a reason (0 points) explaining it
// is appended and the score is kept. The owner's word that confirms the
// current verdict is recorded too (DecidedBy becomes "owner") but reports no
// change: callers should store the returned decision whenever it differs.
// Whether a review lead has already expired is for the caller to check.
func ApplyEvidence(cur model.Decision, ev Evidence) (model.Decision, bool) {
	var v model.Verdict
	var by, code string
	evd := map[string]any{"type": ev.Type}
	if !ev.At.IsZero() {
		evd["at"] = ev.At.UTC().Format(time.RFC3339)
	}
	switch ev.Type {
	case EvidenceCustomer:
		v, by, code = model.VerdictClean, model.DecidedByOwner, CodeOwnerCustomer
	case EvidenceJunk:
		v, by, code = model.VerdictJunk, model.DecidedByOwner, CodeOwnerJunk
	case EvidenceWhatsAppReply, EvidenceCall:
		if cur.Verdict != model.VerdictReview || cur.DecidedBy == model.DecidedByOwner {
			return cur, false
		}
		if ev.Type == EvidenceCall && ev.DurationS < MinCallS {
			return cur, false
		}
		v, by, code = model.VerdictClean, model.DecidedByEvidence, CodeEvidenceWhatsApp
		if ev.Type == EvidenceCall {
			code = CodeEvidenceCall
			evd["duration_s"] = ev.DurationS
		}
	default:
		return cur, false
	}
	if cur.Verdict == v && (by != model.DecidedByOwner || cur.DecidedBy == by) {
		return cur, false
	}
	// The owner's word is recorded even when it confirms the verdict: it
	// makes the verdict final.
	next := cur
	next.Verdict = v
	next.DecidedBy = by
	next.Reasons = append(append(make([]model.Reason, 0, len(cur.Reasons)+1), cur.Reasons...), model.Reason{
		Code:     code,
		Evidence: evd,
		Message:  Message(code, "en", evd),
	})
	return next, next.Verdict != cur.Verdict
}
