package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/qualify"
)

// FuzzLoad: any bytes as the config file never panic Load; it either
// fails with an error that says something, or yields a config that
// validates again unchanged in its problems (none) and whose sites'
// qualification settings compile, as serve will compile them.
func FuzzLoad(f *testing.F) {
	for _, name := range []string{"testdata/full.yaml"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		"", "listen: nope\nsites: [{id: 'A B'}]\n", "sites:\n  - id: dent\n    country: TR\n",
		"sites:\n  - id: dent\n    country: TR\n    qualify: {weights: {PHONE_BUSINESS: 0, MESSAGE_HAS_LINK: 30}, review_timeout: 6d20h}\n",
		"sites:\n  - id: dent\n    country: TR\n    qualify: {phrases: {vendor: {tr: [\"bayilik teklifi\"]}}}\n",
		"delivery: {workers: 4, timeout: 30s, lease: 10m, poll: 30s}\n",
		"secret_key: \"$${NOT_EXPANDED}\"\nlog: {level: debug, format: json}\n",
		"sites:\n  - id: dent\n    country: tr\n    origins: [\"https://WWW.example.com:443/\"]\n    thank_you_url: https://www.example.com/thanks\n",
		"meta: {graph_url: \"http://127.0.0.1:1\", api_version: v1.0}\n",
		"sites: [{id: a, country: TR, meta: {stages: {won: {event: Purchase, currency: EUR, value: 10}}}}]\n",
		"&a [*a]", "a: !!binary gIGC", "listen: [1, 2]\n", "sites: {}\n", "\xff\xfe",
	} {
		f.Add([]byte(s))
	}
	env := map[string]string{"DENT_API_KEY": "dent-key-0123456789abcdef", "DENT_META_TOKEN": "tok",
		"TEST_ADMIN_PASSWORD": "correct horse"}
	getenv := func(k string) string { return env[k] }
	f.Fuzz(func(t *testing.T, b []byte) {
		if strings.Contains(string(b), "_file") {
			// Secret and list files would be read from this machine's
			// disk; what they hold is not the loader's input.
			return
		}
		path := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(path, getenv)
		if err != nil {
			var p Problems
			if errors.As(err, &p) && len(p) == 0 || err.Error() == "" {
				t.Fatalf("an error that says nothing: %#v", err)
			}
			return
		}
		var again Problems
		c.validate(&again)
		if len(again) > 0 {
			t.Fatalf("a loaded config does not validate again: %v\n%s", again, b)
		}
		for i := range c.Sites {
			if _, err := qualify.New(c.Sites[i].Qualify, nil); err != nil {
				t.Fatalf("sites[%d].qualify passed validation but the rules refuse it: %v\n%s", i, err, b)
			}
		}
	})
}
