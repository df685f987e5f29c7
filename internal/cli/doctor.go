package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/config"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/secret"
	"github.com/cleanads/cleanads/internal/store"
)

// doctorSite is one site as doctor checks it: from the file, or from the
// database for the sites made in the admin UI.
type doctorSite struct {
	id, pixelID, token string
	origins            []string
	from               string // "the file" or "the database"
}

// doctorRun holds what the checks share and what they found.
type doctorRun struct {
	e        *env
	base     *url.URL
	http     *http.Client
	roots    *x509.CertPool
	warnDays int
	failed   int
	// dbOK says the database check passed, so the checks that read it run.
	dbOK bool
}

// report prints one check: ok, or problem with what to do.
func (d *doctorRun) report(ok bool, name, msg, fix string) {
	if ok {
		fmt.Fprintf(d.e.stdout, "ok       %s: %s\n", name, msg)
		return
	}
	d.failed++
	if fix != "" {
		msg += ". " + fix
	}
	fmt.Fprintf(d.e.stdout, "problem  %s: %s\n", name, msg)
}

// doctor checks a running install from outside, as a visitor's browser,
// Meta and the operator see it, one line per check; it fails when any
// check does.
func doctor(ctx context.Context, e *env, args []string) error {
	fs := e.flags("doctor")
	cfgPath := fs.String("config", "", "config file (default $CLEANADS_CONFIG)")
	rawURL := fs.String("url", "", "the server's address as browsers reach it (default public_url, else https://the tls name, else http://listen)")
	caFile := fs.String("ca-file", "", "also trust the certificates in this PEM file (a private CA)")
	warnDays := fs.Int("warn-days", 14, "a certificate that expires within this many days is a problem (within a third of its lifetime, if that is less)")
	if err := parse(fs, args); err != nil {
		return err
	}
	d := &doctorRun{e: e, warnDays: *warnDays}
	var err error
	if d.roots, err = x509.SystemCertPool(); err != nil || d.roots == nil {
		d.roots = x509.NewCertPool()
	}
	if *caFile != "" {
		pem, err := os.ReadFile(*caFile)
		if err != nil {
			return err
		}
		if !d.roots.AppendCertsFromPEM(pem) {
			return fmt.Errorf("--ca-file %s: no PEM certificate in it", *caFile)
		}
	}
	c, err := e.loadConfig(*cfgPath)
	if err != nil {
		d.report(false, "config", strings.ReplaceAll(err.Error(), "\n", "\n         "),
			"Fix these in the file (cleanads config check shows them) and run doctor again")
		return errors.New("the config must load before anything else can be checked")
	}
	name := *cfgPath
	if name == "" {
		name = e.getenv("CLEANADS_CONFIG")
	}
	if name == "" {
		name = "no file, the defaults"
	}
	d.report(true, "config", fmt.Sprintf("%s loads: %d site(s), database %s", name, len(c.Sites), store.RedactDSN(c.Database)), "")

	if d.base, err = doctorURL(*rawURL, c); err != nil {
		return err
	}
	// The certificate is judged by its own check; the others look past it,
	// so that each problem is named once.
	d.http = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, Proxy: http.ProxyFromEnvironment}}

	sites := d.database(ctx, c)
	serverUp := d.server(ctx)
	if d.base.Scheme == "https" {
		d.certificate(ctx, c)
	}
	for _, s := range sites {
		if serverUp {
			d.tracker(ctx, s)
		}
		d.meta(ctx, c, s)
	}
	if d.dbOK {
		d.capture(ctx, c, sites)
	}
	if d.failed > 0 {
		return fmt.Errorf("%d problem(s) found", d.failed)
	}
	fmt.Fprintln(e.stdout, "everything checked is fine")
	return nil
}

// doctorURL is where the server is reached: the flag, public_url, the
// name it serves HTTPS for (with tls: listen is not used), or the listen
// address (an unspecified host becomes the loopback).
func doctorURL(raw string, c *config.Config) (*url.URL, error) {
	if raw == "" {
		raw = c.PublicURL
	}
	if raw == "" && c.TLS.Enabled() {
		raw = tlsURL(&c.TLS)
	}
	if raw == "" {
		host, port, _ := net.SplitHostPort(c.Listen)
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "127.0.0.1"
		}
		raw = "http://" + net.JoinHostPort(host, port)
	}
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--url: want http(s)://host[:port], got %q", raw)
	}
	return u, nil
}

