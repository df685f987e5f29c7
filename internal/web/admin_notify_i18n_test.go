package web

import (
	"testing"

	"github.com/cleanads/cleanads/internal/notify"
	"github.com/cleanads/cleanads/internal/store"
)

// The notify package's checks are shown through tr: each has its Turkish.
func TestNotifyChecksInTurkish(t *testing.T) {
	var msgs []string
	for _, s := range []*store.NotifySMTP{{Host: "a b", Port: 0, TLS: "", From: "x"}, {Host: "mail.example.com", Port: 25, TLS: "none", From: "a@b.c"}} {
		for _, m := range notify.CheckSMTP(s) {
			msgs = append(msgs, m)
		}
	}
	for _, c := range [][2]string{{"slack", "ftp://x"}, {"telegram", "https://api.telegram.org/botX/sendMessage"}, {"nope", "https://x.example"}} {
		msgs = append(msgs, notify.CheckChat(c[0], c[1]))
	}
	if len(msgs) < 8 {
		t.Fatalf("only %d messages: %q", len(msgs), msgs)
	}
	for _, m := range msgs {
		if _, ok := turkish[m]; !ok {
			t.Errorf("no Turkish for %q", m)
		}
	}
}
