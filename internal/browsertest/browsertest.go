// Package browsertest starts a real headless Chromium for tests, through
// chromedp: one fresh browser profile per test, closed when the test ends.
// Tests skip when Chromium is missing, except under CI=true, where a missing
// browser is a failure, and when CLEANADS_TEST_BROWSER=skip: CI sets that
// in its PostgreSQL pass, since a browser test drives the pages and the
// tracker, whose SQL the pages' own tests run on both engines, and it
// already ran in the SQLite pass.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// EnvSkip, set to "skip", skips every browser test (CI's PostgreSQL pass).
const EnvSkip = "CLEANADS_TEST_BROWSER"

// Timeout bounds a whole browser test, so a stuck page fails the test
// instead of hanging the suite; no step's speed is asserted.
const Timeout = 2 * time.Minute

// Path returns the Chromium binary to use: $CHROMIUM, else chromium or
// chromium-browser on the PATH; empty when there is none.
func Path() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "/usr/bin/chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// New starts a headless Chromium with a fresh profile and returns a chromedp
// context for it, bounded by Timeout; the browser is closed when the test
// ends. Extra options (e.g. host-resolver rules) are added to the defaults.
func New(t testing.TB, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	if os.Getenv(EnvSkip) == "skip" {
		t.Skip("browsertest: " + EnvSkip + "=skip skips the browser tests (CI sets it in its PostgreSQL pass; its SQLite pass runs them)")
	}
	bin := Path()
	if bin == "" {
		if strings.EqualFold(os.Getenv("CI"), "true") {
			t.Fatal("browsertest: chromium is missing (apt-get install chromium); CI=true requires it")
		}
		t.Skip("browsertest: chromium is not installed (apt-get install chromium); skipping the browser test")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
	}
	opts = append(opts, extra...)
	ctx, cancelTimeout := context.WithTimeout(context.Background(), Timeout)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
		cancelTimeout()
	})
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("browsertest: start chromium %s: %v", bin, err)
	}
	return bctx
}

// OutputDir is where a test writes files for people to look at:
// testoutput/ in the test's package folder (git-ignored).
func OutputDir(t testing.TB) string {
	t.Helper()
	dir := "testoutput"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Screenshot writes a full-page PNG of the current page to
// testoutput/NAME.png and returns its path.
func Screenshot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(OutputDir(t), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return path
}

// ScreenshotOf writes a PNG of the first element sel matches (scrolled into
// view) to testoutput/NAME.png and returns its path: a part of a long page,
// at the size a person sees it.
func ScreenshotOf(t testing.TB, ctx context.Context, name, sel string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("screenshot %s of %s: %v", name, sel, err)
	}
	path := filepath.Join(OutputDir(t), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return path
}
