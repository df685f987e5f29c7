package capi

import (
	"encoding/json"
	"errors"
	"os"
	"testing"
)

// TestHashMetaDocExamples checks the examples with hashes on Meta's
// customer-information-parameters page.
func TestHashMetaDocExamples(t *testing.T) {
	tests := []struct {
		field, in, country, norm, hash string
	}{
		{"em", "John_Smith@gmail.com", "", "john_smith@gmail.com", "62a14e44f765419d10fea99367361a727c12365e2520f32218d505ed9aa0f62f"},
		{"ph", "(650)555-1212", "US", "16505551212", "e323ec626319ca94ee8bff2e4c87cf613be6ea19919ed1364124e16807ab3176"},
		{"fn", "Mary", "", "mary", "6915771be1c5aa0c886870b6951b03d7eafc121fea0e80a5ea83beb7c449f4ec"},
		{"fn", "정", "", "정", "8fa8cd9c440be61d0151429310034083132b35975c4bea67fdd74158eb51db14"},
		{"ln", "Valéry", "", "valéry", "08e1996b5dd49e62a4b4c010d44e4345592a863bb9f8e3976219bac29417149c"},
		{"db", "2/16/1997", "", "19970216", "01acdbf6ec7b4f478a225f1a246e5d6767eeab1a7ffa17f025265b5b94f40f0c"},
		{"country", "United States", "", "us", "79adb2a2fce5c6ba215fe5f27f532d4e7edbac4b6a5e09e1ef3a08084a904621"},
	}
	for _, tt := range tests {
		t.Run(tt.field+"/"+tt.in, func(t *testing.T) {
			n, err := Normalize(tt.field, tt.in, tt.country)
			if err != nil || n != tt.norm {
				t.Fatalf("Normalize = %q, %v; want %q", n, err, tt.norm)
			}
			h, err := HashField(tt.field, tt.in, tt.country)
			if err != nil || h != tt.hash {
				t.Fatalf("HashField = %q, %v; want %q", h, err, tt.hash)
			}
		})
	}
}

// TestHashVectors checks Hash against every SHA-256 pinned in vectors.json.
func TestHashVectors(t *testing.T) {
	b, err := os.ReadFile("../../../shared/data/meta-normalize-vectors/vectors.json")
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("Meta's vectors not found beside the repository (shared/data/meta-normalize-vectors)")
	}
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Field      string  `json:"field"`
		Normalized *string `json:"normalized"`
		SHA256     string  `json:"sha256"`
	}
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rows {
		if r.SHA256 == "" || r.Normalized == nil {
			continue
		}
		n++
		if got := Hash(*r.Normalized); got != r.SHA256 {
			t.Errorf("%s Hash(%q) = %s, want %s", r.Field, *r.Normalized, got, r.SHA256)
		}
	}
	if n < 50 {
		t.Errorf("only %d hashed vectors found", n)
	}
}

func TestNormalizePhone(t *testing.T) {
	tests := []struct {
		name, in, country, want string
	}{
		{"TR national with trunk 0", "0532 412 87 19", "TR", "905324128719"},
		{"TR national without trunk", "532 412 87 19", "TR", "905324128719"},
		{"TR lower-case region", "(0532) 412-87-19", "tr", "905324128719"},
		{"TR with +90", "+90 532 412 87 19", "TR", "905324128719"},
		{"TR with +90 and trunk 0", "+90 (0532) 412 87 19", "TR", "905324128719"},
		{"TR with 0090", "0090 532 412 87 19", "TR", "905324128719"},
		{"TR digits already with 90", "905324128719", "TR", "905324128719"},
		{"UK number from a TR site", "+44 20 7946 0958", "TR", "442079460958"},
		{"UK with 00 from a TR site", "0044 20 7946 0958", "TR", "442079460958"},
		{"US national", "(650) 555-1212", "US", "16505551212"},
		{"US with 011 prefix", "011 44 20 7946 0958", "US", "442079460958"},
		{"no country: digits only", "0532 412 87 19", "", "5324128719"},
		{"no country: plus kept", "+1 (415) 555-0100", "", "14155550100"},
		{"unknown region falls back", "0532 412 87 19", "XX", "5324128719"},
		{"impossible national keeps digits", "12345", "TR", "12345"},
		{"hash passes lowercased", "CF14FE3C9D73FCB3574D2643988EFB2DB605B1C224725BD322D7D2350467B4DC", "TR",
			"cf14fe3c9d73fcb3574d2643988efb2db605b1c224725bd322d7d2350467b4dc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalizePhone(tt.in, tt.country)
			if err != nil || got != tt.want {
				t.Errorf("NormalizePhone(%q, %q) = %q, %v; want %q", tt.in, tt.country, got, err, tt.want)
			}
		})
	}
	for _, in := range []string{"", "  ", "abc", "000", "()- +."} {
		t.Run("rejects "+in, func(t *testing.T) {
			if got, err := NormalizePhone(in, "TR"); !errors.Is(err, ErrRejected) {
				t.Errorf("NormalizePhone(%q) = %q, %v; want ErrRejected", in, got, err)
			}
		})
	}
}

