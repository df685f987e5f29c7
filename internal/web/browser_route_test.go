package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/source"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/web"
)

// echoSource is a source with one browser route that answers what the
// server's edge told it.
type echoSource struct{}

func (echoSource) Name() string  { return "echo" }
func (echoSource) Label() string { return "Echo" }
func (echoSource) Routes() []source.Route {
	return []source.Route{{Pattern: "POST /v1/echo", Browser: true, Handler: func(w http.ResponseWriter, r *http.Request) error {
		edge := source.EdgeOf(r)
		if _, err := source.ReadBody(r); err != nil {
			return err
		}
		site, err := edge.Site(r.Context(), model.SiteID(r.URL.Query().Get("site")))
		if err != nil {
			return err
		}
		key, err := edge.APISite(r)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s %s %t %v", site.ID, edge.ClientIP(r), edge.HTTPS(r), key != nil)
		return nil
	}}}
}

// Any source's browser route gets what the website's forms get: CORS for
// the site's origins, the preflight, the per-visitor limit, the 64 KiB
// body, and the edge (address behind the trusted proxy, https, API key's
// site, the site).
func TestBrowserRoute(t *testing.T) {
	db := storetest.New(t)
	ctx := context.Background()
	if err := db.SiteUpsert(ctx, &model.Site{ID: "dent", Name: "Istanbul Dental", APIKeyHash: model.HashAPIKey(apiKey),
		Settings: model.SiteSettings{Origins: []string{origin}, Country: "TR"}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	h := web.New(web.Options{App: app.New(app.Options{Store: db}), Store: db, Sources: []source.Source{echoSource{}},
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		Limits:         web.Limits{PublicPerIP: model.Rate{N: 1, Per: time.Minute}}}).Handler()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	e := &env{t: t, db: db, srv: srv}

	code, hdr, _ := e.do("OPTIONS", "/v1/echo?site=dent", "", "", map[string]string{"Origin": origin, "Access-Control-Request-Method": "POST"})
	if code != 204 || hdr.Get("Access-Control-Allow-Origin") != origin {
		t.Errorf("preflight from the site: %d %v", code, hdr)
	}
	code, _, _ = e.do("OPTIONS", "/v1/echo?site=dent", "", "", map[string]string{"Origin": "https://evil.example"})
	if code != 403 {
		t.Errorf("preflight from elsewhere: %d", code)
	}
	fwd := map[string]string{"Origin": origin, "X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https"}
	code, hdr, body := e.do("POST", "/v1/echo?site=dent", "text/plain", "{}", fwd)
	if code != 200 || body != "dent 203.0.113.9 true false" || hdr.Get("Access-Control-Allow-Origin") != origin {
		t.Errorf("post from the site: %d %q %v", code, body, hdr)
	}
	code, _, body = e.do("POST", "/v1/echo?site=dent", "text/plain", strings.Repeat("x", 65<<10),
		map[string]string{"Origin": origin, "X-Forwarded-For": "203.0.113.10"})
	if code != 413 {
		t.Errorf("a body over 64 KiB: %d %s", code, body)
	}
	// The second post from one address in the minute is refused; a post
	// with the site's API key counts against the key.
	code, hdr, _ = e.do("POST", "/v1/echo?site=dent", "text/plain", "{}", fwd)
	if code != 429 || hdr.Get("Retry-After") == "" {
		t.Errorf("over the per-visitor limit: %d %v", code, hdr)
	}
	code, _, body = e.do("POST", "/v1/echo?site=dent", "text/plain", "{}", map[string]string{"X-Forwarded-For": "203.0.113.9",
		"Authorization": "Bearer " + apiKey})
	if code != 200 || !strings.HasSuffix(body, " true") {
		t.Errorf("with the API key: %d %q", code, body)
	}
}
