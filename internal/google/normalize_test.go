package google

import (
	"errors"
	"testing"
)

// The examples are Google's, from "Format user data" in the Data Manager
// API guide; the hashes are sha256sum's of the normalised values.
func TestNormalizeEmailGoogleExamples(t *testing.T) {
	for _, tc := range []struct{ in, want, hash string }{
		{"cloudy.sanfrancisco+shopping@gmail.com", "cloudysanfrancisco@gmail.com",
			"223ebda6f6889b1494551ba902d9d381daf2f642bae055888e96343d53e9f9c4"},
		{"user.name+NYC@Example.com", "user.name+nyc@example.com",
			"f109a2a632fbcea5fc82049f50beed3d8621bf9034399f437fb622222acccdac"},
		// Whitespace: leading, trailing and intermediate are removed.
		{"  Cloudy.SanFrancisco @ gmail.com \t", "cloudysanfrancisco@gmail.com", ""},
		{"a.b+c@GoogleMail.com", "ab@googlemail.com", ""},
		// Only gmail.com and googlemail.com lose dots and tags.
		{"first.last+x@gmail.co.uk", "first.last+x@gmail.co.uk", ""},
	} {
		got, err := NormalizeEmail(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("NormalizeEmail(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if tc.hash != "" && Hash(got) != tc.hash {
			t.Errorf("Hash(%q) = %s, want %s", got, Hash(got), tc.hash)
		}
	}
	for _, in := range []string{"", "   ", "no-at.example.com", "a@b@c.com", "@gmail.com", "+tag@gmail.com", "x@localhost"} {
		if got, err := NormalizeEmail(in); !errors.Is(err, ErrRejected) {
			t.Errorf("NormalizeEmail(%q) = %q, %v; want rejected", in, got, err)
		}
	}
}

func TestNormalizePhoneGoogleExamples(t *testing.T) {
	for _, tc := range []struct{ in, country, want string }{
		{"(800)555-0100", "US", "+18005550100"}, // Google's example
		{" +1 800 555 0100 ", "", "+18005550100"},
		{"0532 123 45 67", "TR", "+905321234567"},
		{"+49 30 901820", "TR", "+4930901820"},
	} {
		got, err := NormalizePhone(tc.in, tc.country)
		if err != nil || got != tc.want {
			t.Errorf("NormalizePhone(%q, %q) = %q, %v; want %q", tc.in, tc.country, got, err, tc.want)
		}
	}
	if Hash("+18005550100") != "fb4f73a6ec5fdb7077d564cdd22c3554b43ce49168550c3b12c547b78c517b30" {
		t.Error("hash of +18005550100")
	}
	for _, in := range []string{"", "abc", "12", "0532 123"} {
		if got, err := NormalizePhone(in, "TR"); !errors.Is(err, ErrRejected) {
			t.Errorf("NormalizePhone(%q) = %q, %v; want rejected", in, got, err)
		}
	}
}

func TestNormalizeNamesAndAddress(t *testing.T) {
	for _, tc := range []struct {
		f        func(string) (string, error)
		in, want string
	}{
		{NormalizeGivenName, "  Mrs. Alex ", "alex"},
		{NormalizeGivenName, "Dr. Jean-Luc", "jeanluc"},
		{NormalizeGivenName, "Çağla", "çağla"},
		{NormalizeFamilyName, "Smith Jr.", "smith"},
		{NormalizeFamilyName, " O'Brien III ", "obrien"},
		{NormalizeFamilyName, "van der Berg", "van der berg"},
	} {
		if got, err := tc.f(tc.in); err != nil || got != tc.want {
			t.Errorf("normalise %q = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := NormalizeGivenName(" .. "); !errors.Is(err, ErrRejected) {
		t.Error("punctuation alone is not a name")
	}
	if r, err := NormalizeRegion(" tr "); err != nil || r != "TR" {
		t.Errorf("region = %q, %v", r, err)
	}
	if _, err := NormalizeRegion("TUR"); err == nil {
		t.Error("three letters are not an alpha-2 code")
	}
	for _, tc := range []struct{ in, region, want string }{
		{"94043", "US", "94043"}, {"94043-1351", "US", "94043-1351"}, {" 34000 ", "TR", "34000"}, {"sw1a 1aa", "GB", "SW1A 1AA"},
	} {
		if got, err := NormalizePostalCode(tc.in, tc.region); err != nil || got != tc.want {
			t.Errorf("postal %q %s = %q, %v; want %q", tc.in, tc.region, got, err, tc.want)
		}
	}
	if _, err := NormalizePostalCode("9404", "US"); err == nil {
		t.Error("a four-digit US code is refused")
	}
}
