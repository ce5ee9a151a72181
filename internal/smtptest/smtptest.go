// Package smtptest runs a real SMTP server on loopback for tests (github.com/emersion/go-smtp),
// recording every message it accepts and answering what a test scripts: a recipient refused
// for good (5xx) or for now (4xx), a DATA refused a number of times.
package smtptest

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// Message is one message the server accepted.
type Message struct {
	From string
	To   []string // the envelope recipients (RCPT TO) the server accepted
	Data []byte
}

// Server is an SMTP server on 127.0.0.1, closed at the end of the test.
type Server struct {
	// Host and Port are where it listens.
	Host string
	Port int

	mu       sync.Mutex
	messages []Message
	rcpt     map[string]int // recipient -> answer code to RCPT TO
	dataFail []int          // answer codes for the next DATA commands
	arrived  chan struct{}
}

// NewServer starts a server; t's cleanup stops it.
func NewServer(t testing.TB) *Server {
	t.Helper()
	s := &Server{Host: "127.0.0.1", rcpt: map[string]int{}, arrived: make(chan struct{}, 1000)}
	srv := smtp.NewServer(backend{s})
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

func (b backend) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{s: b.s}, nil }

type session struct {
	s    *Server
	from string
	to   []string
}

func smtpError(code int, msg string) error {
	class := code / 100
	return &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCode{class, 0, 0}, Message: msg}
}

func (x *session) Mail(from string, _ *smtp.MailOptions) error {
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
	x.s.messages = append(x.s.messages, Message{From: x.from, To: append([]string(nil), x.to...), Data: buf.Bytes()})
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
