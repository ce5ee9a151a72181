package email

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/textproto"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	mail "github.com/wneessen/go-mail"
	"github.com/wneessen/go-mail/smtp"

	"github.com/platform/integrations/topup"
)

// DefaultTimeout bounds every SMTP exchange (the connection, each command, the message) when
// Config.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// Config configures a Sender.
type Config struct {
	// Host is the SMTP server (SMTP_HOST). Empty: no server, the e-mails are written as .eml
	// files under OutboxDir (development).
	Host string
	// Port is the SMTP port (SMTP_PORT): 465 is implicit TLS; any other starts in clear and
	// upgrades with STARTTLS whenever the server offers it.
	Port int
	// Username and Password authenticate (PLAIN, or LOGIN when the server offers only that)
	// when Username is set; never over an unencrypted connection to another host.
	Username, Password string
	// From is the sender address (SMTP_FROM).
	From string
	// Timeout bounds every SMTP exchange; 0 means DefaultTimeout.
	Timeout time.Duration
	// OutboxDir receives the .eml files when Host is empty.
	OutboxDir string
	// TLS is the TLS configuration for STARTTLS and port 465; nil: the system's roots and Host
	// as the server name.
	TLS *tls.Config
	// Logger receives one line per delivery; nil: slog.Default().
	Logger *slog.Logger
}

// Store keeps the outcome of each recipient of a job; *topup.Store satisfies it.
type Store interface {
	JobDeliveries(ctx context.Context, jobID int64) ([]topup.RecipientDelivery, error)
	RecordDeliveries(ctx context.Context, ds []topup.RecipientDelivery) error
}

// Sender delivers the notification e-mails; it implements topup.Sender.
type Sender struct {
	cfg     Config
	store   Store
	log     *slog.Logger
	metrics *Metrics
	now     func() time.Time
}

