package cli

import (
	"io"
	"log/slog"
	"net/http"
	"testing"
)

// The profiler answers on its own listener, and stops with it.
func TestServePprof(t *testing.T) {
	addr, stop, err := servePprof("127.0.0.1:0", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /debug/pprof/: %d", resp.StatusCode)
	}
	stop()
	if _, err := http.Get("http://" + addr + "/debug/pprof/"); err == nil {
		t.Error("the profiler still answers after stop")
	}
	if _, _, err := servePprof("256.0.0.1:1", slog.Default()); err == nil {
		t.Error("a bad address was accepted")
	}
}
