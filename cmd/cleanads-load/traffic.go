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

func (t *traffic) pick(list []string) string { return list[t.rng.IntN(len(list))] }

func (t *traffic) ip() string {
	if t.rng.IntN(5) == 0 {
		return fmt.Sprintf("2a02:e0:%x:%x::%x", t.rng.IntN(1<<16), t.rng.IntN(1<<16), t.rng.IntN(1<<16))
	}
	return fmt.Sprintf("%d.%d.%d.%d", 78+t.rng.IntN(120), t.rng.IntN(256), t.rng.IntN(256), 1+t.rng.IntN(254))
}

func (t *traffic) clickID() string {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
	b := make([]byte, 40+t.rng.IntN(40))
	for i := range b {
		b[i] = chars[t.rng.IntN(len(chars))]
	}
	return "IwAR" + string(b)
}

func (t *traffic) uuid() string {
	var b [16]byte
	for i := range b {
		b[i] = byte(t.rng.Uint32())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// bareGen posts the same small body again and again: the ceiling.
type bareGen struct{ raw request }

func (g *bareGen) next() (request, bool)   { return g.raw, true }
func (g *bareGen) answered(int, *response) {}
func (g *bareGen) wantsBody() bool         { return false }

var (
	userAgents = []string{
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Mobile/15E148 Safari/604.1",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/22F76 [FBAN/FBIOS;FBAV/512.0.0.51.109;FBBV/741398533;FBDV/iPhone15,3;FBMD/iPhone;FBSN/iOS;FBSV/18.5;FBSS/3;FBCR/;FBID/phone;FBLC/tr_TR;FBOP/80]",
		"Mozilla/5.0 (Linux; Android 15; SM-S921B Build/AP3A.240905.015.A2; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/137.0.7151.89 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/516.0.0.58.71;]",
		"Mozilla/5.0 (Linux; Android 14; Redmi Note 13 Pro) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/137.0.0.0 Mobile Safari/537.36",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/137.0.0.0 Safari/537.36",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.4 Safari/605.1.15",
	}
	pages     = []string{"/", "/implant", "/ortodonti", "/dis-beyazlatma", "/iletisim", "/fiyatlar", "/blog/implant-sonrasi-bakim"}
	referrers = []string{"", "", "https://www.google.com/", "https://l.facebook.com/", "https://www.instagram.com/", "https://lm.facebook.com/"}
	campaigns = []string{"implant_tr_2026", "ortho_retarget", "whitening_spring", "brand_search"}
)

// collectGen sends page views as t.js does: most from new visitors, about a
// third from returning ones (the visitor cookie the server set earlier), a
// quarter of landings with an fbclid from an ad click.
type collectGen struct {
	traffic
	known []string // visitor ids this connection was given
}

func (g *collectGen) wantsBody() bool { return true }

func (g *collectGen) next() (request, bool) {
	page := "https://www.istanbuldis.example" + g.pick(pages)
	q := url.Values{}
	if g.rng.IntN(4) == 0 {
		q.Set("fbclid", g.clickID())
		q.Set("utm_source", "facebook")
		q.Set("utm_medium", "paid")
		q.Set("utm_campaign", g.pick(campaigns))
	}
	if len(q) > 0 {
		page += "?" + q.Encode()
	}
	body, _ := json.Marshal(map[string]any{"site": g.o.site, "url": page, "referrer": g.pick(referrers)})
	var cookie string
	if len(g.known) > 0 && g.rng.IntN(3) == 0 {
		cookie = "cleanads_vid=" + g.known[g.rng.IntN(len(g.known))]
	}
	return g.post(g.path+"/v1/collect?site="+url.QueryEscape(g.o.site), "text/plain;charset=UTF-8", body,
		[]string{"Origin", g.o.origin, "User-Agent", g.pick(userAgents), "X-Forwarded-For", g.ip(), "Cookie", cookie}), true
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

// leadGen sends form submits: about 60% clean (a real mobile number, an
// e-mail, a message asking for treatment, a human fill time), 25% grey (a
// price question or no message) and 15% junk (fake numbers, vendor pitches,
// job applications, test entries, bots that fill the honeypot or too fast),
// with a few people sending twice. With -tokens most carry a visitor cookie
// and a form token from the collect run, as t.js sends them.
type leadGen struct {
	traffic
	seen []string // e-mails sent, for repeats
}

func (g *leadGen) wantsBody() bool { return false }

var (
	firstNames = []string{"Ayşe", "Mehmet", "Fatma", "Mustafa", "Zeynep", "Ahmet", "Elif", "Emre", "Hatice", "Burak", "Selin", "Can", "Deniz", "Hakan", "Merve", "Oğuz"}
	lastNames  = []string{"Yılmaz", "Kaya", "Demir", "Şahin", "Çelik", "Yıldız", "Aydın", "Öztürk", "Arslan", "Doğan", "Koç", "Kurt"}
	mailHosts  = []string{"gmail.com", "gmail.com", "gmail.com", "hotmail.com", "outlook.com", "yahoo.com", "icloud.com", "yandex.com"}
	mobiles    = []string{"530", "532", "533", "535", "536", "538", "541", "542", "543", "505", "506", "507", "551", "552", "553", "561"}
	cleanMsgs  = []string{
		"Merhaba, implant tedavisi hakkında bilgi almak ve muayene randevusu oluşturmak istiyorum. Hafta içi akşam saatleri uygun.",
		"İyi günler, üst çenemde iki diş eksik. Köprü mü implant mı daha uygun olur, muayene için ne zaman gelebilirim?",
		"Kızım için şeffaf plak tedavisi düşünüyoruz, önce bir muayene olmak istiyoruz. Cumartesi randevu var mı?",
		"Hello, I will be in Istanbul next month and would like a consultation for veneers. Could you call me back?",
		"Diş eti kanamam var ve sol alt dişimde ağrı başladı, en kısa zamanda muayene olmak istiyorum.",
		"Merhaba, zirkonyum kaplama için randevu almak istiyorum, öğleden sonra arayabilirsiniz.",
	}
	greyMsgs  = []string{"Fiyat nedir?", "", "fiyat", "İmplant fiyatı ne kadar?", "how much?"}
	vendorMsg = []string{
		"Merhaba, web siteniz için SEO hizmeti sunuyoruz, Google'da ilk sayfaya çıkarıyoruz. Teklifimizi iletmek isteriz.",
		"Hi, we are a digital marketing agency. We can get you more patients with our lead generation services. Can we schedule a call?",
	}
	jobMsg = []string{
		"Merhaba, diş hekimi asistanı olarak iş başvurusu yapmak istiyorum, CV'mi nereye gönderebilirim?",
		"Hello, I am applying for the dental nurse position. Please find my CV attached.",
	}
)

func (g *leadGen) next() (request, bool) {
	var (
		first, last = g.pick(firstNames), g.pick(lastNames)
		email       = fmt.Sprintf("%s.%s%d@%s", asciiLower(first), asciiLower(last), g.rng.IntN(1_000_000), g.pick(mailHosts))
		phone       = fmt.Sprintf("0%s %03d %02d %02d", g.pick(mobiles), 200+g.rng.IntN(800), g.rng.IntN(100), g.rng.IntN(100))
		msg         = g.pick(cleanMsgs)
		fill        = int64(15000 + g.rng.IntN(90000))
		hp          = ""
	)
	switch n := g.rng.IntN(100); {
	case n < 60: // clean
	case n < 85: // grey: a price question or nothing
		msg = g.pick(greyMsgs)
	case n < 88:
		msg = g.pick(vendorMsg)
	case n < 90:
		msg = g.pick(jobMsg)
	case n < 93:
		first, last, msg, phone = "test", "test", "test", "0555 555 55 55"
	case n < 95:
		hp, fill = "http://cheap-pills.example", int64(300+g.rng.IntN(500))
	case n < 97:
		first, last, msg, email = "asdfgh", "qwerty", "sdfsdf sdfsdf", "xkq3@mailinator.com"
	default:
		if len(g.seen) > 0 { // the same person again within the week
			email = g.seen[g.rng.IntN(len(g.seen))]
		}
	}
	if len(g.seen) < 200 {
		g.seen = append(g.seen, email)
	}
	in := map[string]any{
		"site": g.o.site, "event_id": g.uuid(), "first_name": first, "last_name": last, "email": email, "phone": phone,
		"message": msg, "fill_ms": fill, "page_url": "https://www.istanbuldis.example" + g.pick(pages),
		"consent": true,
	}
	if hp != "" {
		in["hp"] = hp
	}
	var cookie string
	if vt, ok := g.s.take(); ok {
		in["form_token"] = vt.token
		cookie = "cleanads_vid=" + vt.visitor
	} else if g.rng.IntN(3) == 0 {
		in["fbc"] = "fb.1." + strconv.FormatInt(time.Now().Add(-time.Duration(g.rng.IntN(3600))*time.Second).UnixMilli(), 10) + "." + g.clickID()
	}
	body, _ := json.Marshal(in)
	return g.post(g.path+"/v1/leads?site="+url.QueryEscape(g.o.site), "application/json", body,
		[]string{"Origin", g.o.origin, "User-Agent", g.pick(userAgents), "X-Forwarded-For", g.ip(), "Cookie", cookie}), true
}

func (g *leadGen) answered(int, *response) {}

// asciiLower folds a Turkish name to the letters people use in e-mail
// addresses.
func asciiLower(s string) string {
	r := strings.NewReplacer("ı", "i", "İ", "i", "ş", "s", "Ş", "s", "ğ", "g", "ü", "u", "Ü", "u", "ö", "o", "Ö", "o", "ç", "c", "Ç", "c")
	return strings.ToLower(r.Replace(s))
}
