package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cleanads/cleanads/internal/loadmix"
)

// generator makes one connection's requests and learns from the answers.
type generator interface {
	next() (request, bool)
	answered(status int, r *response)
	wantsBody() bool
}

// visitorToken is a visitor id and a form token the server issued to it.
type visitorToken struct{ visitor, token string }

// shared is what the connections of one run share: the form tokens that
// collect received (to save) or that leads use (each once).
type shared struct {
	o      *options
	mu     sync.Mutex
	tokens []visitorToken
}

func newShared(o *options) (*shared, error) {
	s := &shared{o: o}
	if o.kind != "leads" || o.tokens == "" {
		return s, nil
	}
	f, err := os.Open(o.tokens)
	if err != nil {
		return nil, fmt.Errorf("-tokens: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		v, t, ok := strings.Cut(sc.Text(), " ")
		if ok && t != "" {
			s.tokens = append(s.tokens, visitorToken{v, t})
		}
	}
	return s, sc.Err()
}

func (s *shared) add(vt visitorToken) {
	s.mu.Lock()
	s.tokens = append(s.tokens, vt)
	s.mu.Unlock()
}

// take hands out a token once; false when none is left.
func (s *shared) take() (visitorToken, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.tokens) == 0 {
		return visitorToken{}, false
	}
	vt := s.tokens[len(s.tokens)-1]
	s.tokens = s.tokens[:len(s.tokens)-1]
	return vt, true
}

// save adds the tokens collect received to the -save-tokens file, for later
// leads runs; after a leads run it writes back to the -tokens file those it
// did not use, so that the next run does not replay a token.
func (s *shared) save() error {
	var path string
	flags := os.O_WRONLY | os.O_CREATE
	switch {
	case s.o.kind == "collect" && s.o.saveTokens != "":
		path, flags = s.o.saveTokens, flags|os.O_APPEND
	case s.o.kind == "leads" && s.o.tokens != "":
		path, flags = s.o.tokens, flags|os.O_TRUNC
	default:
		return nil
	}
	var b bytes.Buffer
	for _, vt := range s.tokens {
		fmt.Fprintf(&b, "%s %s\n", vt.visitor, vt.token)
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		return fmt.Errorf("tokens: %w", err)
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("tokens: %w", err)
	}
	return f.Close()
}

// newGenerator makes connection i's generator, sending to target.
func newGenerator(o *options, s *shared, target string, i int) generator {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(i)))
	u, _ := url.Parse(target)
	base := traffic{o: o, s: s, rng: rng, host: u.Host, path: u.EscapedPath()}
	switch o.kind {
	case "collect":
		return &collectGen{traffic: base}
	case "leads":
		return &leadGen{traffic: base}
	}
	return &bareGen{raw: base.post(strings.TrimSuffix(base.path, "/")+"/", "application/json", []byte(`{"ping":true}`), nil)}
}

// traffic holds what every generator needs.
type traffic struct {
	o    *options
	s    *shared
	rng  *rand.Rand
	host string
	path string
}

// post writes out a POST request with a body and extra headers.
func (t *traffic) post(path, ctype string, body []byte, hdr []string) request {
	var b bytes.Buffer
	b.Grow(len(body) + 512)
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n", path, t.host, ctype, len(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] != "" {
			fmt.Fprintf(&b, "%s: %s\r\n", hdr[i], hdr[i+1])
		}
	}
	b.WriteString("\r\n")
	b.Write(body)
	return request{raw: b.Bytes()}
}

func (t *traffic) pick(list []string) string { return loadmix.Pick(t.rng, list) }

// bareGen posts the same small body again and again: the ceiling.
type bareGen struct{ raw request }

func (g *bareGen) next() (request, bool)   { return g.raw, true }
func (g *bareGen) answered(int, *response) {}
func (g *bareGen) wantsBody() bool         { return false }

// collectGen sends page views as t.js does: most from new visitors, about a
// third from returning ones (the visitor cookie the server set earlier), a
// quarter of landings with an fbclid from an ad click.
type collectGen struct {
	traffic
	known []string // visitor ids this connection was given
}

func (g *collectGen) wantsBody() bool { return true }

func (g *collectGen) next() (request, bool) {
	page := loadmix.LandingURL(g.rng)
	body, _ := json.Marshal(map[string]any{"site": g.o.site, "url": page, "referrer": g.pick(loadmix.Referrers)})
	var cookie string
	if len(g.known) > 0 && g.rng.IntN(3) == 0 {
		cookie = "cleanads_vid=" + g.known[g.rng.IntN(len(g.known))]
	}
	return g.post(g.path+"/v1/collect?site="+url.QueryEscape(g.o.site), "text/plain;charset=UTF-8", body,
		[]string{"Origin", g.o.origin, "User-Agent", g.pick(loadmix.UserAgents), "X-Forwarded-For", loadmix.IP(g.rng), "Cookie", cookie}), true
}

func (g *collectGen) answered(status int, r *response) {
	if status != 200 || r == nil {
		return
	}
	var vid string
	for _, c := range r.header.Values("Set-Cookie") {
		if v, ok := strings.CutPrefix(c, "cleanads_vid="); ok {
			vid, _, _ = strings.Cut(v, ";")
		}
	}
	if vid == "" {
		return
	}
	if len(g.known) < 500 {
		g.known = append(g.known, vid)
	}
	if g.o.saveTokens != "" {
		var a struct {
			FormToken string `json:"form_token"`
		}
		if json.Unmarshal(r.body, &a) == nil && a.FormToken != "" {
			g.s.add(visitorToken{vid, a.FormToken})
		}
	}
}

// leadGen sends form submits (the mix of loadmix.Leads). With -tokens most
// carry a visitor cookie and a form token from the collect run, as t.js
// sends them.
type leadGen struct {
	traffic
	mix loadmix.Leads
}

func (g *leadGen) wantsBody() bool { return false }

func (g *leadGen) next() (request, bool) {
	l := g.mix.Next(g.rng)
	in := map[string]any{
		"site": g.o.site, "event_id": loadmix.UUID(g.rng), "first_name": l.FirstName, "last_name": l.LastName,
		"email": l.Email, "phone": l.Phone, "message": l.Message, "fill_ms": l.FillMS, "page_url": l.PageURL,
		"consent": true,
	}
	if l.Honeypot != "" {
		in["hp"] = l.Honeypot
	}
	var cookie string
	if vt, ok := g.s.take(); ok {
		in["form_token"] = vt.token
		cookie = "cleanads_vid=" + vt.visitor
	} else if g.rng.IntN(3) == 0 {
		in["fbc"] = "fb.1." + strconv.FormatInt(time.Now().Add(-time.Duration(g.rng.IntN(3600))*time.Second).UnixMilli(), 10) + "." + loadmix.ClickID(g.rng)
	}
	body, _ := json.Marshal(in)
	return g.post(g.path+"/v1/leads?site="+url.QueryEscape(g.o.site), "application/json", body,
		[]string{"Origin", g.o.origin, "User-Agent", g.pick(loadmix.UserAgents), "X-Forwarded-For", loadmix.IP(g.rng), "Cookie", cookie}), true
}

func (g *leadGen) answered(int, *response) {}