// tlsURL is https:// and the name the server's certificate is for: the
// first of tls.acme.domains, or the first name in tls.cert_file (the
// loopback when it names none), with listen_https's port unless 443.
func tlsURL(t *config.TLS) string {
	host := "127.0.0.1"
	if len(t.ACME.Domains) > 0 {
		host = t.ACME.Domains[0]
	} else if pair, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile); err == nil && len(pair.Leaf.DNSNames) > 0 {
		host = pair.Leaf.DNSNames[0]
	}
	if _, port, err := net.SplitHostPort(t.ListenHTTPS); err == nil && port != "443" {
		host = net.JoinHostPort(host, port)
	}
	return "https://" + host
}

// untrustedFix is what to do about a certificate no public authority
// signed, read from where the config says it comes from.
func untrustedFix(c *config.Config) string {
	const priv = " (--ca-file trusts a private CA here)"
	a := c.TLS.ACME
	switch {
	case len(a.Domains) > 0 && a.Directory == config.LetsEncryptStaging:
		return "tls.acme.directory is staging, whose certificates no browser trusts: remove that line once things work, and restart for a certificate from Let's Encrypt" + priv
	case len(a.Domains) > 0 && a.Directory != config.LetsEncrypt:
		return fmt.Sprintf("tls.acme.directory is %s, not a public authority: browsers block the tracker and Meta refuses webhooks with its certificates. Remove the line for Let's Encrypt%s", a.Directory, priv)
	case c.TLS.CertFile != "":
		return "Put a certificate from a public authority in tls.cert_file, or use tls.acme: browsers block the tracker and Meta refuses webhooks with this one" + priv
	}
	return "Use tls.acme, or a certificate from a public authority: browsers block the tracker and Meta refuses webhooks with this one" + priv
}

// database opens the configured database as the server does, checks its
// schema against this binary's, and returns the sites to check: the
// file's, then those only the database has.
func (d *doctorRun) database(ctx context.Context, c *config.Config) []doctorSite {
	var sites []doctorSite
	inFile := map[string]bool{}
	for _, s := range c.Sites {
		sites = append(sites, doctorSite{id: s.ID, pixelID: s.Meta.PixelID, token: s.Meta.AccessToken, origins: s.Origins, from: "the file"})
		inFile[s.ID] = true
	}
	const name = "database"
	fixPath := "Run doctor with the server's own config, where serve runs (a relative path is read from the current folder)"
	if path, ok := strings.CutPrefix(c.Database, "sqlite:"); ok {
		// Opening a missing SQLite file would make an empty one.
		if _, err := os.Stat(path); err != nil {
			d.report(false, name, fmt.Sprintf("no database at %s", path), fixPath)
			return sites
		}
	}
	db, err := d.openStore(ctx, c)
	if err != nil {
		d.report(false, name, fmt.Sprintf("cannot open %s: %v", store.RedactDSN(c.Database), err), "Check the address, that the database server runs and that this machine may reach it")
		return sites
	}
	defer db.Close()
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := db.Ping(pctx); err != nil {
		d.report(false, name, fmt.Sprintf("%s does not answer: %v", store.RedactDSN(c.Database), err),
			"Check that the database server runs and that this machine may reach it; the server cannot take leads meanwhile")
		return sites
	}
	if err := db.CheckSchema(pctx); err != nil {
		d.report(false, name, strings.TrimPrefix(err.Error(), "store: "), "")
		return sites
	}
	list, err := db.SiteList(pctx)
	if err != nil {
		d.report(false, name, fmt.Sprintf("cannot read the sites: %v", err), "")
		return sites
	}
	for _, s := range list {
		if !inFile[string(s.ID)] {
			sites = append(sites, doctorSite{id: string(s.ID), pixelID: s.Settings.Meta.PixelID, token: s.AccessToken,
				origins: s.Settings.Origins, from: "the database"})
		}
	}
	d.report(true, name, fmt.Sprintf("%s answers; schema version %d, this binary's", store.RedactDSN(c.Database), store.LatestVersion()), "")
	d.dbOK = true
	return sites
}

