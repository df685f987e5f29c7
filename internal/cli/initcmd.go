package cli

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/cleanads/cleanads/internal/auth"
	"github.com/cleanads/cleanads/internal/buildinfo"
	"github.com/cleanads/cleanads/internal/config"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/secret"
	"github.com/cleanads/cleanads/internal/store"
)

// initAnswers is what init needs to know, from flags or questions.
type initAnswers struct {
	domain, origin, country, siteID      string
	pixelID, token, testCode, email      string
	listen, database                     string
	dir, configPath, keyPath, sqlitePath string
}

// initCmd writes a first install: a commented cleanads.yaml with one site
// and a generated API key, the secret key file, and an admin user in the
// database whose password is printed once. It asks on a terminal and takes
// flags otherwise; it never overwrites a file.
func initCmd(ctx context.Context, e *env, args []string) error {
	fs := e.flags("init")
	var a initAnswers
	fs.StringVar(&a.dir, "dir", ".", "the folder to write cleanads.yaml, secret.key and the database in")
	fs.StringVar(&a.domain, "domain", "", "the server's own name, a subdomain of the website, e.g. t.example.com")
	fs.StringVar(&a.origin, "origin", "", "the website whose pages and forms send leads, e.g. https://www.example.com (several: comma-separated)")
	fs.StringVar(&a.country, "country", "", "the country of phone numbers written without a country code, e.g. TR")
	fs.StringVar(&a.siteID, "site", "", "the site's id in snippets and commands (default: from the origin, e.g. example)")
	fs.StringVar(&a.pixelID, "pixel-id", "", "the Meta pixel (dataset) id; optional: the site is dry_run until it and the token are given")
	fs.StringVar(&a.token, "meta-token", "", "the Conversions API access token from Events Manager; optional")
	fs.StringVar(&a.testCode, "test-event-code", "", "the code from Events Manager's Test Events tab: the site starts in test mode; optional")
	fs.StringVar(&a.email, "email", "", "the owner's e-mail: the first admin user, and the ACME contact in the tls: example")
	fs.StringVar(&a.listen, "listen", "127.0.0.1:8080", "the address the server listens on (0.0.0.0:8080 in a container)")
	fs.StringVar(&a.database, "database", "", "the database (default sqlite:DIR/cleanads.db; or postgres://...)")
	yes := fs.Bool("yes", false, "ask nothing: take the flags and the defaults")
	ask := fs.Bool("ask", false, "ask the questions even when standard input is not a terminal (answers piped in, one a line)")
	if err := parse(fs, args); err != nil {
		return err
	}
	interactive := (*ask || isTerminal(e.stdin)) && !*yes
	dir, err := filepath.Abs(a.dir)
	if err != nil {
		return err
	}
	a.dir = dir
	a.configPath = filepath.Join(dir, "cleanads.yaml")
	a.keyPath = filepath.Join(dir, secret.KeyFileName)
	// Refuse before asking anything: an answer typed for nothing is lost.
	if err := refuseExisting(a.configPath, a.keyPath, filepath.Join(dir, "cleanads.db")); err != nil {
		return err
	}
	if interactive {
		if err := a.ask(e); err != nil {
			return err
		}
		fmt.Fprintln(e.stderr)
	}
	if err := a.check(); err != nil {
		return err
	}
	if a.database == "" {
		a.sqlitePath = filepath.Join(dir, "cleanads.db")
		a.database = "sqlite:" + a.sqlitePath
	} else if p, ok := strings.CutPrefix(a.database, "sqlite:"); ok {
		if a.sqlitePath, err = filepath.Abs(p); err != nil {
			return err
		}
		a.database = "sqlite:" + a.sqlitePath
	}
	if a.sqlitePath != "" {
		if err := refuseExisting(a.sqlitePath); err != nil {
			return err
		}
	}
	password, err := a.write(ctx)
	if err != nil {
		return err
	}
	a.printNext(e.stdout, password)
	return nil
}

// refuseExisting fails, naming them, when any of paths exists.
func refuseExisting(paths ...string) error {
	var found []string
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			found = append(found, p)
		} else if !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	switch len(found) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("%s already exists; init never overwrites a file and wrote nothing: "+
			"to start over, move it away, or give another --dir", found[0])
	}
	return fmt.Errorf("%s already exist; init never overwrites a file and wrote nothing: "+
		"to start over, move them away, or give another --dir", strings.Join(found, ", "))
}

