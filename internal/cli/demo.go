package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/auth"
	"github.com/cleanads/cleanads/internal/buildinfo"
	"github.com/cleanads/cleanads/internal/config"
	"github.com/cleanads/cleanads/internal/demo"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/secret"
)

// demoSite is the demo site's id.
const demoSite = "demo"

// demoOptions are demo's flags.
type demoOptions struct {
	dir, listen, pageListen, email, country string
	pixelID, token, testCode                string
	newPassword                             bool
}

// demoCmd tries CleanAds on one machine, before any server is rented: it
// writes (or reuses) a set-up in --dir with the embedded SQLite database, a
// site whose Meta delivery is dry_run (test with a pixel, a token and a
// test event code), and an admin user whose password it prints once; then
// it serves the normal server and, on a second local port, a demo website
// whose contact form loads t.js through the one-line snippet, and says
// what to open. The page and the server are two origins of one site, as
// www.example.com and t.example.com are: CORS and the first-party cookies
// work as they do on a real install.
func demoCmd(ctx context.Context, e *env, args []string) error {
	fs := e.flags("demo")
	var o demoOptions
	fs.StringVar(&o.dir, "dir", "cleanads-demo", "the folder for the demo's config, secret key and database (reused when it exists)")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8080", "the CleanAds server's address")
	fs.StringVar(&o.pageListen, "page-listen", "", "the demo website's address (default: the server's port + 1)")
	fs.StringVar(&o.email, "email", "demo@cleanads.example", "the admin user's e-mail (the login)")
	fs.StringVar(&o.country, "country", "TR", "the country of phone numbers written without a country code")
	fs.StringVar(&o.pixelID, "pixel-id", "", "a Meta pixel (dataset) id: with --meta-token and --test-event-code the demo sends to Events Manager's Test Events")
	fs.StringVar(&o.token, "meta-token", "", "the pixel's Conversions API access token")
	fs.StringVar(&o.testCode, "test-event-code", "", "the code from Events Manager's Test Events tab (the demo never sends live events)")
	fs.BoolVar(&o.newPassword, "new-password", false, "give the admin user a new password and print it")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := o.check(); err != nil {
		return err
	}
	dir, err := filepath.Abs(o.dir)
	if err != nil {
		return err
	}
	o.dir = dir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	cfgPath := filepath.Join(dir, "cleanads.yaml")
	// The server's port is tried before anything is written: serve would
	// fail on it later, after the demo's text.
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("cannot listen on %s (%v): give another address with --listen, e.g. --listen 127.0.0.1:8090", o.listen, err)
	}
	ln.Close()
	page, err := net.Listen("tcp", o.pageListen)
	if err != nil {
		return fmt.Errorf("cannot listen on %s for the demo website (%v): give another address with --page-listen", o.pageListen, err)
	}
	defer page.Close()
	pageURL := "http://" + loopback(page.Addr().String())
	server := "http://" + loopback(o.listen)
	// Rewritten each time from the flags: the demo's folder is the demo's.
	// The key and the database are kept.
	if _, err := secret.LoadOrCreateKeyFile(filepath.Join(dir, secret.KeyFileName)); err != nil {
		return err
	}
	if err := os.WriteFile(cfgPath, []byte(o.configText(dir, server, pageURL)), 0o600); err != nil {
		return err
	}
	c, err := config.Load(cfgPath, func(string) string { return "" })
	if err != nil {
		return fmt.Errorf("the demo's config does not load (a bug; please report it): %w", err)
	}
	password, err := o.adminUser(ctx, c)
	if err != nil {
		return err
	}

	_, port, _ := net.SplitHostPort(o.listen)
	site := &http.Server{Handler: demo.Handler(demo.Options{TrackerPort: port, SiteID: demoSite, AdminURL: server + "/admin/"}),
		ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(slog.DiscardHandler, slog.LevelWarn)}
	go site.Serve(page)
	defer site.Close()
	// The box is printed once the server answers, below its own lines.
	go func() {
		if waitReady(ctx, server+"/readyz") {
			o.printBox(e.stdout, server, pageURL, password, c.Sites[0].Meta.Mode)
		}
	}()
	return serve(ctx, e, []string{"--config", cfgPath})
}

// check refuses what the demo cannot do.
func (o *demoOptions) check() error {
	meta := []string{o.pixelID, o.token, o.testCode}
	given := 0
	for _, v := range meta {
		if v != "" {
			given++
		}
	}
	if given > 0 && given < 3 {
		return errors.New("give --pixel-id, --meta-token and --test-event-code together: the demo sends to Events Manager's Test Events only, never live")
	}
	if o.pixelID != "" && !isAllDigits(o.pixelID) {
		return fmt.Errorf("--pixel-id: want the pixel's digits, got %q", o.pixelID)
	}
	if err := checkEmail(o.email); err != nil {
		return fmt.Errorf("--email: %w", err)
	}
	if err := checkCountry(o.country); err != nil {
		return fmt.Errorf("--country: %w", err)
	}
	host, port, err := net.SplitHostPort(o.listen)
	if err != nil || port == "" || port == "0" {
		return fmt.Errorf("--listen: want host:port, e.g. 127.0.0.1:8080, got %q", o.listen)
	}
	if o.pageListen == "" {
		var p int
		if _, err := fmt.Sscan(port, &p); err != nil {
			return fmt.Errorf("--listen: bad port %q", port)
		}
		o.pageListen = net.JoinHostPort(host, fmt.Sprint(p+1))
	}
	return nil
}