// openStore opens the database as openStore does, but never makes a key
// file: doctor only looks.
func (d *doctorRun) openStore(ctx context.Context, c *config.Config) (*store.DB, error) {
	if path, ok := strings.CutPrefix(c.Database, "sqlite:"); ok && c.SecretKey == "" {
		if _, err := os.Stat(filepath.Join(filepath.Dir(path), secret.KeyFileName)); err != nil {
			return store.Open(ctx, c.Database, store.Options{})
		}
	}
	return openStore(ctx, c)
}

// do asks the server for path with headers and returns the answer with
// its body read.
func (d *doctorRun) do(ctx context.Context, method, path string, header http.Header) (*http.Response, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, d.base.String()+path, nil)
	if err != nil {
		return nil, "", err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := d.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp, strings.TrimSpace(string(b)), nil
}

// server checks that the server answers /readyz, which also asks it
// whether it reaches its database.
func (d *doctorRun) server(ctx context.Context) bool {
	const name = "server"
	resp, body, err := d.do(ctx, http.MethodGet, "/readyz", nil)
	switch {
	case err != nil:
		d.report(false, name, fmt.Sprintf("%s does not answer: %v", d.base, err),
			"Is cleanads running (systemctl status cleanads, docker compose ps)? Do DNS, the firewall and the proxy lead to it? Give another address with --url")
		return false
	case resp.StatusCode == http.StatusServiceUnavailable:
		d.report(false, name, fmt.Sprintf("%s/readyz answers %s: %s", d.base, resp.Status, body),
			"The server runs but cannot reach its database: see the database check and the server's log")
		return true
	case resp.StatusCode != http.StatusOK:
		d.report(false, name, fmt.Sprintf("%s/readyz answers %s, not cleanads' 200", d.base, resp.Status),
			"Something else answers at this address: check the reverse proxy's upstream or --url")
		return false
	}
	d.report(true, name, fmt.Sprintf("%s/readyz answers 200 %s", d.base, body), "")
	return true
}

// certificate connects to the server and judges its certificate as a
// browser or Meta would: trusted, for this name, not expired, and not
// about to expire.
func (d *doctorRun) certificate(ctx context.Context, c *config.Config) {
	const name = "certificate"
	host, port := d.base.Hostname(), d.base.Port()
	if port == "" {
		port = "443"
	}
	dialer := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 10 * time.Second},
		Config: &tls.Config{ServerName: host, InsecureSkipVerify: true}}
	conn, err := dialer.DialContext(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		d.report(false, name, fmt.Sprintf("no TLS handshake with %s: %v", net.JoinHostPort(host, port), err),
			"Is the server (or its proxy) serving HTTPS on this port? With tls: in the config, see the server's log for certificate errors")
		return
	}
	state := conn.(*tls.Conn).ConnectionState()
	conn.Close()
	certs := state.PeerCertificates
	leaf := certs[0]
	now := time.Now()
	fixRenew := "With tls.acme, see the server's log for renewal errors (ports 80 and 443 open, DNS pointing here); with cert_file, renew the certificate and replace the files"
	if now.After(leaf.NotAfter) {
		d.report(false, name, fmt.Sprintf("expired on %s", leaf.NotAfter.UTC().Format(time.DateOnly)), fixRenew)
		return
	}
	inter := x509.NewCertPool()
	for _, ic := range certs[1:] {
		inter.AddCert(ic)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: d.roots, Intermediates: inter, CurrentTime: now}); err != nil {
		var hostErr x509.HostnameError
		var authErr x509.UnknownAuthorityError
		switch {
		case errors.As(err, &hostErr):
			d.report(false, name, fmt.Sprintf("it is for %s, not %s", strings.Join(leaf.DNSNames, ", "), host),
				"Add the name to tls.acme.domains (or get a certificate for it)")
		case errors.As(err, &authErr):
			d.report(false, name, fmt.Sprintf("not signed by an authority browsers trust (issuer %q)", leaf.Issuer.CommonName), untrustedFix(c))
		default:
			d.report(false, name, err.Error(), "")
		}
		return
	}
	left := leaf.NotAfter.Sub(now)
	// ACME clients renew when a third of the lifetime is left (30 days of
	// Let's Encrypt's 90): less than that, and less than --warn-days, is
	// overdue. Short-lived certificates (6 days, a proxy's 12 hours) are
	// judged by their own lifetime.
	warn := min(time.Duration(d.warnDays)*24*time.Hour, leaf.NotAfter.Sub(leaf.NotBefore)/3)
	if left < warn {
		d.report(false, name, fmt.Sprintf("expires in %s, on %s", roundLeft(left), leaf.NotAfter.UTC().Format(time.DateTime)),
			"It should have been renewed by now (ACME renews 30 days ahead). "+fixRenew)
		return
	}
	d.report(true, name, fmt.Sprintf("valid for %s until %s (%s left), issued by %s", host,
		leaf.NotAfter.UTC().Format(time.DateTime), roundLeft(left), leaf.Issuer.CommonName), "")
}