// isTerminal tells whether r is a terminal (not merely a character device
// such as /dev/null, as under cron or systemd).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// ask puts each question on stderr with the flag's value as the default,
// and asks again until the answer is valid.
func (a *initAnswers) ask(e *env) error {
	in := bufio.NewReader(e.stdin)
	// readLine reads one answer; a secret on a terminal is not echoed.
	readLine := func(secret bool) (string, error) {
		if f, ok := e.stdin.(*os.File); ok && secret && term.IsTerminal(int(f.Fd())) {
			b, err := term.ReadPassword(int(f.Fd()))
			fmt.Fprintln(e.stderr)
			return string(b) + "\n", err
		}
		return in.ReadString('\n')
	}
	question := func(dst *string, q string, check func(string) error) error {
		secret := dst == &a.token
		for {
			switch {
			case *dst != "" && secret:
				fmt.Fprintf(e.stderr, "%s [given]: ", q)
			case *dst != "":
				fmt.Fprintf(e.stderr, "%s [%s]: ", q, *dst)
			default:
				fmt.Fprintf(e.stderr, "%s: ", q)
			}
			line, err := readLine(secret)
			if err != nil && line == "" {
				fmt.Fprintln(e.stderr)
				return errors.New("no answer (end of input): nothing was written")
			}
			if v := strings.TrimSpace(line); v != "" {
				*dst = v
			}
			if err := check(*dst); err != nil {
				fmt.Fprintf(e.stderr, "  %v\n", err)
				continue
			}
			return nil
		}
	}
	optional := func(string) error { return nil }
	steps := []struct {
		dst   *string
		q     string
		check func(string) error
	}{
		{&a.domain, "The server's own name, a subdomain of your website (e.g. t.example.com)", checkDomain},
		{&a.origin, "Your website, where the forms are (e.g. https://www.example.com)", checkOrigins},
		{&a.country, "The country of phone numbers written without +code (e.g. TR, DE)", checkCountry},
		{&a.email, "Your e-mail (your admin login)", checkEmail},
		{&a.pixelID, "Meta pixel id (Events Manager; Enter to skip: events are then only built, not sent)", checkPixel},
	}
	for _, s := range steps {
		if err := question(s.dst, s.q, s.check); err != nil {
			return err
		}
	}
	if a.pixelID != "" {
		if err := question(&a.token, "Conversions API access token (Events Manager, Settings; Enter to skip)", optional); err != nil {
			return err
		}
		if err := question(&a.testCode, "Test event code (Events Manager, Test Events; Enter to skip and go live)", optional); err != nil {
			return err
		}
	}
	return nil
}

