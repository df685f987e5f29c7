package web

import (
	"testing"
	"time"
)

// Amounts as people write them, in Turkish, European and English forms.
func TestParseImportValue(t *testing.T) {
	for in, want := range map[string]float64{
		"6000": 6000, "6.000": 6000, "6,000": 6000, "6.000,50": 6000.5, "6,000.50": 6000.5, "12500,5": 12500.5,
		"12500.5": 12500.5, "₺ 6.000": 6000, "6.000 TL": 6000, "EUR 99,90": 99.9, "1.234.567": 1234567, "0": 0,
	} {
		if got, ok := parseImportValue(in); !ok || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, ok, want)
		}
	}
	for _, bad := range []string{"lots", "", "6.000,50,1x"} {
		if _, ok := parseImportValue(bad); ok {
			t.Errorf("%q was read as a number", bad)
		}
	}
}

// Times in the forms CRMs and spreadsheets export, in the admin's zone
// unless they name their own.
func TestParseImportTime(t *testing.T) {
	ist := time.FixedZone("TRT", 3*3600)
	want := time.Date(2026, 12, 2, 15, 4, 0, 0, ist)
	for _, in := range []string{"2026-12-02 15:04", "2026-12-02T15:04", "02.12.2026 15:04", "2026-12-02T15:04:00+03:00",
		"2026-12-02T12:04:00Z", "2026-12-02 15:04:00"} {
		if got, ok := parseImportTime(in, ist); !ok || !got.Equal(want) {
			t.Errorf("%q: %v %v", in, got, ok)
		}
	}
	if _, ok := parseImportTime("next week", ist); ok {
		t.Error("next week was read as a time")
	}
}

// A CSV with commas, semicolons or tabs, a byte order mark and blank
// trailing lines is read alike; no rows, or invalid UTF-8, is said.
func TestReadImportCSV(t *testing.T) {
	for _, text := range []string{
		"\uFEFFemail,stage\r\na@b.com,won\r\n\r\n,\r\n",
		"email;stage\na@b.com;won\n",
		"email\tstage\na@b.com\twon\n",
	} {
		h, rows, problem := readImportCSV(text)
		if problem != "" || len(h) != 2 || h[0] != "email" || len(rows) != 1 || rows[0][1] != "won" {
			t.Errorf("%q: %v %v %q", text, h, rows, problem)
		}
	}
	for _, text := range []string{"email,stage\n", "email,stage\n\xff,won\n"} {
		if _, _, problem := readImportCSV(text); problem == "" {
			t.Errorf("%q: no problem said", text)
		}
	}
}
