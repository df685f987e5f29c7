package google

import (
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// FuzzGoogleUserData: whatever a form sends, the normalisers never panic,
// a normalised value normalises to itself, and the event built from it is
// one Check accepts or one never sent (ErrNotSent).
func FuzzGoogleUserData(f *testing.F) {
	for _, s := range [][3]string{
		{"cloudy.sanfrancisco+shopping@gmail.com", "(800)555-0100", "US"},
		{"user.name+NYC@Example.com", "0532 412 87 19", "TR"},
		{" A.B@GoogleMail.com ", "+49 30 901820", "DE"},
		{"@@", "+", ""}, {"x@y", "00000000000000000000", "ZZ"}, {"Ayşe Yılmaz Jr.", "٠٥٣٢٤١٢٨٧١٩", "tr"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, email, phone, country string) {
		if e, err := NormalizeEmail(email); err == nil {
			if again, err := NormalizeEmail(e); err != nil || again != e {
				t.Fatalf("email %q -> %q -> %q, %v", email, e, again, err)
			}
			if strings.ContainsAny(e, " \t\n") || e != strings.ToLower(e) {
				t.Fatalf("email %q -> %q", email, e)
			}
		}
		if p, err := NormalizePhone(phone, country); err == nil {
			if !IsE164(p) {
				t.Fatalf("phone %q -> %q is not E.164", phone, p)
			}
			if again, err := NormalizePhone(p, ""); err != nil || again != p {
				t.Fatalf("phone %q -> %q -> %q, %v", phone, p, again, err)
			}
		}
		for _, n := range []func(string) (string, error){NormalizeGivenName, NormalizeFamilyName} {
			if v, err := n(email); err == nil && (v == "" || v != strings.TrimSpace(v) || strings.ContainsAny(v, ".,'\"")) {
				t.Fatalf("name %q -> %q", email, v)
			}
		}
		l := &model.Lead{ID: "l", Email: email, Phone: phone, Name: email, GClid: phone, SubmittedAt: time.Unix(1764000000, 0),
			Fields: map[string]string{"postal_code": country}}
		_, err := BuildEvent(Params{Settings: &model.GoogleSettings{QualifiedConversionAction: "1"}, Country: country, Lead: l,
			Clicks: model.ClickIDs{GClid: l.GClid}, Kind: model.KindQualified})
		if err != nil && !strings.Contains(err.Error(), "google") {
			t.Fatalf("build: %v", err)
		}
	})
}
