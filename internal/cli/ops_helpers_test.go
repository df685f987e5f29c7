package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/cli"
)

// startServe runs "cleanads serve" in-process with the given config text
// and environment, and returns its base URL, its stdout and stderr, and a
// stop function returning the exit code (also run when the test ends).
func startServe(t *testing.T, dir, cfgText string, env map[string]string) (base string, stdout, stderr *syncBuffer, stop func() int) {
	t.Helper()
	cfg := filepath.Join(dir, "cleanads.yaml")
	if err := os.WriteFile(cfg, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr = &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- cli.Run(ctx, []string{"cleanads", "serve", "--config", cfg}, func(k string) string { return env[k] },
			strings.NewReader(""), stdout, stderr)
	}()
	re := regexp.MustCompile(`listening on (https?://\S+)`)
	// A guard against a server that never starts, not a measure of speed.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := re.FindStringSubmatch(stdout.String()); m != nil {
			base = m[1]
			break
		}
		select {
		case code := <-done:
			cancel()
			t.Fatalf("serve exited %d: %s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve did not start: %s %s", stdout.String(), stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	stopped, code := false, 0
	stop = func() int {
		if !stopped {
			cancel()
			code = <-done
			stopped = true
		}
		return code
	}
	t.Cleanup(func() { stop() })
	return base, stdout, stderr, stop
}
