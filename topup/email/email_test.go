package email_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/platform/integrations/internal/smtptest"
	"github.com/platform/integrations/topup"
	"github.com/platform/integrations/topup/email"
)

// memStore keeps deliveries in memory, as topup.Store does in its table.
type memStore struct {
	mu sync.Mutex
	ds []topup.RecipientDelivery
}

func (m *memStore) JobDeliveries(_ context.Context, jobID int64) ([]topup.RecipientDelivery, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []topup.RecipientDelivery
	for _, d := range m.ds {
		if d.JobID == jobID {
			out = append(out, d)
		}
	}
	return out, nil
}

func (m *memStore) RecordDeliveries(_ context.Context, ds []topup.RecipientDelivery) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ds = append(m.ds, ds...)
	return nil
}

func (m *memStore) states(jobID int64) map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for _, d := range m.ds {
		if d.JobID == jobID {
			out[d.Recipient] = d.State
		}
	}
	return out
}

func newSender(t *testing.T, srv *smtptest.Server, store email.Store) *email.Sender {
	t.Helper()
	cfg := email.Config{From: "recargas@example.com", Timeout: 5 * time.Second, OutboxDir: t.TempDir()}
	if srv != nil {
		cfg.Host, cfg.Port = srv.Host, srv.Port
	}
	s, err := email.New(cfg, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func notification(kind string, status topup.Status, recipients ...string) topup.Notification {
	return topup.Notification{
		Event: kind, Recipients: recipients, TransactionID: "0192a7c4-5b6e-7f00-8a1b-2c3d4e5f6a7b",
		ExternalTransactionID: "RC20261125000000000001", Source: topup.SourceWorkflowWebhook, Status: status,
		SubscriberID: "593987654321", OfferID: "31", ProductCode: "RECCARRIER3", Amount: "3.00",
		InvoiceNumber: "001-001-000012345", InvoiceCode: "FAC-12345", Message: "Saldo insuficiente en la cuenta",
		OccurredAt: time.Date(2026, 11, 25, 17, 30, 0, 0, time.UTC),
	}
}

// parsed is an accepted message read back: its headers and both bodies.
type parsed struct {
	subject, to, messageID string
	text, html             string
}

func parse(t *testing.T, data []byte) parsed {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("message does not parse: %v\n%s", err, data)
	}
	dec := new(mime.WordDecoder)
	subject, err := dec.DecodeHeader(m.Header.Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	p := parsed{subject: subject, to: m.Header.Get("To"), messageID: m.Header.Get("Message-Id")}
	_, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	mr := multipart.NewReader(m.Body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(part) // quoted-printable is decoded by multipart
		if err != nil {
			t.Fatal(err)
		}
		switch ct := part.Header.Get("Content-Type"); {
		case strings.HasPrefix(ct, "text/plain"):
			p.text = string(body)
		case strings.HasPrefix(ct, "text/html"):
			p.html = string(body)
		}
	}
	if p.text == "" || p.html == "" {
		t.Fatalf("want a text and an HTML part:\n%s", data)
	}
	return p
}

// One e-mail per job, to the de-duplicated recipients, with what the recipient needs, per kind.
func TestOneEmailPerJobForEachKind(t *testing.T) {
	cases := []struct {
		name        string
		kind        string
		status      topup.Status
		subject     string
		mustSay     []string
		recipients  []string
		wantRcpts   []string
		mustNotSend []string
	}{
		{"success", topup.KindRechargeSuccess, topup.StatusSuccess, "Recarga exitosa: RECCARRIER3 al 593987654321",
			[]string{"exitosa", "No se requiere ninguna acción"},
			[]string{"sucursal@example.com", "ops@example.com"}, []string{"sucursal@example.com", "ops@example.com"}, nil},
		{"failed", topup.KindRechargeFailed, topup.StatusFailed, "Recarga fallida: RECCARRIER3 al 593987654321",
			[]string{"fallida", "Saldo insuficiente en la cuenta", "solicite una recarga nueva"},
			[]string{"sucursal@example.com", "SUCURSAL@example.com ", "ops@example.com"}, []string{"sucursal@example.com", "ops@example.com"}, nil},
		{"unavailable", topup.KindRechargeUnavailable, topup.StatusUnavailable, "Recarga en verificación: RECCARRIER3 al 593987654321",
			[]string{"en verificación", "No solicite la recarga de nuevo"},
			[]string{"ops@example.com"}, []string{"ops@example.com"}, nil},
		{"invalid invoice", topup.KindRechargeInvalidInvoice, topup.StatusRejected, "Factura no procesable: 001-001-000012345",
			[]string{"rechazada", "Corrija la factura en el ERP"},
			[]string{"sucursal@example.com", "ops@example.com"}, []string{"sucursal@example.com", "ops@example.com"}, nil},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := smtptest.NewServer(t)
			s := newSender(t, srv, &memStore{})
			n := notification(tc.kind, tc.status, tc.recipients...)
			if err := s.Send(t.Context(), topup.Delivery{JobID: int64(10 + i), Attempt: 1, Notification: n}); err != nil {
				t.Fatal(err)
			}
			msgs := srv.Messages()
			if len(msgs) != 1 {
				t.Fatalf("%d messages, want 1", len(msgs))
			}
			if !slices.Equal(msgs[0].To, tc.wantRcpts) || msgs[0].From != "recargas@example.com" {
				t.Errorf("envelope from %s to %v, want recargas@example.com to %v", msgs[0].From, msgs[0].To, tc.wantRcpts)
			}
			p := parse(t, msgs[0].Data)
			if p.subject != tc.subject {
				t.Errorf("subject %q, want %q", p.subject, tc.subject)
			}
			if want := fmt.Sprintf("<recarga-%s-%d@example.com>", n.TransactionID, 10+i); p.messageID != want {
				t.Errorf("Message-Id %q, want %q", p.messageID, want)
			}
			fields := append([]string{"593987654321", "RECCARRIER3", "USD 3.00", "001-001-000012345", n.TransactionID,
				"RC20261125000000000001", "25/11/2026 12:30:00"}, tc.mustSay...)
			for _, f := range fields {
				if !strings.Contains(p.text, f) {
					t.Errorf("text body lacks %q:\n%s", f, p.text)
				}
				if !strings.Contains(p.html, f) {
					t.Errorf("HTML body lacks %q:\n%s", f, p.html)
				}
			}
			for _, body := range []string{p.text, p.html, string(msgs[0].Data)} {
				if strings.Contains(body, "<?xml") || strings.Contains(body, "PASSWORD") {
					t.Errorf("message holds raw XML or a secret:\n%s", body)
				}
			}
		})
	}
}

