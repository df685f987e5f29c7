package webforms

import (
	"net/http/httptest"
	"testing"
)

// siteParam reads the site as r.URL.Query().Get("site") does.
func TestSiteParam(t *testing.T) {
	for _, q := range []string{"", "site=dent", "a=1&site=dent&site=other", "site=", "site", "x=1",
		"site=a%20b", "site=a+b", "%73ite=dent", "sit%65=dent&site=two", "site=%zz&site=ok", "%zz=1&site=ok",
		"site=a;b&site=ok", "a=1;site=x&site=ok", "&&site=dent&", "site=d%C3%A9nt", "SITE=dent", "site+=x&site=y"} {
		r := httptest.NewRequest("POST", "/v1/collect?"+q, nil)
		if got, want := siteParam(r), r.URL.Query().Get("site"); got != want {
			t.Errorf("%q: siteParam %q, Query().Get %q", q, got, want)
		}
	}
}