func TestNormalizeFields(t *testing.T) {
	tests := []struct {
		field, in, want string // want "" = rejected
	}{
		{"em", "  Ayşe.Yılmaz@Example.COM ", ""}, // non-ASCII local part
		{"em", "  Ayse.Yilmaz+ads@Example.COM ", "ayse.yilmaz+ads@example.com"},
		{"em", "a@b", ""},
		{"em", "a..b@c.com", ""},
		{"em", "a@-b.com", ""},
		{"fn", "  Mary-Jane ", "maryjane"},
		{"fn", "İbrahim", "i\u0307brahim"}, // as JavaScript's toLowerCase, like the pixel
		{"fn", "ŞÜKRÜ", "şükrü"},
		{"ln", "O'Brien", "obrien"},
		{"ln", "!!", ""},
		{"ge", " Female ", "f"},
		{"ge", "M", "m"},
		{"ge", "x", ""},
		{"db", "1990-12-31", "19901231"},
		{"db", "31.12.1990", "19901231"},
		{"db", "12/31/1990", "19901231"},
		{"db", "19901231", "19901231"},
		{"db", "31.13.1990", ""},
		{"db", "1799-01-01", ""},
		{"ct", "İstanbul", "stanbul"}, // the builder drops non-Roman letters
		{"ct", "Menlo Park", "menlopark"},
		{"ct", "123", ""},
		{"st", "California", "ca"},
		{"st", "NY", "ny"},
		{"st", "Washington, D.C.", "dc"},
		{"zp", "94035-1234", "94035"},
		{"zp", "M1 1AE", "m1 1ae"},
		{"zp", "1", ""},
		{"country", "Türkiye", "tr"},
		{"country", "TR", "tr"},
		{"country", "United Kingdom", "gb"},
		{"country", "", ""},
		{"external_id", " Lead 42 ", "lead42"},
		{"external_id", "\u3000", ""},
		{"nope", "x", ""},
	}
	for _, tt := range tests {
		t.Run(tt.field+"/"+tt.in, func(t *testing.T) {
			got, err := Normalize(tt.field, tt.in, "TR")
			if tt.want == "" {
				if !errors.Is(err, ErrRejected) {
					t.Errorf("Normalize = %q, %v; want rejected", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Normalize = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestHashField(t *testing.T) {
	sha := "62a14e44f765419d10fea99367361a727c12365e2520f32218d505ed9aa0f62f"
	upper := "62A14E44F765419D10FEA99367361A727C12365E2520F32218D505ED9AA0F62F"
	tests := []struct {
		name, field, in, want string // want "" = error
	}{
		{"hashes", "em", "John_Smith@gmail.com", sha},
		{"hash passes through", "em", sha, sha},
		{"upper-case hash lowercased, not re-hashed", "em", upper, sha},
		{"hash passes for names", "fn", upper, sha},
		{"hash passes for phones", "ph", " " + upper + " ", sha},
		{"md5 refused", "em", "5d41402abc4b2a76b9719d911017c592", ""},
		{"md5-shaped external id hashed", "external_id", "5d41402abc4b2a76b9719d911017c592", Hash("5d41402abc4b2a76b9719d911017c592")},
		{"empty refused", "em", " ", ""},
		{"invalid refused", "em", "not-an-email", ""},
		{"empty name refused", "fn", "--", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := HashField(tt.field, tt.in, "TR")
			if tt.want == "" {
				if err == nil || !errors.Is(err, ErrRejected) {
					t.Errorf("HashField = %q, %v; want an ErrRejected error", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("HashField = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestIsSHA256Hex(t *testing.T) {
	if !IsSHA256Hex(Hash("x")) {
		t.Error("Hash output not recognised")
	}
	for _, s := range []string{"", "ABC", Hash("x")[:63], "62A14E44F765419D10FEA99367361A727C12365E2520F32218D505ED9AA0F62F"} {
		if IsSHA256Hex(s) {
			t.Errorf("IsSHA256Hex(%q) = true", s)
		}
	}
}
