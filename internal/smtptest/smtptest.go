// Package smtptest runs a real SMTP server on loopback for tests (github.com/emersion/go-smtp),
// recording every message it accepts and answering what a test scripts: a recipient refused
// for good (5xx) or for now (4xx), a DATA refused a number of times. WithTLS offers STARTTLS
// with a certificate of its own (Server.RootCAs trusts it); WithAuth requires PLAIN
// authentication before MAIL FROM.
package smtptest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Message is one message the server accepted.
type Message struct {
	From string
	To   []string // the envelope recipients (RCPT TO) the server accepted
	Data []byte
	// TLS reports whether the session had switched to TLS; User who authenticated ("" none).
	TLS  bool
	User string
}

// Option configures NewServer.
type Option func(*options)

type options struct {
	tls        bool
	user, pass string
}

// WithTLS makes the server offer STARTTLS with a self-signed certificate for 127.0.0.1.
func WithTLS() Option { return func(o *options) { o.tls = true } }

// WithAuth makes the server offer AUTH PLAIN and refuse MAIL FROM (530) before a successful
// authentication as user with pass.
func WithAuth(user, pass string) Option { return func(o *options) { o.user, o.pass = user, pass } }

// Server is an SMTP server on 127.0.0.1, closed at the end of the test.
type Server struct {
	// Host and Port are where it listens.
	Host string
	Port int
	// RootCAs trusts the server's certificate (WithTLS).
	RootCAs *x509.CertPool

	mu       sync.Mutex
	messages []Message
	rcpt     map[string]int // recipient -> answer code to RCPT TO
	dataFail []int          // answer codes for the next DATA commands
	arrived  chan struct{}
	opts     options
}

// NewServer starts a server; t's cleanup stops it.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{Host: "127.0.0.1", rcpt: map[string]int{}, arrived: make(chan struct{}, 1000)}
	for _, o := range opts {
		o(&s.opts)
	}
	srv := smtp.NewServer(backend{s})
	if s.opts.tls {
		cert, pool, err := selfSigned()
		if err != nil {
			t.Fatal(err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		s.RootCAs = pool
	}
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Port = ln.Addr().(*net.TCPAddr).Port
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// RefuseRecipient makes every RCPT TO of addr answer code (550: refused for good, 451: try
// later); 0 accepts it again.
func (s *Server) RefuseRecipient(addr string, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rcpt[strings.ToLower(addr)] = code
}

// FailData makes the next len(codes) DATA commands answer those codes, in order.
func (s *Server) FailData(codes ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dataFail = append(s.dataFail, codes...)
}

// Messages returns the messages accepted so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// WaitMessages waits until the server holds at least n messages (failing the test after
// timeout) and returns them.
func (s *Server) WaitMessages(t testing.TB, n int, timeout time.Duration) []Message {
	t.Helper()
	deadline := time.After(timeout)
	for {
		if m := s.Messages(); len(m) >= n {
			return m
		}
		select {
		case <-s.arrived:
		case <-deadline:
			t.Fatalf("smtptest: %d messages after %v, want %d", len(s.Messages()), timeout, n)
		}
	}
}

type backend struct{ s *Server }

func (b backend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	x := &session{s: b.s, conn: c}
	if b.s.opts.user != "" {
		return authSession{x}, nil
	}
	return x, nil
}

type session struct {
	s    *Server
	conn *smtp.Conn
	from string
	to   []string
	user string
}

// authSession offers AUTH PLAIN.
type authSession struct{ *session }

func (authSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (a authSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != a.s.opts.user || pass != a.s.opts.pass {
			return smtpError(535, "authentication failed")
		}
		a.user = user
		return nil
	}), nil
}

func smtpError(code int, msg string) error {
	class := code / 100
	return &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCode{class, 0, 0}, Message: msg}
}

func (x *session) Mail(from string, _ *smtp.MailOptions) error {
	if x.s.opts.user != "" && x.user == "" {
		return smtpError(530, "authentication required")
	}
	x.from = from
	return nil
}

func (x *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	x.s.mu.Lock()
	code := x.s.rcpt[strings.ToLower(to)]
	x.s.mu.Unlock()
	if code != 0 {
		return smtpError(code, fmt.Sprintf("recipient %s refused by smtptest", to))
	}
	x.to = append(x.to, to)
	return nil
}

func (x *session) Data(r io.Reader) error {
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, r); err != nil {
		return err
	}
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	if len(x.s.dataFail) > 0 {
		code := x.s.dataFail[0]
		x.s.dataFail = x.s.dataFail[1:]
		return smtpError(code, "message refused by smtptest")
	}
	_, isTLS := x.conn.TLSConnectionState()
	x.s.messages = append(x.s.messages, Message{From: x.from, To: append([]string(nil), x.to...), Data: buf.Bytes(), TLS: isTLS, User: x.user})
	select {
	case x.s.arrived <- struct{}{}:
	default:
	}
	return nil
}

func (x *session) Reset() {
	x.from, x.to = "", nil
}

func (x *session) Logout() error { return nil }

// selfSigned makes a certificate for 127.0.0.1 and a pool that trusts it.
func selfSigned() (tls.Certificate, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "smtptest"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool, nil
}
