package app_test

import (
	"reflect"
	"testing"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
)

// TestPhoneParsedOnce checks that intake's one parse of a phone (a memo
// shared by its key, its hash and the rules) answers as the three parses
// of their own did.
func TestPhoneParsedOnce(t *testing.T) {
	phones := []string{"", "0532 412 87 19", "+90 532 412 87 19", "0555 555 55 55", "+1 202 555 0143", "46 70 482 17 35",
		"0850 123 45 67", "0444 1 444", "12", "abc", " +905324128719 ", "00905324128719", "0532 412 87 19 ext. 12",
		"6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b"}
	for _, country := range []string{"TR", "tr", "", "US", "XX", " de "} {
		for _, p := range phones {
			var memo capi.PhoneMemo
			key, err := capi.NormalizePhoneWith(p, country, memo.Parse)
			wantKey, wantErr := capi.NormalizePhone(p, country)
			if key != wantKey || (err == nil) != (wantErr == nil) {
				t.Errorf("%q in %q: key %q, %v; want %q, %v", p, country, key, err, wantKey, wantErr)
			}
			if got, want := qualify.CheckPhoneWith(p, country, memo.Parse), qualify.CheckPhone(p, country); !reflect.DeepEqual(got, want) {
				t.Errorf("%q in %q: check %+v, want %+v", p, country, got, want)
			}
			l := &model.Lead{Phone: p, PhoneKey: key, Email: "a@example.com", Name: "Ayşe Yılmaz"}
			if got, want := capi.HashContactKeys(l, country), capi.HashContact(l, country); !reflect.DeepEqual(got, want) {
				t.Errorf("%q in %q: contact %+v, want %+v", p, country, got, want)
			}
		}
	}
}
