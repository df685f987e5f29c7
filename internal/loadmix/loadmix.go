// Package loadmix is the traffic CleanAds is measured with: the visits and
// form submits that cmd/cleanads-load sends over HTTP and that the intake
// benchmarks (internal/app) hand to the Service, so both measure the same
// mix. Everything is drawn from the caller's random source.
package loadmix

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
)

// Origin is the site the traffic visits.
const Origin = "https://www.istanbuldis.example"

var (
	// UserAgents are phones (in and out of Facebook's and Instagram's
	// in-app browsers) and desktops.
	UserAgents = []string{
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Mobile/15E148 Safari/604.1",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/22F76 [FBAN/FBIOS;FBAV/512.0.0.51.109;FBBV/741398533;FBDV/iPhone15,3;FBMD/iPhone;FBSN/iOS;FBSV/18.5;FBSS/3;FBCR/;FBID/phone;FBLC/tr_TR;FBOP/80]",
		"Mozilla/5.0 (Linux; Android 15; SM-S921B Build/AP3A.240905.015.A2; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/137.0.7151.89 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/516.0.0.58.71;]",
		"Mozilla/5.0 (Linux; Android 14; Redmi Note 13 Pro) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/137.0.0.0 Mobile Safari/537.36",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/137.0.0.0 Safari/537.36",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.4 Safari/605.1.15",
	}
	// Pages are the site's paths.
	Pages = []string{"/", "/implant", "/ortodonti", "/dis-beyazlatma", "/iletisim", "/fiyatlar", "/blog/implant-sonrasi-bakim"}
	// Referrers are where visits come from, a third from nowhere.
	Referrers = []string{"", "", "https://www.google.com/", "https://l.facebook.com/", "https://www.instagram.com/", "https://lm.facebook.com/"}
	campaigns = []string{"implant_tr_2026", "ortho_retarget", "whitening_spring", "brand_search"}

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
	greyMsgs   = []string{"Fiyat nedir?", "", "fiyat", "İmplant fiyatı ne kadar?", "how much?"}
	vendorMsgs = []string{
		"Merhaba, web siteniz için SEO hizmeti sunuyoruz, Google'da ilk sayfaya çıkarıyoruz. Teklifimizi iletmek isteriz.",
		"Hi, we are a digital marketing agency. We can get you more patients with our lead generation services. Can we schedule a call?",
	}
	jobMsgs = []string{
		"Merhaba, diş hekimi asistanı olarak iş başvurusu yapmak istiyorum, CV'mi nereye gönderebilirim?",
		"Hello, I am applying for the dental nurse position. Please find my CV attached.",
	}
	asciiFold = strings.NewReplacer("ı", "i", "İ", "i", "ş", "s", "Ş", "s", "ğ", "g", "ü", "u", "Ü", "u", "ö", "o", "Ö", "o", "ç", "c", "Ç", "c")
)

// Pick returns one of list.
func Pick(rng *rand.Rand, list []string) string { return list[rng.IntN(len(list))] }

// IP is a Turkish visitor's address, one in five IPv6.
func IP(rng *rand.Rand) string {
	if rng.IntN(5) == 0 {
		return fmt.Sprintf("2a02:e0:%x:%x::%x", rng.IntN(1<<16), rng.IntN(1<<16), rng.IntN(1<<16))
	}
	return fmt.Sprintf("%d.%d.%d.%d", 78+rng.IntN(120), rng.IntN(256), rng.IntN(256), 1+rng.IntN(254))
}

// ClickID is an fbclid as Meta's ads put them in landing URLs.
func ClickID(rng *rand.Rand) string {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
	b := make([]byte, 40+rng.IntN(40))
	for i := range b {
		b[i] = chars[rng.IntN(len(chars))]
	}
	return "IwAR" + string(b)
}

// UUID is a random (version 4) UUID, as a browser mints a lead's event_id.
func UUID(rng *rand.Rand) string {
	var b [16]byte
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// LandingURL is a page of the site, a quarter of them landed on from an ad
// click (an fbclid and UTM tags).
func LandingURL(rng *rand.Rand) string {
	page := Origin + Pick(rng, Pages)
	if rng.IntN(4) == 0 {
		q := url.Values{"fbclid": {ClickID(rng)}, "utm_source": {"facebook"}, "utm_medium": {"paid"}, "utm_campaign": {Pick(rng, campaigns)}}
		page += "?" + q.Encode()
	}
	return page
}

// Lead is one form submit's fields.
type Lead struct {
	FirstName, LastName, Email, Phone, Message string
	// Honeypot is the hidden field a bot fills.
	Honeypot string
	// FillMS is how long the form took to fill, in milliseconds.
	FillMS  int64
	PageURL string
}

// Leads makes form submits: about 60% clean (a real mobile number, an
// e-mail, a message asking for treatment, a human fill time), 25% grey (a
// price question or no message) and 15% junk (fake numbers, vendor pitches,
// job applications, test entries, bots that fill the honeypot or too fast),
// with a few people sending again within the week. Not safe for concurrent
// use.
type Leads struct {
	seen []string // e-mails sent, for repeats
}

// Next is the next form submit.
func (m *Leads) Next(rng *rand.Rand) Lead {
	first, last := Pick(rng, firstNames), Pick(rng, lastNames)
	l := Lead{
		FirstName: first, LastName: last,
		Email:   fmt.Sprintf("%s.%s%d@%s", asciiLower(first), asciiLower(last), rng.IntN(1_000_000), Pick(rng, mailHosts)),
		Phone:   fmt.Sprintf("0%s %03d %02d %02d", Pick(rng, mobiles), 200+rng.IntN(800), rng.IntN(100), rng.IntN(100)),
		Message: Pick(rng, cleanMsgs), FillMS: int64(15000 + rng.IntN(90000)), PageURL: Origin + Pick(rng, Pages),
	}
	switch n := rng.IntN(100); {
	case n < 60: // clean
	case n < 85: // grey: a price question or nothing
		l.Message = Pick(rng, greyMsgs)
	case n < 88:
		l.Message = Pick(rng, vendorMsgs)
	case n < 90:
		l.Message = Pick(rng, jobMsgs)
	case n < 93:
		l.FirstName, l.LastName, l.Message, l.Phone = "test", "test", "test", "0555 555 55 55"
	case n < 95:
		l.Honeypot, l.FillMS = "http://cheap-pills.example", int64(300+rng.IntN(500))
	case n < 97:
		l.FirstName, l.LastName, l.Message, l.Email = "asdfgh", "qwerty", "sdfsdf sdfsdf", "xkq3@mailinator.com"
	default:
		if len(m.seen) > 0 { // the same person again within the week
			l.Email = m.seen[rng.IntN(len(m.seen))]
		}
	}
	if len(m.seen) < 2000 {
		m.seen = append(m.seen, l.Email)
	}
	return l
}

// asciiLower folds a Turkish name to the letters people use in e-mail
// addresses.
func asciiLower(s string) string { return strings.ToLower(asciiFold.Replace(s)) }