var domainPattern = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$`)

func checkDomain(s string) error {
	if !domainPattern.MatchString(s) {
		return fmt.Errorf("want a name like t.example.com (no https://, no path), got %q", s)
	}
	return nil
}

func checkOrigins(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("want the website's address, e.g. https://www.example.com")
	}
	_, p := siteProblems(config.Site{ID: "x", Origins: splitList(s), Country: "TR"})
	return p
}

func checkCountry(s string) error {
	_, p := siteProblems(config.Site{ID: "x", Country: s})
	return p
}

func checkEmail(s string) error {
	if _, err := auth.NormalizeEmail(s); err != nil || !strings.Contains(s, "@") {
		return fmt.Errorf("want an e-mail address, got %q", s)
	}
	return nil
}

func checkPixel(s string) error {
	if s != "" && !isAllDigits(s) {
		return fmt.Errorf("want the pixel's digits, got %q", s)
	}
	return nil
}

func isAllDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// siteProblems checks a site by the config's own rules and returns it
// normalised, with the problems as one error.
func siteProblems(s config.Site) (config.Site, error) {
	p := config.CheckSite(&s)
	if len(p) == 0 {
		return s, nil
	}
	msgs := make([]string, len(p))
	for i, e := range p {
		msgs[i] = e.Message
	}
	return s, errors.New(strings.Join(msgs, "; "))
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// check validates every answer at once and fills the derived ones.
func (a *initAnswers) check() error {
	a.domain = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(a.domain), "https://"), "/"))
	a.country = strings.ToUpper(strings.TrimSpace(a.country))
	var missing, problems []string
	for _, r := range []struct{ flag, v string }{{"--domain", a.domain}, {"--origin", a.origin},
		{"--country", a.country}, {"--email", a.email}} {
		if r.v == "" {
			missing = append(missing, r.flag)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: give them as flags, or run cleanads init on a terminal to be asked (cleanads init -h lists them)",
			strings.Join(missing, ", ")+map[bool]string{true: " is", false: " are"}[len(missing) == 1]+" missing")
	}
	add := func(flag string, err error) {
		if err != nil {
			problems = append(problems, flag+": "+err.Error())
		}
	}
	add("--domain", checkDomain(a.domain))
	add("--email", checkEmail(a.email))
	if a.siteID == "" {
		a.siteID = siteIDFrom(a.origin)
	}
	if a.token != "" && a.pixelID == "" {
		problems = append(problems, "--meta-token: give --pixel-id with it")
	}
	if a.testCode != "" && (a.pixelID == "" || a.token == "") {
		problems = append(problems, "--test-event-code: give --pixel-id and --meta-token with it")
	}
	s, err := siteProblems(a.site())
	if err != nil {
		problems = append(problems, "the site: "+err.Error())
	} else {
		a.origin = strings.Join(s.Origins, ",")
	}
	if a.database != "" && !strings.HasPrefix(a.database, "sqlite:") && !strings.HasPrefix(a.database, "postgres://") &&
		!strings.HasPrefix(a.database, "postgresql://") {
		problems = append(problems, "--database: want sqlite:PATH or postgres://...")
	}
	if len(problems) > 0 {
		return fmt.Errorf("nothing was written:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

// site is the one site init configures.
func (a *initAnswers) site() config.Site {
	s := config.Site{ID: a.siteID, Origins: splitList(a.origin), Country: a.country,
		APIKey: strings.Repeat("x", config.MinAPIKeyLength), CookieDomain: cookieDomain(a.domain, a.origin)}
	s.Meta.PixelID, s.Meta.AccessToken, s.Meta.TestEventCode = a.pixelID, a.token, a.testCode
	return s
}

// siteIDFrom makes a site id from the first origin's name: the label
// before the registrable suffix ("www.istanbuldis.example" -> "istanbuldis").
func siteIDFrom(origins string) string {
	list := splitList(origins)
	if len(list) == 0 {
		return "site"
	}
	u, err := url.Parse(list[0])
	if err != nil || u.Hostname() == "" {
		return "site"
	}
	labels := strings.Split(strings.TrimPrefix(strings.ToLower(u.Hostname()), "www."), ".")
	id := labels[0]
	if len(labels) >= 2 {
		id = labels[len(labels)-2]
	}
	id = regexp.MustCompile(`[^a-z0-9_-]+`).ReplaceAllString(id, "-")
	id = strings.Trim(id, "-_")
	if len(id) > 63 {
		id = id[:63]
	}
	if id == "" {
		return "site"
	}
	return id
}

// cookieDomain is the parent domain the server's name and the website
// share (t.example.com and www.example.com: .example.com), so the click
// identity cookies are first-party on the website; empty when they share
// none.
func cookieDomain(domain, origins string) string {
	list := splitList(origins)
	if len(list) == 0 {
		return ""
	}
	u, err := url.Parse(list[0])
	if err != nil {
		return ""
	}
	a, b := strings.Split(domain, "."), strings.Split(strings.ToLower(u.Hostname()), ".")
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	if n < 2 {
		return ""
	}
	return "." + strings.Join(a[len(a)-n:], ".")
}

// write creates the key file, the config and the admin user, in that
// order; when a step fails, what the earlier ones wrote is removed again.
func (a *initAnswers) write(ctx context.Context) (password string, err error) {
	var written []string
	defer func() {
		if err != nil {
			for _, p := range written {
				os.Remove(p)
			}
		}
	}()
	if err := os.MkdirAll(a.dir, 0o700); err != nil {
		return "", err
	}
	if _, err := secret.LoadOrCreateKeyFile(a.keyPath); err != nil {
		return "", err
	}
	written = append(written, a.keyPath)
	apiKey, err := randomHex(24)
	if err != nil {
		return "", err
	}
	f, err := os.OpenFile(a.configPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	written = append(written, a.configPath)
	_, err = io.WriteString(f, a.configText(apiKey))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	// The file must be one the server takes: check it as serve will.
	c, err := config.Load(a.configPath, func(string) string { return "" })
	if err != nil {
		return "", fmt.Errorf("the file init wrote does not pass config check (a bug; please report it): %w", err)
	}
	if a.sqlitePath != "" {
		written = append(written, a.sqlitePath, a.sqlitePath+"-wal", a.sqlitePath+"-shm")
	}
	db, err := openStore(ctx, c)
	if err != nil {
		return "", err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx, time.Now); err != nil {
		return "", err
	}
	if a.sqlitePath != "" {
		// Leads are personal data: the file is the owner's alone.
		if err := os.Chmod(a.sqlitePath, 0o600); err != nil {
			return "", err
		}
	}
	if password, err = newPassword(); err != nil {
		return "", err
	}
	if _, err := auth.New(auth.Options{Store: db, Now: time.Now}).AddUser(ctx, a.email, password); err != nil {
		return "", fmt.Errorf("admin user %s: %w", a.email, err)
	}
	return password, nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// newPassword makes a password easy to copy by hand: four groups of five
// letters and digits without look-alikes (about 95 bits).
func newPassword() (string, error) {
	const alphabet = "abcdefghjkmnpqrstuvwxyz23456789"
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	var s strings.Builder
	for i, c := range b {
		if i > 0 && i%5 == 0 {
			s.WriteByte('-')
		}
		// 256 % 31 leaves a bias under 1% per character: harmless here.
		s.WriteByte(alphabet[int(c)%len(alphabet)])
	}
	return s.String(), nil
}

// q quotes s for YAML (a JSON string is a YAML double-quoted scalar).
func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func qList(list []string) string {
	quoted := make([]string, len(list))
	for i, s := range list {
		quoted[i] = q(s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// configText is the commented cleanads.yaml.
func (a *initAnswers) configText(apiKey string) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# cleanads.yaml: written by `cleanads init` (%s) on %s.", buildinfo.Read().Short(), time.Now().Format("2006-01-02"))
	w("# Every key is explained in docs/configuration.md. After a change, check the file with")
	w("#   cleanads config check --config %s", a.configPath)
	w("# and restart the server. This file holds secrets: keep it mode 0600.")
	w("")
	w("# The address the server listens on. Behind a reverse proxy (nginx, Caddy) keep it on")
	w("# 127.0.0.1. For HTTPS by itself, without a proxy, see tls: below (listen is then not used).")
	w("listen: %s", q(a.listen))
	w("# How browsers reach this server: the install snippet and the admin UI use it.")
	w("public_url: %s", q("https://"+a.domain))
	w("# The embedded SQLite database, right for one machine. For several nodes:")
	w("# postgres://cleanads:PASSWORD@db.internal:5432/cleanads?sslmode=verify-full")
	w("database: %s", q(a.database))
	w("# Whose X-Forwarded-For and X-Real-IP headers are believed: your reverse proxy's address.")
	w("trusted_proxies: [\"127.0.0.1/32\", \"::1/128\"]")
	w("# Encrypts the sites' Meta access tokens at rest and signs the tracker's form tokens.")
	w("# Back it up apart from the database; every node of one install needs the same key.")
	w("secret_key_file: %s", q(a.keyPath))
	w("")
	w("# HTTPS without a reverse proxy: point %s's DNS (A/AAAA records) at this", a.domain)
	w("# server, open ports 80 and 443, uncomment the block (one # off each line), and restart.")
	w("# The server then listens on listen_https and listen_http, not on listen; ports below")
	w("# 1024 need root or CAP_NET_BIND_SERVICE (the systemd unit has it; a container may).")
	w("# The certificate comes from Let's Encrypt and renews by itself; `directory: staging`")
	w("# tries Let's Encrypt's staging directory first (its certificates are not trusted), or")
	w("# give another ACME CA's directory URL, with directory_ca_file for a private CA's root.")
	w("# Or, instead of acme:, give a certificate you have with cert_file and key_file.")
	w("# tls:")
	w("#   acme:")
	w("#     domains: [%s]", q(a.domain))
	w("#     email: %s", q(a.email))
	w("#     # directory: staging")
	w("#     # directory_ca_file: /etc/cleanads/acme-ca.pem")
	w("#   # cert_file: /etc/cleanads/%s.crt", a.domain)
	w("#   # key_file: /etc/cleanads/%s.key", a.domain)
	w("#   # listen_https: \":443\"")
	w("#   # listen_http: \":80\"")
	w("")
	w("# Admin users live in the database: `cleanads init` made %s. Add others with", a.email)
	w("#   cleanads user add --email someone@example.com --config %s", a.configPath)
	w("# admin:")
	w("#   time_zone: \"Europe/Istanbul\"   # the zone admin pages show times in; default: the server's")
	w("")
	w("sites:")
	w("  - id: %s", q(a.siteID))
	w("    # Your CRM and other servers call the API with this key (Authorization: Bearer ...).")
	w("    api_key: %s", q(apiKey))
	w("    # The pages that may load t.js and send visits and leads.")
	w("    origins: %s", qList(splitList(a.origin)))
	w("    # The country of phone numbers written without a country code.")
	w("    country: %s", q(a.country))
	if cd := cookieDomain(a.domain, a.origin); cd != "" {
		w("    # The click-identity cookies are set on this domain, first-party for the website.")
		w("    cookie_domain: %s", q(cd))
	}
	w("    meta:")
	switch {
	case a.pixelID == "" || a.token == "":
		if a.pixelID != "" {
			w("      pixel_id: %s", q(a.pixelID))
		} else {
			w("      # pixel_id: \"123456789012345\"        # Events Manager, your pixel (dataset)")
		}
		w("      # access_token: \"EAAB...\"             # Events Manager, Settings, Conversions API")
		w("      # test_event_code: \"TEST12345\"        # Events Manager, Test Events (then mode: test)")
		w("      # dry_run: every event is built and shown in /admin/, none is sent. Give the pixel id and")
		w("      # the token, then set mode: test (with test_event_code) or live.")
		w("      mode: dry_run")
	default:
		w("      pixel_id: %s", q(a.pixelID))
		w("      access_token: %s", q(a.token))
		if a.testCode != "" {
			w("      test_event_code: %s", q(a.testCode))
			w("      # test: events go to Events Manager's Test Events tab only. Set live when they look right.")
			w("      mode: test")
		} else {
			w("      # live: real leads go to Meta. test (with test_event_code) shows them in Test Events only;")
			w("      # dry_run builds them without sending.")
			w("      mode: live")
		}
	}
	w("      # CRM stages: the steps after the form, each sent to Meta as its event once per lead.")
	w("      # Edit them in the admin (the site's page, Stages) with no restart: once saved there,")
	w("      # the admin's list wins over these lines.")
	w("      stages:")
	w("        %s: {event: Schedule}", model.StageMeeting)
	if cur := model.CountryCurrency(a.country); cur != "" {
		w("        %s: {event: Purchase, currency: %s}", model.StageWon, cur)
	} else {
		w("        %s: {event: Purchase}   # add currency: EUR (your currency) to send values", model.StageWon)
	}
	return b.String()
}

// printNext says what was written, the password once, and the three next
// steps.
func (a *initAnswers) printNext(w io.Writer, password string) {
	base := "https://" + a.domain
	fmt.Fprintf(w, "Wrote %s and %s (both mode 0600) and the database %s.\n", a.configPath, a.keyPath, store.RedactDSN(a.database))
	fmt.Fprintf(w, "\nAdmin user: %s\nPassword:   %s\n", a.email, password)
	fmt.Fprintf(w, "This password is shown once and stored nowhere in clear: keep it now. To set another:\n"+
		"  cleanads user passwd --email %s --config %s\n", a.email, a.configPath)
	fmt.Fprintf(w, "\nNext steps:\n\n")
	fmt.Fprintf(w, "1. Start the server, make %s reach it (tls: in the file, or your reverse proxy),\n"+
		"   and check it from outside:\n"+
		"     cleanads serve --config %s\n"+
		"     cleanads doctor --config %s\n"+
		"   (with systemd: systemctl enable --now cleanads; in a container: docker compose up -d)\n\n",
		base, a.configPath, a.configPath)
	fmt.Fprintf(w, "2. On every page of %s, before </body>:\n"+
		"     <script src=\"%s/t.js\" data-site=\"%s\" async></script>\n"+
		"   It finds the lead forms by itself (any form with an e-mail, phone or name field);\n"+
		"   keep your Meta pixel snippet as it is. To take a form it does not find, or leave one out:\n"+
		"     <form data-cleanads ...>   <form data-cleanads=\"off\" ...>\n\n", strings.Join(splitList(a.origin), ", "), base, a.siteID)
	switch {
	case a.testCode != "":
		fmt.Fprintf(w, "3. Send a test event and look for it in Events Manager, Test Events:\n"+
			"     cleanads send-test --site %s --config %s\n", a.siteID, a.configPath)
	case a.token != "":
		fmt.Fprintf(w, "3. Put the test event code from Events Manager, Test Events, in the site's meta: block\n"+
			"   as test_event_code, and send a test event:\n"+
			"     cleanads send-test --site %s --config %s\n", a.siteID, a.configPath)
	default:
		fmt.Fprintf(w, "3. Put the pixel id, the access token and the test event code from Events Manager in\n"+
			"   the site's meta: block (mode: test), restart, and send a test event:\n"+
			"     cleanads send-test --site %s --config %s\n", a.siteID, a.configPath)
	}
	fmt.Fprintf(w, "\nThe admin UI is at %s/admin/.\n", base)
}
