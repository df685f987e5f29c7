package web

import (
	"reflect"
	"testing"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// TestSearchKeys: the inbox searches a whole e-mail address or phone
// number by its contact keys (a phone's per site country), and anything
// else, or a number whole in some of the sites' countries only, as text.
func TestSearchKeys(t *testing.T) {
	site := func(id, country string) *model.Site {
		s := &model.Site{ID: model.SiteID(id)}
		s.Settings.Country = country
		return s
	}
	tr, tr2, de, us := site("tr", "TR"), site("tr2", "TR"), site("de", "DE"), site("us", "US")
	for _, c := range []struct {
		name  string
		q     string
		sites []*model.Site
		site  string
		want  []store.ContactKey
	}{
		{"e-mail", "Ayse.Yilmaz@Gmail.com", []*model.Site{tr, de}, "",
			[]store.ContactKey{{Email: true, Key: "ayse.yilmaz@gmail.com", Sites: []model.SiteID{"tr", "de"}}}},
		{"e-mail, one site", "ayse@x.example", []*model.Site{tr, de}, "de",
			[]store.ContactKey{{Email: true, Key: "ayse@x.example", Sites: []model.SiteID{"de"}}}},
		{"part of an e-mail", "@gmail.com", []*model.Site{tr}, "", nil},
		{"phone, one key for a country", "0532 412 87 19", []*model.Site{tr, tr2}, "",
			[]store.ContactKey{{Key: "905324128719", Sites: []model.SiteID{"tr", "tr2"}}}},
		{"international phone, every country", "+90 532 412 87 19", []*model.Site{tr, de}, "",
			[]store.ContactKey{{Key: "905324128719", Sites: []model.SiteID{"tr", "de"}}}},
		// German numbers have many lengths: this one is whole there too,
		// with another key.
		{"phone, a key for each country", "0532 412 87 19", []*model.Site{tr, de}, "",
			[]store.ContactKey{{Key: "905324128719", Sites: []model.SiteID{"tr"}}, {Key: "495324128719", Sites: []model.SiteID{"de"}}}},
		{"phone whole in one country only", "0532 412 87 19", []*model.Site{tr, us}, "", nil},
		{"the site where it is whole", "0532 412 87 19", []*model.Site{tr, us}, "tr",
			[]store.ContactKey{{Key: "905324128719", Sites: []model.SiteID{"tr"}}}},
		{"part of a phone", "0532 412", []*model.Site{tr}, "", nil},
		{"a name", "Ayşe Yılmaz", []*model.Site{tr}, "", nil},
		{"a site not the user's", "ayse@x.example", []*model.Site{tr}, "de", nil},
	} {
		if got := searchKeys(c.q, c.sites, c.site); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
