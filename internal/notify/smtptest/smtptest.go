// Package smtptest runs a real SMTP server in the test's process (go-smtp),
// which keeps what it is sent, asks for a username and password, and can be
// stopped and started again on its port, as a mail server goes down and
// comes back. Tests only.
package smtptest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// The account the server takes.
const (
	Username = "owner"
	Password = "s3cret-pass"
)

// Message is one mail the server took.
type Message struct {
	From string
	To   []string
	Data string
}

// Server is a running SMTP server on 127.0.0.1.
type Server struct {
	t    testing.TB
	Host string
	Port int

	// RootCAs trust the server's certificate (NewTLS only).
	RootCAs *x509.CertPool

	tls      *tls.Config // nil: no encryption offered
	implicit bool        // TLS from the first byte, else STARTTLS

	mu   sync.Mutex
	msgs []Message
	srv  *smtp.Server
	ln   net.Listener
}

// New starts a server without encryption; it stops when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, Host: "127.0.0.1"}
	s.listen()
	return s
}

// NewTLS starts a server with a certificate for 127.0.0.1 that RootCAs
// trust: TLS from the first byte when implicit, else offered by STARTTLS.
func NewTLS(t testing.TB, implicit bool) *Server {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "smtptest"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{t: t, Host: "127.0.0.1", RootCAs: x509.NewCertPool(), implicit: implicit,
		tls: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}}}}
	s.RootCAs.AddCert(cert)
	s.listen()
	return s
}

func (s *Server) listen() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.t.Fatal(err)
	}
	s.Port = ln.Addr().(*net.TCPAddr).Port
	s.serve(ln)
	s.t.Cleanup(s.Stop)
}

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

func (s *Server) serve(ln net.Listener) {
	srv := smtp.NewServer(backend{s})
	srv.Domain = "mail.test"
	srv.AllowInsecureAuth = true                                      // plain text on 127.0.0.1, as net/smtp allows there
	srv.ReadTimeout, srv.WriteTimeout = 2*time.Second, 10*time.Second // a client stuck in the wrong TLS mode is let go soon
	if s.tls != nil {
		srv.TLSConfig = s.tls
		if s.implicit {
			ln = tls.NewListener(ln, s.tls)
		}
	}
	s.mu.Lock()
	s.srv, s.ln = srv, ln
	s.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// Stop closes the server: connections are refused until Start.
func (s *Server) Stop() {
	s.mu.Lock()
	srv, ln := s.srv, s.ln
	s.srv, s.ln = nil, nil
	s.mu.Unlock()
	if srv != nil {
		// The listener is closed here too: Serve may not have taken it yet.
		_ = ln.Close()
		_ = srv.Close()
	}
}

// Start listens again on the same port.
func (s *Server) Start() {
	s.t.Helper()
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ { // the port may take a moment to be free again
		if ln, err = net.Listen("tcp", s.Addr()); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		s.t.Fatal(err)
	}
	s.serve(ln)
}

// Messages returns what the server took so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

type backend struct{ s *Server }

func (b backend) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{s: b.s}, nil }

type session struct {
	s    *Server
	auth bool
	m    Message
}

func (x *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (x *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != Username || pass != Password {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "Authentication credentials invalid"}
		}
		x.auth = true
		return nil
	}), nil
}

func (x *session) Mail(from string, _ *smtp.MailOptions) error {
	if !x.auth {
		return smtp.ErrAuthRequired
	}
	x.m.From = from
	return nil
}

func (x *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	x.m.To = append(x.m.To, to)
	return nil
}

func (x *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if len(x.m.To) == 0 {
		return errors.New("no recipient")
	}
	x.m.Data = string(b)
	x.s.mu.Lock()
	x.s.msgs = append(x.s.msgs, x.m)
	x.s.mu.Unlock()
	x.m = Message{From: x.m.From}
	return nil
}

func (x *session) Reset()        { x.m = Message{} }
func (x *session) Logout() error { return nil }
