package notify

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"strconv"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// The TLS modes of an SMTP server.
const (
	TLSStart = "starttls" // plain connection upgraded with STARTTLS (port 587)
	TLSWrap  = "tls"      // TLS from the first byte (port 465)
	TLSNone  = "none"     // no encryption: only for a server on this machine
)

// sendTimeout bounds one whole SMTP conversation.
const sendTimeout = 30 * time.Second

// CheckSMTP says what is wrong with an SMTP server's settings, by field,
// in English; nil when nothing is.
func CheckSMTP(s *store.NotifySMTP) map[string]string {
	p := map[string]string{}
	if s.Host == "" || strings.ContainsAny(s.Host, " /:@") && net.ParseIP(s.Host) == nil {
		p["smtp_host"] = "Write the server's name, e.g. smtp.example.com."
	}
	if s.Port < 1 || s.Port > 65535 {
		p["smtp_port"] = "Write a port between 1 and 65535, usually 587 or 465."
	}
	switch s.TLS {
	case TLSStart, TLSWrap:
	case TLSNone:
		if !isLocal(s.Host) {
			p["smtp_tls"] = "Without encryption the password would cross the network in clear: only a server on this machine may go without."
		}
	default:
		p["smtp_tls"] = "Choose how to encrypt."
	}
	if a, err := mail.ParseAddress(s.From); err != nil || a.Address == "" {
		p["smtp_from"] = "Write an e-mail address, e.g. leads@example.com."
	}
	if len(p) == 0 {
		return nil
	}
	return p
}

// isLocal says whether host is this machine.
func isLocal(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// mailer sends mail through an SMTP server.
type mailer struct {
	// roots are the CAs a server's certificate is checked against; nil:
	// the system's.
	roots *x509.CertPool
	hello string
}

// send sends msg from s.From to to and returns the server's answer; its
// OK says whether the server took it.
func (m mailer) send(ctx context.Context, s *store.NotifySMTP, to string, msg []byte) model.SendAnswer {
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	addr := net.JoinHostPort(s.Host, strconv.Itoa(s.Port))
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return model.SendAnswer{Stage: "connect", Text: netText(err)}
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	tlsConf := &tls.Config{ServerName: s.Host, RootCAs: m.roots, MinVersion: tls.VersionTLS12}
	if s.TLS == TLSWrap {
		tc := tls.Client(conn, tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			return model.SendAnswer{Stage: "tls", Text: netText(err)}
		}
		conn = tc
	}
	c, err := smtp.NewClient(conn, s.Host)
	if err != nil {
		return answerOf("connect", err)
	}
	defer c.Close()
	if m.hello != "" {
		if err := c.Hello(m.hello); err != nil {
			return answerOf("connect", err)
		}
	}
	if s.TLS == TLSStart {
		if ok, _ := c.Extension("STARTTLS"); !ok {
			return model.SendAnswer{Stage: "tls", Text: "the server does not offer STARTTLS"}
		}
		if err := c.StartTLS(tlsConf); err != nil {
			return answerOf("tls", err)
		}
	}
	if s.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", s.Username, s.Password, s.Host)); err != nil {
			return answerOf("auth", err)
		}
	}
	from, _ := mail.ParseAddress(s.From)
	if err := c.Mail(from.Address); err != nil {
		return answerOf("from", err)
	}
	if err := c.Rcpt(to); err != nil {
		return answerOf("to", err)
	}
	// DATA by hand: net/smtp's Data hides the server's final answer, which
	// is what the owner wants to see ("250 Ok: queued as ...").
	id, err := c.Text.Cmd("DATA")
	if err != nil {
		return answerOf("data", err)
	}
	c.Text.StartResponse(id)
	_, _, err = c.Text.ReadResponse(354)
	c.Text.EndResponse(id)
	if err != nil {
		return answerOf("data", err)
	}
	w := c.Text.DotWriter()
	if _, err := w.Write(msg); err != nil {
		return answerOf("data", err)
	}
	if err := w.Close(); err != nil {
		return answerOf("data", err)
	}
	code, text, err := c.Text.ReadResponse(250)
	if err != nil {
		return answerOf("data", err)
	}
	_ = c.Quit()
	return model.SendAnswer{OK: true, Stage: "data", Code: code, Text: text}
}

// answerOf turns an SMTP conversation's error into an answer: the server's
// reply when it gave one, else the network's error.
func answerOf(stage string, err error) model.SendAnswer {
	var te *textproto.Error
	if errors.As(err, &te) {
		return model.SendAnswer{Stage: stage, Code: te.Code, Text: te.Msg}
	}
	return model.SendAnswer{Stage: stage, Text: netText(err)}
}

// netText is a network error without Go's operation prefixes.
func netText(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	return err.Error()
}

// answerErr is an answer that did not go as an error for the log and the
// admin page's last error.
func answerErr(a model.SendAnswer) error {
	if a.Code != 0 {
		return fmt.Errorf("%s: %d %s", a.Stage, a.Code, a.Text)
	}
	return fmt.Errorf("%s: %s", a.Stage, a.Text)
}

// message is a plain-text mail.
type message struct {
	From, To, Subject, Body string
	Date                    time.Time
	ID                      string // Message-ID's left part
}

// bytes renders the mail with CRLF line ends, its subject encoded for
// any language and its body quoted-printable.
func (m message) bytes() []byte {
	var b bytes.Buffer
	host := "cleanads"
	if a, err := mail.ParseAddress(m.From); err == nil {
		if _, h, ok := strings.Cut(a.Address, "@"); ok {
			host = h
		}
	}
	hdr := func(k, v string) { b.WriteString(k + ": " + v + "\r\n") }
	hdr("From", m.From)
	hdr("To", m.To)
	hdr("Subject", mime.QEncoding.Encode("utf-8", m.Subject))
	hdr("Date", m.Date.Format(time.RFC1123Z))
	hdr("Message-ID", "<"+m.ID+"@"+host+">")
	hdr("MIME-Version", "1.0")
	hdr("Content-Type", "text/plain; charset=utf-8")
	hdr("Content-Transfer-Encoding", "quoted-printable")
	hdr("Auto-Submitted", "auto-generated")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	_, _ = qp.Write([]byte(strings.ReplaceAll(m.Body, "\n", "\r\n")))
	_ = qp.Close()
	return b.Bytes()
}
