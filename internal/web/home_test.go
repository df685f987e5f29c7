package web_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestHomePage: the tracker's host answers its root with a short page that
// says what it is and links the admin UI (when there is one), not a 404;
// other unknown paths stay 404.
func TestHomePage(t *testing.T) {
	e := newAdminEnv(t)
	c := e.client()
	p := c.get("/")
	if p.code != http.StatusOK || !strings.HasPrefix(p.hdr.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %d %s", p.code, p.hdr.Get("Content-Type"))
	}
	for _, want := range []string{"CleanAds", "judges each lead", `href="/admin/"`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("GET / lacks %q:\n%s", want, p.body)
		}
	}
	if strings.Contains(p.body, "404") || strings.Contains(p.body, "not found") {
		t.Errorf("GET / still says not found:\n%s", p.body)
	}
	if p := c.get("/no-such-page"); p.code != http.StatusNotFound {
		t.Errorf("GET /no-such-page: %d, want 404", p.code)
	}

	// Without an admin UI the page names no link to one.
	plain := newEnv(t)
	code, _, body := plain.do("GET", "/", "", "", nil)
	if code != http.StatusOK || strings.Contains(body, "/admin/") || !strings.Contains(body, "CleanAds") {
		t.Errorf("GET / without an admin UI: %d\n%s", code, body)
	}
}
