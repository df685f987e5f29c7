package cli_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/testkit"
)

func slowConfig(dir string) string {
	return testkit.Config{Database: "sqlite:" + dir + "/cleanads.db",
		Top: "http: {read_header_timeout: 300ms, read_timeout: 600ms, write_timeout: 5s, idle_timeout: 500ms, max_header_bytes: 8192}"}.YAML()
}

// guard bounds a test that waits for the server to act: it catches a server
// that never cuts the client off, and measures nothing.
const guard = 20 * time.Second

// dribble writes chunks with pauses until the server closes the connection
// and reports whether it did before the guard (without the timeouts a
// client dribbling like this holds its connection for ever).
func dribble(t *testing.T, c net.Conn, chunk string) bool {
	t.Helper()
	end := time.Now().Add(guard)
	for time.Now().Before(end) {
		if _, err := c.Write([]byte(chunk)); err != nil {
			return true
		}
		// A read that ends at once with EOF or a reset means closed; a
		// timeout means still open.
		c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		buf := make([]byte, 512)
		n, err := c.Read(buf)
		if n > 0 {
			// The server answered (a 408): it closes right after.
			return true
		}
		if ne, ok := err.(net.Error); err != nil && !(ok && ne.Timeout()) {
			return true
		}
	}
	return false
}

func TestSlowClientsAreCutOff(t *testing.T) {
	dir := t.TempDir()
	base, _, _, _ := startServe(t, dir, slowConfig(dir), nil)
	addr := strings.TrimPrefix(base, "http://")
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}

	t.Run("headers dribbled", func(t *testing.T) {
		c := dial()
		c.Write([]byte("POST /v1/leads HTTP/1.1\r\nHost: t.example\r\n"))
		if !dribble(t, c, "X-Slow: 1\r\n") {
			t.Fatal("a client dribbling headers kept its connection")
		}
	})

	t.Run("a body that never ends", func(t *testing.T) {
		c := dial()
		fmt.Fprintf(c, "POST /v1/leads HTTP/1.1\r\nHost: t.example\r\nContent-Type: application/json\r\n"+
			"Authorization: Bearer dent-key-0123456789abcdef\r\nContent-Length: 100000\r\n\r\n{\"site\":\"dent\",")
		end := time.Now().Add(guard)
		var got string
		for time.Now().Before(end) && got == "" {
			c.Write([]byte(" "))
			c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			b, err := io.ReadAll(c)
			got = string(b)
			if ne, ok := err.(net.Error); err != nil && !(ok && ne.Timeout()) {
				break
			}
		}
		// Answered 408 (the client's fault, nothing stored), connection closed.
		if !strings.HasPrefix(got, "HTTP/1.1 408") || !strings.Contains(got, "did not arrive in time") {
			t.Fatalf("answer to an endless body: %q", got)
		}
		c.SetReadDeadline(time.Now().Add(guard))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Errorf("the connection stayed open after the 408")
		}
	})

	t.Run("an idle keep-alive connection", func(t *testing.T) {
		c := dial()
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: t.example\r\n\r\n")
		r := bufio.NewReader(c)
		resp, err := http.ReadResponse(r, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("healthz: %v %v", resp, err)
		}
		io.Copy(io.Discard, resp.Body)
		c.SetReadDeadline(time.Now().Add(guard))
		var ne net.Error
		if _, err := r.ReadByte(); err == nil || errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("an idle connection stayed open: %v", err)
		}
	})

	t.Run("headers over the limit", func(t *testing.T) {
		c := dial()
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: t.example\r\nX-Big: %s\r\n\r\n", strings.Repeat("a", 16<<10))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("big headers: %v %v", resp, err)
		}
	})

	// After all that the server still takes a lead.
	req, _ := http.NewRequest("POST", base+"/v1/leads", strings.NewReader(`{"site":"dent","email":"a@example.com"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer dent-key-0123456789abcdef")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 202 {
		t.Fatalf("a normal lead afterwards: %v %v", resp, err)
	}
	resp.Body.Close()
}
