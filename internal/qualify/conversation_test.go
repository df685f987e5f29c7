package qualify

import (
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// TestConversation: a Click-to-WhatsApp first message is judged by its
// words; the missing fill time, form token and phone are no evidence.
func TestConversation(t *testing.T) {
	r, err := New(model.Qualify{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name, phone, msg string
		want             model.Verdict
	}{
		{"asks for a visit, no phone", "", "Merhaba, implant tedavisi için yarın randevu almak istiyorum.", model.VerdictClean},
		{"asks for a visit", "+905324128719", "Merhaba, implant tedavisi için yarın randevu almak istiyorum.", model.VerdictClean},
		{"price only", "", "Fiyat ne kadar?", model.VerdictReview},
		{"says nothing", "", "", model.VerdictReview},
		{"pitch", "", "Merhaba, dijital ajansımızla SEO ve Google reklam hizmeti sunuyoruz, web siteniz için teklif verebilir miyiz?", model.VerdictJunk},
	} {
		t.Run(c.name, func(t *testing.T) {
			lead := &model.Lead{Phone: c.phone, Message: c.msg, SubmittedAt: now, Source: model.SourceWhatsApp}
			d := r.Score(lead, Context{Now: now, Country: "TR", Conversation: true})
			if d.Verdict != c.want {
				t.Errorf("verdict %s, want %s: %+v", d.Verdict, c.want, d.Reasons)
			}
			for _, x := range d.Reasons {
				switch x.Code {
				case CodeFillTimeMissing, CodeFillTooFast, CodePhoneMissing, CodeNoValidContact:
					t.Errorf("a conversation judged by %s", x.Code)
				}
			}
			// The same words on a form without a fill time are judged
			// for it.
			if form := r.Score(lead, Context{Now: now, Country: "TR"}); c.phone == "" && !conversationHasCode(form, CodePhoneMissing) {
				t.Errorf("a form without contact: %+v", form.Reasons)
			}
		})
	}
}

func conversationHasCode(d model.Decision, code string) bool {
	for _, x := range d.Reasons {
		if x.Code == code {
			return true
		}
	}
	return false
}