// tracker asks for t.js and for collect's preflight the way a page of
// each of the site's origins does, and checks the CORS answer a browser
// needs.
func (d *doctorRun) tracker(ctx context.Context, s doctorSite) {
	name := "tracker (site " + s.id + ")"
	if len(s.origins) == 0 {
		d.report(false, name, "the site names no origins, so no page may send visits or leads", "Add the website's address to the site's origins")
		return
	}
	for _, origin := range s.origins {
		resp, _, err := d.do(ctx, http.MethodGet, "/t.js", http.Header{"Origin": {origin}})
		if err != nil {
			d.report(false, name, fmt.Sprintf("/t.js: %v", err), "")
			return
		}
		ct := resp.Header.Get("Content-Type")
		acao := resp.Header.Values("Access-Control-Allow-Origin")
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/javascript") {
			d.report(false, name, fmt.Sprintf("/t.js answers %s (%s), not the script", resp.Status, ct),
				"Check that the proxy passes /t.js to cleanads")
			return
		}
		if len(acao) != 1 || (acao[0] != "*" && acao[0] != origin) {
			d.report(false, name, fmt.Sprintf("/t.js answers %s with Access-Control-Allow-Origin %q", origin, acao),
				"Browsers refuse the pinned t.v1.js without exactly one: check that the proxy neither removes nor adds that header")
			return
		}
		resp, _, err = d.do(ctx, http.MethodOptions, "/v1/collect?site="+url.QueryEscape(s.id), http.Header{
			"Origin": {origin}, "Access-Control-Request-Method": {"POST"}, "Access-Control-Request-Headers": {"content-type"}})
		if err != nil {
			d.report(false, name, fmt.Sprintf("/v1/collect: %v", err), "")
			return
		}
		acao = resp.Header.Values("Access-Control-Allow-Origin")
		methods := resp.Header.Get("Access-Control-Allow-Methods")
		switch {
		case len(acao) == 0:
			d.report(false, name, fmt.Sprintf("the server does not let pages of %s send visits and leads (collect's preflight: %s, no Access-Control-Allow-Origin)", origin, resp.Status),
				"If the origin is in "+s.from+", restart cleanads so it reads it, and check that the proxy passes the Origin header; else add it to the site's origins")
			return
		case len(acao) > 1 || acao[0] != origin:
			d.report(false, name, fmt.Sprintf("collect's preflight answers %s with Access-Control-Allow-Origin %q", origin, acao),
				"Browsers need exactly the page's origin: remove the CORS headers your proxy adds")
			return
		case resp.Header.Get("Access-Control-Allow-Credentials") != "true" || !strings.Contains(methods, "POST"):
			d.report(false, name, fmt.Sprintf("collect's preflight for %s lacks Access-Control-Allow-Credentials: true or POST (%q)", origin, methods),
				"Check that the proxy passes cleanads' CORS headers as they are")
			return
		}
	}
	d.report(true, name, fmt.Sprintf("/t.js and /v1/collect answer %s with the right CORS headers", strings.Join(s.origins, ", ")), "")
}

