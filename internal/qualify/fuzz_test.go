package qualify

import (
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// FuzzPhoneRules: any string as the phone of a lead, in any region, is
// judged without a panic; a phone reason carries its evidence, the score
// stays in 0-100 and the verdict is one of the three. Seeds are the phones
// of the labelled corpus (Turkish, German, British, US leads, real and
// fake) plus the pattern and fictional-range cases the rules name.
func FuzzPhoneRules(f *testing.F) {
	for _, e := range loadCorpus(f) {
		if e.Lead.Phone != "" {
			f.Add(e.Lead.Phone, e.Country)
		}
	}
	for _, p := range []string{"555 555 55 55", "0532 123 45 67", "+90 532 000 00 00", "0850 222 33 44",
		"444 1 444", "+44 20 7946 0958", "+1 202-555-0147", "0900 123456", "00 90 532 412 87 19",
		"+", "00", "+0", "ext. 12", "0532 412 87 19 x123", "٠٥٣٢٤١٢٨٧١٩", "+٩٠ ٥٣٢"} {
		f.Add(p, "TR")
		f.Add(p, "")
	}
	rules, err := New(model.Qualify{}, nil)
	if err != nil {
		f.Fatal(err)
	}
	now := time.Date(2026, 11, 3, 8, 0, 0, 0, time.UTC)
	fill := int64(30000)
	f.Fuzz(func(t *testing.T, phone, region string) {
		pr := checkPhone(phone, region, nil)
		if pr.code != "" && pr.evidence == nil {
			t.Fatalf("checkPhone(%q, %q): %s without evidence", phone, region, pr.code)
		}
		lead := &model.Lead{Phone: phone, Name: "Ayşe Demir", FillMS: &fill, SubmittedAt: now,
			Message: "İmplant için randevu almak istiyorum."}
		d := rules.Score(lead, Context{Now: now, Country: region})
		if d.Score < 0 || d.Score > 100 {
			t.Fatalf("phone %q (%q): score %d", phone, region, d.Score)
		}
		switch d.Verdict {
		case model.VerdictClean, model.VerdictReview, model.VerdictJunk:
		default:
			t.Fatalf("phone %q (%q): verdict %q", phone, region, d.Verdict)
		}
	})
}
