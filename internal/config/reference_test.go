package config

import (
	"encoding"
	"os"
	"reflect"
	"strings"
	"testing"
)

// configKeys lists every key the code reads from a config file, as dotted
// paths: "sites[]" is each site, "*" a map's key. A type that reads itself
// from text (a duration, a rate) is one key.
func configKeys(t reflect.Type, prefix string, out *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	textual := reflect.PointerTo(t).Implements(reflect.TypeFor[encoding.TextUnmarshaler]())
	switch {
	case textual:
		*out = append(*out, prefix)
	case t.Kind() == reflect.Struct:
		for f := range t.Fields() {
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if strings.Contains(opts, "inline") {
				configKeys(f.Type, prefix, out)
				continue
			}
			if prefix != "" {
				name = prefix + "." + name
			}
			configKeys(f.Type, name, out)
		}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		configKeys(t.Elem(), prefix+"[]", out)
	case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.Struct:
		configKeys(t.Elem(), prefix+".*", out)
	default:
		*out = append(*out, prefix)
	}
}

// The configuration reference names every key the code reads, so a new
// setting cannot ship undocumented.
func TestConfigReferenceNamesEveryKey(t *testing.T) {
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	var keys []string
	configKeys(reflect.TypeFor[Config](), "", &keys)
	if len(keys) < 100 {
		t.Fatalf("found only %d keys: the walk is broken", len(keys))
	}
	for _, k := range keys {
		if !strings.Contains(doc, "`"+k+"`") {
			t.Errorf("docs/configuration.md does not name the key `%s`", k)
		}
	}
}

// The annotated example is a config that loads and validates.
func TestExampleConfigLoads(t *testing.T) {
	env := map[string]string{"DENT_API_KEY": strings.Repeat("k", 40), "DENT_META_TOKEN": "EAAB-example-token"}
	c, err := Load("../../docs/cleanads.example.yaml", func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("docs/cleanads.example.yaml: %v", err)
	}
	if len(c.Sites) == 0 || c.Sites[0].ID != "dent" {
		t.Fatalf("the example's site is missing: %+v", c.Sites)
	}
}
