package model

import "strings"

// DetailDevice is the SourceDetail key of a lead's device and browser
// family ("iPhone, Instagram app"), written when retention clears the
// lead's click identity (its user agent among it), so the owner still sees
// what the person used.
const DetailDevice = "device"

// DeviceOf is the device and browser family a user agent names, e.g.
// "Android, Chrome" or "iPhone, Facebook app": what the owner reads of it
// once the user agent itself is gone. Empty for an empty user agent.
func DeviceOf(ua string) string {
	if strings.TrimSpace(ua) == "" {
		return ""
	}
	l := strings.ToLower(ua)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(l, w) {
				return true
			}
		}
		return false
	}
	if has("bot", "crawler", "spider", "curl/", "python", "go-http-client", "headless") {
		return "bot"
	}
	var device string
	switch {
	case has("iphone"):
		device = "iPhone"
	case has("ipad"):
		device = "iPad"
	case has("android"):
		device = "Android"
	case has("windows"):
		device = "Windows"
	case has("cros"):
		device = "ChromeOS"
	case has("macintosh", "mac os x"):
		device = "Mac"
	case has("linux"):
		device = "Linux"
	default:
		device = "other"
	}
	// In-app browsers first: they also name the engine they are built on.
	var browser string
	switch {
	case has("instagram"):
		browser = "Instagram app"
	case has("fban", "fbav", "fb_iab"):
		browser = "Facebook app"
	case has("tiktok", "musical_ly", "bytedancewebview"):
		browser = "TikTok app"
	case has("samsungbrowser"):
		browser = "Samsung Internet"
	case has("edg/", "edga/", "edgios/"):
		browser = "Edge"
	case has("opr/", "opera"):
		browser = "Opera"
	case has("yabrowser"):
		browser = "Yandex Browser"
	case has("firefox/", "fxios/"):
		browser = "Firefox"
	case has("chrome/", "crios/"):
		browser = "Chrome"
	case has("safari/"):
		browser = "Safari"
	default:
		return device
	}
	return device + ", " + browser
}
