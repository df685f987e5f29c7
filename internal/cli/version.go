package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/buildinfo"
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
func probe(ctx context.Context, e *env, args []string) error {
	fs := e.flags("probe")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: cleanads probe [--timeout 5s] URL\n\n"+
			"Fetches URL (e.g. http://127.0.0.1:8080/readyz) and exits 0 on a 2xx answer, 1 otherwise.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fs.Arg(0), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s answered %s: %s", fs.Arg(0), resp.Status, strings.TrimSpace(string(body)))
	}
	fmt.Fprintf(e.stdout, "%s %s\n", resp.Status, strings.TrimSpace(string(body)))
	return nil
}
