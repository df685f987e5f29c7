package testkit_test

import (
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/config"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/testkit"
)

func TestClock(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	c := testkit.NewClock(at)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { c.Add(time.Second) })
	}
	wg.Wait()
	if got := c.Now(); !got.Equal(at.Add(4 * time.Second)) {
		t.Errorf("after four seconds: %v", got)
	}
	c.Set(at)
	if !c.Now().Equal(at) {
		t.Errorf("after Set: %v", c.Now())
	}
}

func TestWaitFor(t *testing.T) {
	n := 0
	testkit.WaitFor(t, "the third look", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Errorf("looked %d times", n)
	}
}

func TestSiteAndLead(t *testing.T) {
	s := testkit.Site(func(s *model.Site) { s.Settings.Meta.PixelID = "111" })
	if s.ID != "dent" || s.Settings.Origins[0] != testkit.Origin || s.Settings.Meta.PixelID != "111" {
		t.Errorf("site: %+v", s)
	}
	at := time.Unix(1764000000, 0)
	l := testkit.Lead("dent", "ld_1", at, func(l *model.Lead) { l.Email = "a@example.com" })
	if l.EventID != "ev-ld_1" || !l.ReceivedAt.Equal(at) || l.Email != "a@example.com" {
		t.Errorf("lead: %+v", l)
	}
}

// TestConfigLoads: every shape of Config is a file the config package
// accepts, with the site as the builder says.
func TestConfigLoads(t *testing.T) {
	for name, c := range map[string]testkit.Config{
		"bare": {Database: "sqlite:/tmp/x.db"},
		"meta": {Database: "sqlite:/tmp/x.db", GraphURL: "http://127.0.0.1:1", Delivery: "{poll: 1h}", SecretKey: true,
			Site: `
    meta: {pixel_id: "111", access_token: "tok", mode: live}
`},
		"env key":  {Database: "sqlite:/tmp/x.db", APIKey: "${DENT_KEY}", Top: "log: {level: error}"},
		"keyless":  {Database: "sqlite:/tmp/x.db", Keyless: true},
		"no sites": {Database: "sqlite:/tmp/x.db", NoSites: true},
	} {
		t.Run(name, func(t *testing.T) {
			path := c.Write(t, t.TempDir(), "c.yaml")
			cfg, err := config.Load(path, func(k string) string {
				if k == "DENT_KEY" {
					return testkit.SiteKey
				}
				return ""
			})
			if err != nil {
				t.Fatalf("%v\n%s", err, c.YAML())
			}
			if c.NoSites {
				if len(cfg.Sites) != 0 {
					t.Errorf("sites: %+v", cfg.Sites)
				}
				return
			}
			if len(cfg.Sites) != 1 || cfg.Sites[0].ID != "dent" || cfg.Sites[0].Country != "TR" {
				t.Errorf("sites: %+v\n%s", cfg.Sites, c.YAML())
			}
		})
	}
}
