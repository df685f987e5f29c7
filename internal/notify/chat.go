package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/cleanads/cleanads/internal/model"
)

// The kinds of chat webhook.
const (
	// ChatSlack posts {"text": ...}: Slack's incoming webhooks, and those
	// that copy them (Mattermost, Rocket.Chat, Google Chat, Discord's
	// /slack endpoint, Teams' classic connectors).
	ChatSlack = "slack"
	// ChatTelegram posts to a bot's sendMessage URL
	// (https://api.telegram.org/bot<token>/sendMessage?chat_id=<chat>).
	ChatTelegram = "telegram"
	// ChatTeams posts an Adaptive Card, as Teams' Workflows webhooks take.
	ChatTeams = "teams"
	// ChatGeneric posts the notification as a JSON object (docs/admin.md).
	ChatGeneric = "generic"
)

// ChatKinds are the chat webhook kinds, as the admin page offers them.
var ChatKinds = []string{ChatSlack, ChatTelegram, ChatTeams, ChatGeneric}

// CheckChat says what is wrong with a chat webhook, in English; "" when
// nothing is.
func CheckChat(kind, raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && !(u.Scheme == "http" && isLocal(u.Hostname()))) || u.Host == "" {
		return "Write the webhook's https:// address, as the chat service gave it."
	}
	switch kind {
	case ChatSlack, ChatTeams, ChatGeneric:
	case ChatTelegram:
		if u.Query().Get("chat_id") == "" {
			return "A Telegram address ends in ?chat_id= and the chat's id."
		}
	default:
		return "Choose the kind of webhook."
	}
	return ""
}

// Generic is the JSON object a generic webhook receives.
type Generic struct {
	Event    string `json:"event"` // "lead" (or "test")
	Verdict  string `json:"verdict"`
	Site     string `json:"site"`
	SiteName string `json:"site_name"`
	LeadID   string `json:"lead_id"`
	Name     string `json:"name"`
	Phone    string `json:"phone"`
	Email    string `json:"email"`
	Message  string `json:"message"`
	URL      string `json:"url"`
	// Text is the whole notification as one text, as a person reads it.
	Text string `json:"text"`
}

var slackEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// chatBody is what a webhook of kind receives for a notification.
func chatBody(kind, target string, g Generic) (string, []byte, error) {
	var v any
	switch kind {
	case ChatSlack:
		// Slack reads <...> as a link or a mention (<!channel>): what a
		// visitor typed is escaped as Slack asks, so it stays text.
		v = map[string]string{"text": slackEscape.Replace(g.Text)}
	case ChatTelegram:
		u, _ := url.Parse(target)
		chat := u.Query().Get("chat_id")
		u.RawQuery = ""
		target = u.String()
		v = map[string]any{"chat_id": chat, "text": g.Text, "disable_web_page_preview": true}
	case ChatTeams:
		v = map[string]any{"type": "message", "attachments": []any{map[string]any{
			"contentType": "application/vnd.microsoft.card.adaptive",
			"content": map[string]any{"type": "AdaptiveCard", "version": "1.4",
				"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
				"body":    []any{map[string]any{"type": "TextBlock", "text": g.Text, "wrap": true}}},
		}}}
	default:
		v = g
	}
	b, err := json.Marshal(v)
	return target, b, err
}

// postChat sends a notification to a chat webhook and returns its answer.
func postChat(ctx context.Context, client *http.Client, kind, target string, g Generic) model.SendAnswer {
	to, body, err := chatBody(kind, target, g)
	if err != nil {
		return model.SendAnswer{Stage: "setup", Text: err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, to, bytes.NewReader(body))
	if err != nil {
		return model.SendAnswer{Stage: "setup", Text: "not a web address"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "CleanAds")
	resp, err := client.Do(req)
	if err != nil {
		// The URL holds the webhook's token: say what failed, not where.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return model.SendAnswer{Stage: "connect", Text: netText(err)}
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
	text := strings.TrimSpace(string(answer))
	if text == "" {
		text = http.StatusText(resp.StatusCode)
	}
	return model.SendAnswer{OK: resp.StatusCode/100 == 2, Stage: "http", Code: resp.StatusCode, Text: text}
}

// chatError is a webhook's refusal as an error.
func chatError(a model.SendAnswer) error {
	if a.Code != 0 {
		return fmt.Errorf("the webhook answered %d: %s", a.Code, a.Text)
	}
	return fmt.Errorf("%s: %s", a.Stage, a.Text)
}
