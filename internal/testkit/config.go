package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SecretKey is the secret_key of the CLI tests' config files (on
// PostgreSQL access tokens need one, the same on every node).
const SecretKey = "cli-test-secret-key-0123456789abcdef"

// Config is a config file for a test that runs a command: what every such
// file has (listen on a free port, site "dent" with its key, origin and
// country) and what the test adds. YAML gives its text.
type Config struct {
	// Database is the database's address (storetest.MigratedDSN, or
	// "sqlite:" and a path).
	Database string
	// GraphURL, when set, points Meta at a stand-in (graph_url, with
	// api_version v25.0).
	GraphURL string
	// Delivery is the delivery mapping in flow style, e.g. "{poll: 1h}".
	Delivery string
	// SecretKey adds secret_key: SecretKey.
	SecretKey bool
	// Top is more top-level YAML, as is (log, limits, whatsapp, ...).
	Top string
	// APIKey is site dent's api_key: SiteKey when empty; "${DENT_KEY}" to
	// take it from the environment.
	APIKey string
	// Keyless leaves site dent without an api_key.
	Keyless bool
	// Site is more YAML for site dent, each line indented four spaces as
	// its other keys are (meta, lead_ads, whatsapp, ...).
	Site string
	// NoSites leaves the sites out.
	NoSites bool
}

// YAML is the config file's text.
func (c Config) YAML() string {
	var b strings.Builder
	b.WriteString("listen: \"127.0.0.1:0\"\n")
	fmt.Fprintf(&b, "database: %q\n", c.Database)
	if c.GraphURL != "" {
		fmt.Fprintf(&b, "meta: {graph_url: %q, api_version: \"v25.0\"}\n", c.GraphURL)
	}
	if c.Delivery != "" {
		fmt.Fprintf(&b, "delivery: %s\n", c.Delivery)
	}
	if c.SecretKey {
		fmt.Fprintf(&b, "secret_key: %q\n", SecretKey)
	}
	b.WriteString(block(c.Top))
	if c.NoSites {
		return b.String()
	}
	b.WriteString("sites:\n  - id: dent\n")
	if !c.Keyless {
		key := c.APIKey
		if key == "" {
			key = SiteKey
		}
		fmt.Fprintf(&b, "    api_key: %q\n", key)
	}
	fmt.Fprintf(&b, "    origins: [%q]\n    country: TR\n", Origin)
	b.WriteString(block(c.Site))
	return b.String()
}

// Write writes the config file as name in dir and returns its path.
func (c Config) Write(t testing.TB, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(c.YAML()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// block is s without its leading blank lines, ending in one newline (none
// when s is empty): a raw string literal may start and end where it likes.
func block(s string) string {
	s = strings.TrimLeft(s, "\n")
	if s == "" {
		return ""
	}
	return strings.TrimRight(s, "\n") + "\n"
}
