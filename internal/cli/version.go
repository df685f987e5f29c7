package cli

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/buildinfo"
	"github.com/cleanads/cleanads/internal/config"
	"github.com/cleanads/cleanads/internal/store"
)

// version prints what the binary was built from and the newest database
// schema it knows.
func version(_ context.Context, e *env, args []string) error {
	fs := e.flags("version")
	if err := parse(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s; database schema %d\n", buildinfo.Read(), store.LatestVersion())
	return nil
}

// probe fetches one URL and succeeds on a 2xx answer: the container's
// HEALTHCHECK (the image has no curl) and scripts that wait for /readyz.
// Without a URL it asks the server the config describes for its /readyz,
// on the plain-HTTP side when it serves HTTPS by itself, so one health
// check fits a server behind a proxy and one with its own certificate.
func probe(ctx context.Context, e *env, args []string) error {
	fs := e.flags("probe")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	cfgPath := fs.String("config", "", "config file, to probe the server it describes when no URL is given (default $CLEANADS_CONFIG)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: cleanads probe [--timeout 5s] [--config FILE] [URL]\n\n"+
			"Fetches URL (e.g. http://127.0.0.1:8080/readyz) and exits 0 on a 2xx answer, 1 otherwise.\n"+
			"Without a URL: the /readyz of the server the config describes, on this machine.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return errUsage
	}
	client := http.DefaultClient
	url := fs.Arg(0)
	if url == "" {
		c, err := e.loadConfig(*cfgPath)
		if err != nil {
			return err
		}
		var insecure bool
		if url, insecure, err = readyURL(c); err != nil {
			return err
		}
		if insecure {
			// Asking this very machine whether it is up, over TLS only
			// because it serves no plain HTTP: the certificate is for the
			// public name, not 127.0.0.1, and is not what is checked.
			client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s answered %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	fmt.Fprintf(e.stdout, "%s %s\n", resp.Status, strings.TrimSpace(string(body)))
	return nil
}

// readyURL is the /readyz of the server c describes, as this machine
// reaches it: listen without tls:, listen_http with it, or listen_https
// when it serves no plain HTTP (insecure then: see probe).
func readyURL(c *config.Config) (url string, insecure bool, err error) {
	scheme, addr := "http", c.Listen
	if c.TLS.Enabled() {
		addr = c.TLS.ListenHTTP
		if addr == "" {
			scheme, addr, insecure = "https", c.TLS.ListenHTTPS, true
		}
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", false, fmt.Errorf("probe: the listen address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port) + "/readyz", insecure, nil
}