// New validates cfg and returns a Sender recording its deliveries in store. m may be nil.
func New(cfg Config, store Store, m *Metrics) (*Sender, error) {
	if store == nil {
		return nil, errors.New("email: nil store")
	}
	if cfg.From == "" {
		return nil, errors.New("email: Config.From (SMTP_FROM) is required")
	}
	if err := mail.NewMsg().From(cfg.From); err != nil {
		return nil, fmt.Errorf("email: invalid SMTP_FROM: %w", err)
	}
	if cfg.Host == "" && cfg.OutboxDir == "" {
		return nil, errors.New("email: Config.OutboxDir is required without Config.Host")
	}
	if cfg.Host != "" && (cfg.Port < 1 || cfg.Port > 65535) {
		return nil, fmt.Errorf("email: invalid SMTP port %d", cfg.Port)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Sender{cfg: cfg, store: store, log: cfg.Logger, metrics: m, now: time.Now}, nil
}

// Send delivers d to the recipients it has not reached yet (a job retried after a crash sends
// nothing twice that the server had accepted). A recipient the server refuses for good (5xx)
// is recorded and never tried again; when no recipient is left to try and none was reached,
// the error wraps topup.ErrUndeliverable. Any other failure is temporary: River retries the
// job with backoff.
func (s *Sender) Send(ctx context.Context, d topup.Delivery) error {
	recorded, err := s.store.JobDeliveries(ctx, d.JobID)
	if err != nil {
		return err
	}
	done := make(map[string]bool, len(recorded))
	reached := false
	for _, r := range recorded {
		done[strings.ToLower(r.Recipient)] = true
		reached = reached || r.State == topup.DeliverySent
	}
	var remaining []string
	for _, r := range topup.Recipients(d.Recipients...) {
		if !done[strings.ToLower(r)] {
			remaining = append(remaining, r)
		}
	}
	if len(remaining) == 0 {
		return nil
	}
	msg, err := s.message(d)
	if err != nil {
		return fmt.Errorf("%w: %w", topup.ErrUndeliverable, err)
	}
	if s.cfg.Host == "" {
		return s.writeOutbox(ctx, d, msg, remaining)
	}
	sent, rejected, err := s.deliver(ctx, msg, remaining)
	now := s.now()
	var records []topup.RecipientDelivery
	for _, r := range sent {
		records = append(records, s.record(d, r, topup.DeliverySent, "", now))
	}
	for r, why := range rejected {
		records = append(records, s.record(d, r, topup.DeliveryRejected, why, now))
	}
	// Recorded whatever err says: an accepted recipient must not get the message again.
	if rerr := s.store.RecordDeliveries(context.WithoutCancel(ctx), records); rerr != nil {
		s.log.ErrorContext(ctx, "notification delivered but not recorded: a retry may send it again",
			"job_id", d.JobID, "transaction_id", d.TransactionID, "error", rerr)
		return errors.Join(err, rerr)
	}
	s.metrics.observe(d.Event, len(sent), len(rejected))
	if len(sent) > 0 {
		s.log.InfoContext(ctx, "notification sent", "job_id", d.JobID, "kind", d.Event,
			"transaction_id", d.TransactionID, "recipients", len(sent), "attempt", d.Attempt)
	}
	for r, why := range rejected {
		s.log.WarnContext(ctx, "notification recipient refused for good", "job_id", d.JobID, "kind", d.Event,
			"transaction_id", d.TransactionID, "recipient", r, "reason", why)
	}
	if err != nil {
		return err
	}
	if !reached && len(sent) == 0 && len(rejected) == len(remaining) {
		return fmt.Errorf("%w: every recipient refused: %s", topup.ErrUndeliverable, joinReasons(rejected))
	}
	return nil
}

func (s *Sender) record(d topup.Delivery, rcpt, state, detail string, at time.Time) topup.RecipientDelivery {
	return topup.RecipientDelivery{JobID: d.JobID, Recipient: rcpt, TransactionID: d.TransactionID,
		Kind: d.Event, State: state, Detail: detail, At: at}
}

// message builds the e-mail of d: To lists every recipient of the notification, whatever this
// attempt sends to; the Message-ID is the job's, so a copy sent twice is recognisable.
func (s *Sender) message(d topup.Delivery) (*mail.Msg, error) {
	r, err := Render(d.Notification)
	if err != nil {
		return nil, err
	}
	m := mail.NewMsg()
	if err := m.From(s.cfg.From); err != nil {
		return nil, err
	}
	if err := m.To(topup.Recipients(d.Recipients...)...); err != nil {
		return nil, err
	}
	m.Subject(r.Subject)
	m.SetMessageIDWithValue(fmt.Sprintf("recarga-%s-%d@%s", d.TransactionID, d.JobID, domainOf(s.cfg.From)))
	m.SetDateWithValue(d.OccurredAt)
	m.SetBodyString(mail.TypeTextPlain, r.Text)
	m.AddAlternativeString(mail.TypeTextHTML, r.HTML)
	return m, nil
}

// writeOutbox writes the e-mail as one .eml file per job (development without SMTP_HOST).
func (s *Sender) writeOutbox(ctx context.Context, d topup.Delivery, m *mail.Msg, rcpts []string) error {
	if err := os.MkdirAll(s.cfg.OutboxDir, 0o750); err != nil {
		return fmt.Errorf("email: outbox: %w", err)
	}
	name := fmt.Sprintf("%s-%s-%s-job%d.eml", d.OccurredAt.UTC().Format("20060102T150405Z"), d.Event, d.TransactionID, d.JobID)
	path := filepath.Join(s.cfg.OutboxDir, name)
	if _, err := os.Stat(path); err != nil {
		// Rendered whole, then written at once: go-mail writes a message in many small
		// pieces (about twenty writes to a file, one system call each).
		var b bytes.Buffer
		if _, err := m.WriteTo(&b); err != nil {
			return fmt.Errorf("email: outbox: %w", err)
		}
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, b.Bytes(), 0o666); err != nil {
			return fmt.Errorf("email: outbox: %w", err)
		}
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("email: outbox: %w", err)
		}
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	now := s.now()
	records := make([]topup.RecipientDelivery, 0, len(rcpts))
	for _, r := range rcpts {
		records = append(records, s.record(d, r, topup.DeliverySent, "written to "+path, now))
	}
	if err := s.store.RecordDeliveries(context.WithoutCancel(ctx), records); err != nil {
		return err
	}
	s.metrics.observe(d.Event, len(rcpts), 0)
	s.log.InfoContext(ctx, "notification written to the outbox (no SMTP_HOST)", "path", path, "kind", d.Event,
		"transaction_id", d.TransactionID, "recipients", len(rcpts))
	return nil
}

