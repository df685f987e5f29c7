package web

import (
	"testing"

	"github.com/cleanads/cleanads/internal/app"
)

// TestMoneyText: amounts are written as the page's language writes them,
// each in its currency, in the order given (the site's first), never added
// together.
func TestMoneyText(t *testing.T) {
	two := []app.Money{{Currency: "TRY", Cents: 150050}, {Currency: "EUR", Cents: 600000000}}
	for _, c := range []struct {
		lang string
		ms   []app.Money
		want string
	}{
		{"en", two, "1,500.50\u00a0TRY · 6,000,000\u00a0EUR"},
		{"tr", two, "1.500,50\u00a0TRY · 6.000.000\u00a0EUR"},
		{"en", []app.Money{{Currency: "EUR", Cents: 5}}, "0.05\u00a0EUR"},
		{"en", []app.Money{{Currency: "EUR", Cents: 99900}}, "999\u00a0EUR"},
		{"tr", []app.Money{{Currency: "EUR", Cents: -123456}}, "-1.234,56\u00a0EUR"},
		{"en", nil, "–"},
	} {
		if got := moneyText(c.lang, c.ms); got != c.want {
			t.Errorf("%s %v: %q, want %q", c.lang, c.ms, got, c.want)
		}
	}
}
