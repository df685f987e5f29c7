package config

import (
	"encoding"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// leaf is one setting found by walk: its key as written in the file
// (sites[0].meta.mode), its environment variable and its value.
type leaf struct {
	key    string
	env    string
	field  reflect.StructField
	value  reflect.Value
	secret bool
}

// walk visits every setting of c. Sites are named in variables by their id:
// sites[0] with id "dent" is CLEANADS_SITES_DENT_*.
func walk(c *Config, fn func(l leaf)) {
	walkStruct(reflect.ValueOf(c).Elem(), "", "CLEANADS", fn)
}

func walkStruct(v reflect.Value, key, env string, fn func(l leaf)) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		fv := v.Field(i)
		if opts == "inline" {
			walkStruct(fv, key, env, fn)
			continue
		}
		k := name
		if key != "" {
			k = key + "." + name
		}
		e := env + "_" + strings.ToUpper(name)
		switch {
		case f.Type.Kind() == reflect.Struct && !reflect.PointerTo(f.Type).Implements(textUnmarshaler):
			walkStruct(fv, k, e, fn)
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
			for j := 0; j < fv.Len(); j++ {
				el := fv.Index(j)
				id := el.FieldByName("ID").String()
				walkStruct(el, k+"["+strconv.Itoa(j)+"]", e+"_"+envName(id), fn)
			}
		default:
			fn(leaf{key: k, env: e, field: f, value: fv, secret: f.Tag.Get("secret") == "true"})
		}
	}
}

// textUnmarshaler is the type of settings written as one string (a rate)
// even when they are structs.
var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

func envName(id string) string {
	return strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(id))
}

// applyEnv sets every setting whose CLEANADS_* variable is not empty.
func applyEnv(c *Config, getenv func(string) string, errs *Problems) {
	walk(c, func(l leaf) {
		s := getenv(l.env)
		if s == "" {
			return
		}
		if err := setFromString(l.value, s); err != nil {
			errs.add(l.env, "%v", err)
		}
	})
}

func setFromString(v reflect.Value, s string) error {
	if u, ok := v.Addr().Interface().(encoding.TextUnmarshaler); ok {
		return u.UnmarshalText([]byte(s))
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return err
		}
		v.SetInt(n)
	case reflect.Float64:
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return err
		}
		v.SetFloat(n)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return err
		}
		v.SetBool(b)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if err := setFromString(p.Elem(), s); err != nil {
			return err
		}
		v.Set(p)
	case reflect.Slice:
		var parts []string
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
		v.Set(reflect.ValueOf(parts))
	case reflect.Map:
		// Maps (stage maps, weights, phrases) are given as JSON.
		p := reflect.New(v.Type())
		if err := json.Unmarshal([]byte(s), p.Interface()); err != nil {
			return err
		}
		v.Set(p.Elem())
	}
	return nil
}

// expandAll replaces ${NAME} in every string setting with the variable's
// value; $$ stands for a literal $. A reference to an unset variable is a
// problem, so a secret is never silently empty.
func expandAll(c *Config, getenv func(string) string, errs *Problems) {
	walk(c, func(l leaf) {
		switch l.value.Kind() {
		case reflect.String:
			l.value.SetString(expand(l.key, l.value.String(), getenv, errs))
		case reflect.Slice:
			if l.value.Type().Elem().Kind() == reflect.String {
				for i := 0; i < l.value.Len(); i++ {
					el := l.value.Index(i)
					el.SetString(expand(l.key, el.String(), getenv, errs))
				}
			}
		}
	})
	// A site's platforms: block is a map, which walk does not enter.
	for i := range c.Sites {
		for name, fields := range c.Sites[i].Platforms {
			for k, v := range fields {
				fields[k] = expand(fmt.Sprintf("sites[%d].platforms.%s.%s", i, name, k), v, getenv, errs)
			}
		}
	}
}

func expand(key, s string, getenv func(string) string, errs *Problems) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "$$"):
			b.WriteByte('$')
			i++
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				errs.add(key, "unclosed ${ in value")
				return s
			}
			name := s[i+2 : i+end]
			val := getenv(name)
			if val == "" {
				errs.add(key, "environment variable %s is not set", name)
			}
			b.WriteString(val)
			i += end
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// Dump writes the settings as YAML with every secret masked.
func (c *Config) Dump() string {
	cp := *c
	cp.Sites = append([]Site(nil), c.Sites...)
	walk(&cp, func(l leaf) {
		if l.secret && l.value.String() != "" {
			l.value.SetString("********")
		}
	})
	maskPlatformSecrets(cp.Sites)
	if u, err := url.Parse(cp.Database); err == nil && u.User != nil {
		cp.Database = u.Redacted() // a PostgreSQL URL's password
	}
	b, err := yaml.Marshal(&cp)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