// deliver runs one SMTP transaction for rcpts: each recipient the server accepts at RCPT gets
// the message when DATA is accepted. A 5xx answer to RCPT refuses that recipient for good; a
// 5xx answer to DATA refuses every accepted one. Anything else (no connection, a 4xx, a
// timeout, a failed authentication) is a temporary error and nothing is recorded as sent.
func (s *Sender) deliver(ctx context.Context, m *mail.Msg, rcpts []string) (sent []string, rejected map[string]string, err error) {
	rejected = map[string]string{}
	c, stop, err := s.dial(ctx)
	if err != nil {
		return nil, rejected, err
	}
	defer func() { stop(); _ = c.Close() }()
	step := func(what string, f func() error) error {
		if err := c.UpdateDeadline(s.cfg.Timeout); err != nil {
			return err
		}
		if err := f(); err != nil {
			return fmt.Errorf("email: %s: %w", what, err)
		}
		return nil
	}
	if err := step("MAIL FROM", func() error { return c.Mail(s.cfg.From) }); err != nil {
		return nil, rejected, err
	}
	var accepted []string
	for _, r := range rcpts {
		err := step("RCPT TO", func() error { return c.Rcpt(r) })
		switch {
		case err == nil:
			accepted = append(accepted, r)
		case permanent(err):
			rejected[r] = err.Error()
		default:
			_ = c.Reset()
			return nil, rejected, err
		}
	}
	if len(accepted) == 0 {
		_ = c.Reset()
		return nil, rejected, nil
	}
	err = step("DATA", func() error {
		w, err := c.Data()
		if err != nil {
			return err
		}
		if _, err := m.WriteTo(w); err != nil {
			_ = w.Close()
			return err
		}
		return w.Close()
	})
	if err != nil {
		if permanent(err) {
			for _, r := range accepted {
				rejected[r] = err.Error()
			}
			return nil, rejected, nil
		}
		return nil, rejected, err
	}
	_ = step("QUIT", c.Quit)
	return accepted, rejected, nil
}

// dial connects, says hello, upgrades to TLS when offered and authenticates when configured,
// each exchange within Timeout and ctx.
func (s *Sender) dial(ctx context.Context) (_ *smtp.Client, stop func() bool, _ error) {
	addr := net.JoinHostPort(s.cfg.Host, strconv.Itoa(s.cfg.Port))
	tlsConfig := s.cfg.TLS
	if tlsConfig == nil {
		tlsConfig = &tls.Config{ServerName: s.cfg.Host, MinVersion: tls.VersionTLS12}
	}
	dialer := &net.Dialer{Timeout: s.cfg.Timeout}
	var conn net.Conn
	var err error
	if s.cfg.Port == 465 {
		conn, err = (&tls.Dialer{NetDialer: dialer, Config: tlsConfig}).DialContext(ctx, "tcp", addr)
	} else {
		conn, err = dialer.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("email: connect to %s: %w", addr, err)
	}
	// The request's context ends the exchange wherever it is.
	stop = context.AfterFunc(ctx, func() { _ = conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(s.cfg.Timeout))
	c, err := smtp.NewClient(conn, s.cfg.Host)
	if err != nil {
		stop()
		_ = conn.Close()
		return nil, nil, fmt.Errorf("email: greeting of %s: %w", addr, err)
	}
	fail := func(what string, err error) (*smtp.Client, func() bool, error) {
		stop()
		_ = c.Close()
		return nil, nil, fmt.Errorf("email: %s with %s: %w", what, addr, err)
	}
	if err := c.UpdateDeadline(s.cfg.Timeout); err != nil {
		return fail("deadline", err)
	}
	if err := c.Hello("localhost"); err != nil {
		return fail("EHLO", err)
	}
	if ok, _ := c.Extension("STARTTLS"); ok && s.cfg.Port != 465 {
		if err := c.UpdateDeadline(s.cfg.Timeout); err != nil {
			return fail("deadline", err)
		}
		if err := c.StartTLS(tlsConfig); err != nil {
			return fail("STARTTLS", err)
		}
	}
	if s.cfg.Username != "" {
		var auth smtp.Auth = smtp.PlainAuth("", s.cfg.Username, s.cfg.Password, s.cfg.Host, false)
		if ok, mechs := c.Extension("AUTH"); ok && !strings.Contains(" "+mechs+" ", " PLAIN ") && strings.Contains(" "+mechs+" ", " LOGIN ") {
			auth = smtp.LoginAuth(s.cfg.Username, s.cfg.Password, s.cfg.Host, false)
		}
		if err := c.UpdateDeadline(s.cfg.Timeout); err != nil {
			return fail("deadline", err)
		}
		if err := c.Auth(auth); err != nil {
			return fail("authentication", err)
		}
	}
	return c, stop, nil
}

// permanent reports a 5xx SMTP answer.
func permanent(err error) bool {
	var te *textproto.Error
	return errors.As(err, &te) && te.Code >= 500 && te.Code < 600
}

func joinReasons(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for r, why := range m {
		parts = append(parts, r+": "+why)
	}
	return strings.Join(parts, "; ")
}

func domainOf(addr string) string {
	if i := strings.LastIndexByte(addr, '@'); i >= 0 {
		return strings.Trim(addr[i+1:], "> ")
	}
	return "localhost"
}
