package web

import (
	"testing"

	"github.com/cleanads/cleanads/internal/model"
)

// TestAdClick: the story names the ad a lead came from by its click id,
// stored or in the page's address, whatever platforms the site sends to.
func TestAdClick(t *testing.T) {
	cases := []struct {
		name string
		lead model.Lead
		want string
	}{
		{"fbclid", model.Lead{FBClid: "IwAR0abc"}, "Clicked a Meta ad"},
		{"fbc alone", model.Lead{FBC: "fb.1.1700000000000.IwAR0abc"}, "Clicked a Meta ad"},
		{"gclid", model.Lead{GClid: "Cj0KCQ"}, "Clicked a Google ad"},
		{"gclid in the page", model.Lead{PageURL: "https://dent.example/implant?gclid=Cj0KCQ&utm_source=google"}, "Clicked a Google ad"},
		{"gbraid in the page", model.Lead{PageURL: "https://dent.example/?gbraid=0AAAAA"}, "Clicked a Google ad"},
		{"ttclid in the page", model.Lead{PageURL: "https://dent.example/?ttclid=E.C.P.Cq"}, "Clicked a TikTok ad"},
		{"no click", model.Lead{PageURL: "https://dent.example/?utm_source=newsletter"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _, ok := adClick("en", &c.lead)
			if got != c.want || ok != (c.want != "") {
				t.Errorf("got %q %v, want %q", got, ok, c.want)
			}
		})
	}
	if got, _, _ := adClick("tr", &model.Lead{GClid: "x"}); got != "Bir Google reklamına tıkladı" {
		t.Errorf("Turkish: %q", got)
	}
	if got := shortPage("https://www.dent.example/implant/?utm_campaign=x&fbclid=" + "y"); got != "www.dent.example/implant" {
		t.Errorf("shortPage: %q", got)
	}
}