// loopback is addr with an unspecified host (0.0.0.0, ::, none) made
// 127.0.0.1, for the addresses a browser on this machine opens.
func loopback(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// configText is the demo's cleanads.yaml: the server at server, the demo
// website at page (and the same port on localhost) as the site's origins.
func (o *demoOptions) configText(dir, server, page string) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# cleanads.yaml of `cleanads demo` (%s), rewritten from its flags on each start.", buildinfo.Read().Short())
	w("# A real install starts with `cleanads init` instead (docs/install.md).")
	w("listen: %s", q(o.listen))
	w("public_url: %s", q(server))
	w("database: %s", q("sqlite:"+filepath.Join(dir, "cleanads.db")))
	w("secret_key_file: %s", q(filepath.Join(dir, secret.KeyFileName)))
	w("# Warnings and errors only, so that what to open stays on the screen.")
	w("log:")
	w("  level: warn")
	w("sites:")
	w("  - id: %s", q(demoSite))
	w("    name: \"Demo Dental Clinic\"")
	origins := []string{page}
	if _, port, err := net.SplitHostPort(strings.TrimPrefix(page, "http://")); err == nil {
		origins = append(origins, "http://localhost:"+port)
	}
	w("    origins: %s", qList(origins))
	w("    country: %s", q(strings.ToUpper(o.country)))
	w("    meta:")
	if o.testCode != "" {
		w("      pixel_id: %s", q(o.pixelID))
		w("      access_token: %s", q(o.token))
		w("      test_event_code: %s", q(o.testCode))
		w("      mode: test")
	} else {
		w("      # Every event is built and shown in /admin/, none is sent.")
		w("      mode: dry_run")
	}
	// The stages a new site starts with, as init writes them, so the
	// demo's lead page can record a meeting or a won deal at once.
	w("      stages:")
	w("        %s: {event: Schedule}", model.StageMeeting)
	if cur := model.CountryCurrency(o.country); cur != "" {
		w("        %s: {event: Purchase, currency: %s}", model.StageWon, cur)
	} else {
		w("        %s: {event: Purchase}", model.StageWon)
	}
	return b.String()
}

// adminUser makes the demo's admin user the first time (and with
// --new-password) and returns its new password; "" when it exists.
func (o *demoOptions) adminUser(ctx context.Context, c *config.Config) (string, error) {
	db, err := openStore(ctx, c)
	if err != nil {
		return "", err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx, time.Now); err != nil {
		return "", err
	}
	users := auth.New(auth.Options{Store: db, Now: time.Now})
	password, err := newPassword()
	if err != nil {
		return "", err
	}
	_, err = users.AddUser(ctx, o.email, password)
	switch {
	case err == nil:
		return password, nil
	case !errors.Is(err, model.ErrConflict):
		return "", fmt.Errorf("admin user %s: %w", o.email, err)
	case o.newPassword:
		if err := users.SetPassword(ctx, o.email, password); err != nil {
			return "", err
		}
		return password, nil
	}
	return "", nil
}

// waitReady asks url until it answers 200, for up to a minute.
func waitReady(ctx context.Context, url string) bool {
	client := &http.Client{Timeout: 2 * time.Second}
	for range 600 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
	return false
}

// printBox says what to open, once the server answers.
func (o *demoOptions) printBox(w io.Writer, server, page, password string, mode string) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	p("")
	p("CleanAds demo is running. Open these in your browser:")
	p("")
	p("  1. The demo website:  %s/", page)
	p("     a page with a contact form and the one-line snippet; fill it in and send it.")
	p("  2. The inbox:         %s/admin/", server)
	if password != "" {
		p("     log in as %s with the password (shown once, keep it):", o.email)
		p("Password: %s", password)
	} else {
		p("     log in as %s with the password printed the first time", o.email)
		p("     (forgot it? run the demo again with --new-password).")
	}
	p("")
	if mode == model.ModeTest {
		p("Meta: test mode. Lead events go to your pixel's Test Events tab (code %s), never live.", o.testCode)
	} else {
		p("Meta: dry run. Each event is built and shown on the lead's page, none is sent.")
		p("  To see them in Events Manager's Test Events tab, run the demo again with")
		p("  --pixel-id, --meta-token and --test-event-code.")
	}
	p("Everything is kept in %s; Ctrl-C stops the demo.", o.dir)
}