// A temporary failure is retried by River: nothing is recorded, and the next attempt delivers once.
func TestTemporaryFailureThenSuccess(t *testing.T) {
	srv := smtptest.NewServer(t)
	store := &memStore{}
	s := newSender(t, srv, store)
	d := topup.Delivery{JobID: 1, Attempt: 1, Notification: notification(topup.KindRechargeFailed, topup.StatusFailed, "sucursal@example.com")}

	srv.RefuseRecipient("sucursal@example.com", 451)
	err := s.Send(t.Context(), d)
	if err == nil || errors.Is(err, topup.ErrUndeliverable) {
		t.Fatalf("after a 451: %v, want a temporary error", err)
	}
	srv.RefuseRecipient("sucursal@example.com", 0)
	srv.FailData(421)
	if err := s.Send(t.Context(), d); err == nil || errors.Is(err, topup.ErrUndeliverable) {
		t.Fatalf("after a 421 at DATA: %v, want a temporary error", err)
	}
	if n := len(srv.Messages()); n != 0 || len(store.states(1)) != 0 {
		t.Fatalf("%d messages and %v recorded after temporary failures, want none", n, store.states(1))
	}
	d.Attempt = 3
	if err := s.Send(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Messages()); n != 1 {
		t.Fatalf("%d messages, want 1", n)
	}
	if got := store.states(1); got["sucursal@example.com"] != topup.DeliverySent {
		t.Fatalf("recorded %v", got)
	}
}