// meta checks each site's token with a Graph read that sends nothing.
func (d *doctorRun) meta(ctx context.Context, c *config.Config, s doctorSite) {
	name := "meta (site " + s.id + ")"
	switch {
	case s.pixelID == "" && s.token == "":
		d.report(true, name, "no pixel id and token yet: dry_run, events are built and shown in /admin/, none is sent", "")
		return
	case s.pixelID == "":
		d.report(false, name, "a token but no pixel id", "Add meta.pixel_id (Events Manager, your dataset)")
		return
	case s.token == "":
		d.report(true, name, fmt.Sprintf("pixel %s has no token yet: dry_run, nothing is sent", s.pixelID), "")
		return
	}
	p, err := graphClient(c).Pixel(ctx, s.pixelID, s.token)
	if err != nil {
		var apiErr *capi.APIError
		switch {
		case capi.Classify(err) == capi.ClassAuth:
			d.report(false, name, fmt.Sprintf("Meta refuses the token for pixel %s: %v", s.pixelID, err),
				"Make a new token in Events Manager, Settings, Conversions API, and put it in the site's meta.access_token (in "+s.from+")")
		case errors.As(err, &apiErr):
			d.report(false, name, fmt.Sprintf("Meta answers for pixel %s: %v", s.pixelID, err),
				"Check the pixel id, and that the token's system user has the pixel (Business Settings, Data sources)")
		default:
			d.report(false, name, fmt.Sprintf("cannot reach Meta at %s: %v", c.Meta.GraphURL, err),
				"Check that this machine reaches graph.facebook.com (firewall, DNS, proxy)")
		}
		return
	}
	d.report(true, name, fmt.Sprintf("the token reaches pixel %s (%q) at %s", p.ID, p.Name, c.Meta.GraphURL), "")
}

// roundLeft says how long a certificate has left, in days or, under two
// days, hours.
func roundLeft(d time.Duration) string {
	if d < 48*time.Hour {
		return fmt.Sprintf("%d hours", int(d.Hours()))
	}
	return fmt.Sprintf("%d days", int(d.Hours()/24))
}

// captureDoc is where the owner reads how t.js finds forms and what to do
// when it does not.
const captureDoc = "docs/tracker.md, 'When leads do not arrive'"

// capture reads each site's counters for signs that it loses leads: visits
// to pages with a lead form but no lead, visits but no form found, or leads
// that never carry t.js's fill time (app.CaptureNotices).
func (d *doctorRun) capture(ctx context.Context, c *config.Config, sites []doctorSite) {
	db, err := d.openStore(ctx, c)
	if err != nil {
		return // the database check said why
	}
	defer db.Close()
	today := model.Day(time.Now())
	for _, s := range sites {
		name := "leads (site " + s.id + ")"
		cs, err := db.Counters(ctx, model.SiteID(s.id), today-app.CaptureDays+1, today)
		if err != nil {
			d.report(false, name, fmt.Sprintf("cannot read the counters: %v", err), "")
			continue
		}
		notices := app.CaptureNotices(cs, today)
		for _, n := range notices {
			msg, fix := captureWords(n)
			d.report(false, name, msg, fix)
		}
		if len(notices) == 0 {
			d.report(true, name, fmt.Sprintf("last %d days: %d visits (%d to pages with a lead form), %d web leads (%d without t.js's timing)",
				app.CaptureDays, cs.Sum(model.CounterVisits, "*", 0, today), cs.Sum(model.CounterFormVisits, "*", 0, today),
				cs.Sum(model.CounterLeads, model.SourceWeb, 0, today), cs.Sum(model.CounterLeadsUntracked, model.SourceWeb, 0, today)), "")
		}
	}
}

// captureWords says a capture notice in plain words, with its likely cause
// and what to do.
func captureWords(n app.CaptureNotice) (msg, fix string) {
	switch n.Kind {
	case app.NoticeFormNoLead:
		return fmt.Sprintf("%d visits to pages with a lead form in the last %d days, and no lead: the form may not be captured", n.FormVisits, n.Days),
			"Send the form once yourself and look for it in /admin/leads. A form that posts by JavaScript (a form plugin) or sits in an iframe of another site is the usual cause; see " + captureDoc
	case app.NoticeNoForm:
		return fmt.Sprintf("%d visits in the last %d days, no lead, and t.js found no lead form on any page", n.Visits, n.Days),
			"Check that the one-line snippet is on the form's page too, that the form is not in an iframe of another site (HubSpot, Typeform), and that the page loads /t.js rather than the old /t.v1.js, which takes only forms marked data-cleanads; see " + captureDoc
	case app.NoticeUntracked:
		return fmt.Sprintf("none of the %d web leads of the last %d days carries t.js's fill time: they reach CleanAds without the tracker", n.Leads, n.Days),
			"The two-second rule cannot judge them. Put the one-line snippet on the form's page, and let the form post as it did (t.js sends the lead alongside); a lead your own server posts with the API carries no fill time of t.js's; see " + captureDoc
	}
	return n.Kind, ""
}
