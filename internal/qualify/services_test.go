package qualify

import (
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/model"
)

// TestServiceNamed: the site's own service words, found after the rules'
// normalisation (case, accents, Turkish i, stems), are evidence of a request
// the model leans to but is unsure of; they never lift the grey area, a
// measured fast fill, a honeypot, a pitch or a job seeker.
func TestServiceNamed(t *testing.T) {
	services := []string{"İmplant", "zirkonyum kaplama", "hair transplant"}
	plain := mustRules(t, model.Qualify{})
	r := mustRules(t, model.Qualify{Services: services})

	// Requests the model leans to without being sure: held without the
	// site's words, clean with them.
	lifted := 0
	for _, msg := range []string{
		"implant yaptırmak istiyorum",
		"dişlerimde implant gerekiyor galiba",
		"IMPLANTLARIM için kontrol",
		"zirkonyum kaplamalar",
		"hair transplant 3000 grafts",
		"implant dentaire pour ma mère",
	} {
		l := realLead()
		l.Message = msg
		before := plain.Score(&l, Context{Country: "TR"})
		after := r.Score(&l, Context{Country: "TR"})
		j := r.intent.Judge(msg)
		if before.Verdict == model.VerdictClean {
			if reasonOf(after, CodeServiceNamed) != nil {
				t.Errorf("%q: the model is sure already, SERVICE_NAMED adds nothing: %v", msg, codesOf(after))
			}
			continue
		}
		if j.Class.String() != "request" || j.JunkP() > serviceMaxJunkP {
			continue // not the model's lean: nothing to settle
		}
		lifted++
		if after.Verdict != model.VerdictClean || reasonOf(after, CodeServiceNamed) == nil || reasonOf(after, CodeNoEvidence) != nil {
			t.Errorf("%q: %s %v, want clean on SERVICE_NAMED", msg, after.Verdict, codesOf(after))
		}
		if x := reasonOf(after, CodeServiceNamed); x != nil && (x.Points != 0 || x.Message == CodeServiceNamed) {
			t.Errorf("%q: SERVICE_NAMED gives %d points, message %q", msg, x.Points, x.Message)
		}
	}
	if lifted < 3 {
		t.Errorf("only %d of the unsure requests exercised the service words", lifted)
	}

	// Never lifted: the grey area, a pitch or a job seeker naming the
	// service, a measured fast fill, a honeypot.
	for _, tc := range []struct {
		msg  string
		want model.Verdict
		edit func(*model.Lead)
	}{
		{msg: "implant fiyatı?", want: model.VerdictReview},
		{msg: "İmplant için bilgi", want: model.VerdictReview},
		{msg: "merhaba implant", want: model.VerdictReview},
		{msg: "hair transplant price", want: model.VerdictReview},
		{msg: "Kliniğinize her ay 30 implant hastası getiriyoruz, sadece komisyonla çalışıyoruz.", want: model.VerdictJunk},
		{msg: "We send hair transplant patients to clinics like yours, commission only, could we talk?", want: model.VerdictJunk},
		{msg: "Merhaba, implant asistanı olarak kliniğinizde çalışmak istiyorum, CV'mi gönderebilir miyim?", want: model.VerdictJunk},
		{msg: "implant yaptırmak istiyorum", want: model.VerdictJunk, edit: func(l *model.Lead) { l.FillMS = ms(800) }},
		{msg: "implant yaptırmak istiyorum", want: model.VerdictJunk, edit: func(l *model.Lead) { l.Honeypot = "x" }},
	} {
		l := realLead()
		l.Message = tc.msg
		if tc.edit != nil {
			tc.edit(&l)
		}
		d := r.Score(&l, Context{Country: "TR"})
		if d.Verdict == model.VerdictClean || reasonOf(d, CodeServiceNamed) != nil {
			t.Errorf("%q: %s %v, the service words must not lift it", tc.msg, d.Verdict, codesOf(d))
		}
		if tc.want == model.VerdictJunk && d.Verdict != model.VerdictJunk {
			t.Errorf("%q: %s %v, want junk", tc.msg, d.Verdict, codesOf(d))
		}
	}
}

func TestServicesInvalid(t *testing.T) {
	long := "implant implant implant implant implant implant implant implant implant implant implant implant"
	if _, err := New(model.Qualify{Services: []string{"implant", " ", long}}, nil); err == nil {
		t.Fatal("want errors for an empty and a long service")
	} else {
		for _, want := range []string{"qualify.services[1]", "qualify.services[2]"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%v: want %s", err, want)
			}
		}
	}
	pats := servicePatterns([]string{"Diş beyazlatma", "ac", "veneer*", "e-posta"}, func(string, string, ...any) { t.Fatal("no problem expected") })
	want := []string{"Diş beyazlatma*", "ac", "veneer*", "e-posta"}
	for i := range want {
		if pats[i] != want[i] {
			t.Errorf("pattern %d: %q, want %q", i, pats[i], want[i])
		}
	}
}