// A refused recipient is recorded and never tried again; the others get the message. When
// nobody could be reached, the job is undeliverable (cancelled, not retried).
func TestPermanentFailureIsRecordedAndStops(t *testing.T) {
	srv := smtptest.NewServer(t)
	store := &memStore{}
	s := newSender(t, srv, store)
	srv.RefuseRecipient("nadie@example.com", 550)

	d := topup.Delivery{JobID: 2, Attempt: 1, Notification: notification(topup.KindRechargeFailed, topup.StatusFailed, "nadie@example.com", "ops@example.com")}
	if err := s.Send(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	msgs := srv.Messages()
	if len(msgs) != 1 || !slices.Equal(msgs[0].To, []string{"ops@example.com"}) {
		t.Fatalf("messages %+v, want one to ops@example.com", msgs)
	}
	if got := store.states(2); got["nadie@example.com"] != topup.DeliveryRejected || got["ops@example.com"] != topup.DeliverySent {
		t.Fatalf("recorded %v", got)
	}
	// Retried anyway (a crash before River completed the job): nothing more is sent or tried.
	srv.RefuseRecipient("nadie@example.com", 0)
	if err := s.Send(t.Context(), d); err != nil || len(srv.Messages()) != 1 {
		t.Fatalf("retry: %v, %d messages; want nil and still 1", err, len(srv.Messages()))
	}

	srv.RefuseRecipient("nadie@example.com", 550)
	only := topup.Delivery{JobID: 3, Attempt: 1, Notification: notification(topup.KindRechargeSuccess, topup.StatusSuccess, "nadie@example.com")}
	err := s.Send(t.Context(), only)
	if !errors.Is(err, topup.ErrUndeliverable) || !strings.Contains(err.Error(), "550") {
		t.Fatalf("every recipient refused: %v, want ErrUndeliverable with the server's answer", err)
	}
	if got := store.states(3); got["nadie@example.com"] != topup.DeliveryRejected {
		t.Fatalf("recorded %v", got)
	}
}

// A job retried after the server accepted its message (the worker died before River recorded
// the completion) sends nothing again.
func TestRetryAfterAcceptanceSendsNothing(t *testing.T) {
	srv := smtptest.NewServer(t)
	store := &memStore{}
	d := topup.Delivery{JobID: 4, Attempt: 1, Notification: notification(topup.KindRechargeSuccess, topup.StatusSuccess, "sucursal@example.com", "ops@example.com")}
	if err := newSender(t, srv, store).Send(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	d.Attempt = 2
	if err := newSender(t, srv, store).Send(t.Context(), d); err != nil { // a new process
		t.Fatal(err)
	}
	if n := len(srv.Messages()); n != 1 {
		t.Fatalf("%d messages, want 1", n)
	}
}

// Without a server, the e-mail is written once to the outbox as an .eml file.
func TestOutboxWithoutSMTPHost(t *testing.T) {
	store := &memStore{}
	dir := t.TempDir()
	s, err := email.New(email.Config{From: "recargas@localhost", OutboxDir: dir}, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := topup.Delivery{JobID: 5, Attempt: 1, Notification: notification(topup.KindRechargeFailed, topup.StatusFailed, "sucursal@example.com")}
	for range 2 {
		if err := s.Send(t.Context(), d); err != nil {
			t.Fatal(err)
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.eml"))
	if err != nil || len(files) != 1 {
		t.Fatalf("outbox %v (%v), want one .eml", files, err)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if p := parse(t, data); !strings.HasPrefix(p.subject, "Recarga fallida") || !strings.Contains(p.text, "Saldo insuficiente") {
		t.Fatalf("outbox message: %q\n%s", p.subject, p.text)
	}
}

// An unreachable server is a temporary error within the configured deadline.
func TestUnreachableServerIsTemporary(t *testing.T) {
	s, err := email.New(email.Config{Host: "127.0.0.1", Port: 1, From: "recargas@example.com", Timeout: time.Second}, &memStore{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := topup.Delivery{JobID: 6, Attempt: 1, Notification: notification(topup.KindRechargeSuccess, topup.StatusSuccess, "ops@example.com")}
	if err := s.Send(t.Context(), d); err == nil || errors.Is(err, topup.ErrUndeliverable) {
		t.Fatalf("connection refused: %v, want a temporary error", err)
	}
}

// Where the server offers STARTTLS the message goes over TLS, and with a username the sender
// authenticates; a wrong password is a temporary failure (a configuration to fix, the job waits).
func TestSTARTTLSAndAuthentication(t *testing.T) {
	srv := smtptest.NewServer(t, smtptest.WithTLS(), smtptest.WithAuth("recargas", "s3cret-smtp"))
	cfg := email.Config{Host: srv.Host, Port: srv.Port, From: "recargas@example.com", Username: "recargas", Password: "s3cret-smtp",
		Timeout: 5 * time.Second, TLS: &tls.Config{RootCAs: srv.RootCAs, ServerName: srv.Host, MinVersion: tls.VersionTLS12}}
	s, err := email.New(cfg, &memStore{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := topup.Delivery{JobID: 7, Attempt: 1, Notification: notification(topup.KindRechargeSuccess, topup.StatusSuccess, "ops@example.com")}
	if err := s.Send(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	msgs := srv.Messages()
	if len(msgs) != 1 || !msgs[0].TLS || msgs[0].User != "recargas" {
		t.Fatalf("messages %+v, want one over TLS from the authenticated user", msgs)
	}

	cfg.Password = "wrong"
	bad, err := email.New(cfg, &memStore{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = bad.Send(t.Context(), topup.Delivery{JobID: 8, Attempt: 1, Notification: d.Notification})
	if err == nil || errors.Is(err, topup.ErrUndeliverable) || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("wrong password: %v, want a temporary error that does not print the password", err)
	}
	// Without trust in the server's certificate nothing is sent.
	cfg.Password, cfg.TLS = "s3cret-smtp", nil
	untrusted, err := email.New(cfg, &memStore{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := untrusted.Send(t.Context(), topup.Delivery{JobID: 9, Attempt: 1, Notification: d.Notification}); err == nil || len(srv.Messages()) != 1 {
		t.Fatalf("untrusted certificate: %v, %d messages; want an error and nothing sent", err, len(srv.Messages()))
	}
}

// A job whose recipients were all refused over several attempts (one refused, then a temporary
// failure, then the other refused) is undeliverable, not completed.
func TestRefusedOverSeveralAttemptsIsUndeliverable(t *testing.T) {
	srv := smtptest.NewServer(t)
	store := &memStore{}
	s := newSender(t, srv, store)
	d := topup.Delivery{JobID: 11, Attempt: 1, Notification: notification(topup.KindRechargeFailed, topup.StatusFailed, "a@example.com", "b@example.com")}
	srv.RefuseRecipient("a@example.com", 550)
	srv.RefuseRecipient("b@example.com", 451)
	if err := s.Send(t.Context(), d); err == nil || errors.Is(err, topup.ErrUndeliverable) {
		t.Fatalf("first attempt: %v, want a temporary error", err)
	}
	srv.RefuseRecipient("b@example.com", 550)
	d.Attempt = 2
	if err := s.Send(t.Context(), d); !errors.Is(err, topup.ErrUndeliverable) {
		t.Fatalf("second attempt: %v, want ErrUndeliverable", err)
	}
	if got := store.states(11); got["a@example.com"] != topup.DeliveryRejected || got["b@example.com"] != topup.DeliveryRejected {
		t.Fatalf("recorded %v", got)
	}
}
