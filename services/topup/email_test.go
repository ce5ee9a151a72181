package main

import (
	"bytes"
	"context"
	"errors"
	"mime"
	"net"
	"net/http"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/internal/config"
	"github.com/platform/integrations/internal/jobs"
	"github.com/platform/integrations/internal/smtptest"
	"github.com/platform/integrations/internal/storage/storagetest"
	"github.com/platform/integrations/topup"
	"github.com/platform/integrations/topup/email"
)

func smtpEnv(srv *smtptest.Server) map[string]string {
	return map[string]string{"SMTP_HOST": srv.Host, "SMTP_PORT": strconv.Itoa(srv.Port), "SMTP_FROM": "recargas@example.com", "SMTP_TIMEOUT": "5"}
}

func subjectOf(t *testing.T, data []byte) string {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	s, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// waitNotification polls the detail of a transaction until its only notification job reached
// state, and returns the job.
func waitNotification(t *testing.T, s *stack, id, state string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		notes, _ := s.transaction(t, id)["notifications"].([]any)
		if len(notes) == 1 && notes[0].(map[string]any)["state"] == state {
			return notes[0].(map[string]any)
		}
		if time.Now().After(deadline) {
			t.Fatalf("notifications of %s: %v, want one %s", id, notes, state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A webhook top-up refused by the carrier produces exactly one failed-notification e-mail at the
// SMTP server, to the branch and operations, and the transaction's detail shows its delivery.
func TestWebhookFailureSendsOneEmail(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		mailSrv := smtptest.NewServer(t)
		s := newStack(t, tg, smtpEnv(mailSrv))
		a := s.do("POST", webhookPath, invoice("RECCARRIER5", 5, carriertest.SubscriberNoBalance), serviceKey())
		a.expect(t, http.StatusCreated)
		id := a.str("transaction_id")
		if a.str("status") != "failed" {
			t.Fatalf("webhook answer %s, want a failed top-up", a.raw)
		}
		mailSrv.WaitMessages(t, 1, 10*time.Second)
		job := waitNotification(t, s, id, "completed")
		time.Sleep(300 * time.Millisecond) // room for a second copy to show up
		msgs := mailSrv.Messages()
		if len(msgs) != 1 {
			t.Fatalf("%d e-mails at the SMTP server, want exactly 1", len(msgs))
		}
		if want := []string{"branch@example.com", testOperations}; !slices.Equal(msgs[0].To, want) {
			t.Errorf("recipients %v, want %v", msgs[0].To, want)
		}
		if subj := subjectOf(t, msgs[0].Data); !strings.HasPrefix(subj, "Recarga fallida: RECCARRIER5 al "+carriertest.SubscriberNoBalance) {
			t.Errorf("subject %q", subj)
		}
		if !bytes.Contains(msgs[0].Data, []byte(id)) || bytes.Contains(msgs[0].Data, []byte(testPassword)) || bytes.Contains(msgs[0].Data, []byte("<?xml")) {
			t.Errorf("e-mail without the transaction id, or with the SPR password or raw XML:\n%s", msgs[0].Data)
		}
		deliveries, _ := job["deliveries"].([]any)
		if len(deliveries) != 2 || job["last_error"] != nil {
			t.Fatalf("job %v, want two deliveries and no error", job)
		}
		for _, d := range deliveries {
			if d.(map[string]any)["state"] != topup.DeliverySent {
				t.Errorf("delivery %v, want sent", d)
			}
		}
		m := s.do("GET", "/metrics", nil, nil).raw
		for _, series := range []string{`topup_notifications_sent_total{kind="recharge-failed"} 2`, "topup_notifications_waiting 0",
			"topup_notifications_oldest_waiting_seconds 0"} {
			if !strings.Contains(m, series+"\n") {
				t.Errorf("/metrics lacks %q", series)
			}
		}
	})
}

// A refused recipient is recorded on the job and never tried again; when nobody can be reached
// the job is cancelled with the server's answer, not retried.
func TestRefusedRecipientsAreRecordedAndNotRetried(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		mailSrv := smtptest.NewServer(t)
		mailSrv.RefuseRecipient("branch@example.com", 550)
		mailSrv.RefuseRecipient(testOperations, 550)
		s := newStack(t, tg, smtpEnv(mailSrv))
		a := s.do("POST", webhookPath, invoice("RECCARRIER5", 5, carriertest.SubscriberNoBalance), serviceKey())
		a.expect(t, http.StatusCreated)
		job := waitNotification(t, s, a.str("transaction_id"), "cancelled")
		if le, _ := job["last_error"].(string); !strings.Contains(le, "550") {
			t.Errorf("last_error %v, want the server's 550", job["last_error"])
		}
		if deliveries, _ := job["deliveries"].([]any); len(deliveries) != 2 || deliveries[0].(map[string]any)["state"] != topup.DeliveryRejected {
			t.Errorf("deliveries %v, want both rejected", job["deliveries"])
		}
		if n := len(mailSrv.Messages()); n != 0 {
			t.Errorf("%d messages, want none", n)
		}
		if m := s.do("GET", "/metrics", nil, nil).raw; !strings.Contains(m, `topup_notifications_failed_total{kind="recharge-failed"} 2`+"\n") {
			t.Errorf("/metrics lacks the two refused recipients")
		}
	})
}

// crashingSender is a worker that dies after the SMTP server accepted the message, before River
// records the job as completed (the first time only).
type crashingSender struct {
	inner   topup.Sender
	crashed atomic.Bool
}

var errWorkerKilled = errors.New("worker killed after the server accepted the message")

func (c *crashingSender) Send(ctx context.Context, d topup.Delivery) error {
	if err := c.inner.Send(ctx, d); err != nil {
		return err
	}
	if c.crashed.CompareAndSwap(false, true) {
		return errWorkerKilled
	}
	return nil
}

// A worker killed after the server accepted the message, and run again, does not deliver it
// again: the job's next attempt finds its recipients recorded.
func TestWorkerKilledAfterAcceptanceDoesNotResend(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		mailSrv := smtptest.NewServer(t)
		inner, err := email.New(email.Config{Host: mailSrv.Host, Port: mailSrv.Port, From: "recargas@example.com", Timeout: 5 * time.Second},
			topup.NewStore(tg.DB, nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		crash := &crashingSender{inner: inner}
		s := &stack{t: t, tg: tg, clock: &clock{now: time.Now()}, outbox: t.TempDir(), sender: crash}
		s.spr = carriertest.NewServer(carriertest.WithCredentials("spr-user", testPassword, "COMP1"))
		t.Cleanup(s.spr.Close)
		s.addInstance(nil)

		a := s.do("POST", webhookPath, invoice("RECCARRIER5", 5, carriertest.SubscriberNoBalance), serviceKey())
		a.expect(t, http.StatusCreated)
		job := waitNotification(t, s, a.str("transaction_id"), "completed")
		if !crash.crashed.Load() || job["attempt"] != float64(2) {
			t.Fatalf("job %v: want the crash on attempt 1 and completion on attempt 2", job)
		}
		if le, _ := job["last_error"].(string); !strings.Contains(le, errWorkerKilled.Error()) {
			t.Errorf("last_error %v, want the crash", job["last_error"])
		}
		if n := len(mailSrv.Messages()); n != 1 {
			t.Fatalf("%d e-mails after the worker died and ran again, want 1", n)
		}
	})
}

// Without SMTP_HOST (development, make run) the same top-up leaves one .eml in the outbox.
func TestDevelopmentWritesTheEmailToTheOutbox(t *testing.T) {
	s := newStack(t, storagetest.SQLite(t), nil)
	a := s.do("POST", webhookPath, invoice("RECCARRIER5", 5, carriertest.SubscriberNoBalance), serviceKey())
	a.expect(t, http.StatusCreated)
	waitNotification(t, s, a.str("transaction_id"), "completed")
	files, err := filepath.Glob(filepath.Join(s.outbox, "*.eml"))
	if err != nil || len(files) != 1 {
		t.Fatalf("outbox holds %v (%v), want one .eml", files, err)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if subj := subjectOf(t, data); !strings.HasPrefix(subj, "Recarga fallida") || !strings.Contains(files[0], a.str("transaction_id")) {
		t.Fatalf("outbox file %s with subject %q", files[0], subj)
	}
	if !strings.Contains(s.logs.String(), files[0]) {
		t.Errorf("the log does not name %s", files[0])
	}
}

// While the mail server cannot be reached the job waits for its next attempt: the detail shows
// the error, and /metrics counts it as waiting with its age.
func TestUnreachableMailServerLeavesTheJobWaiting(t *testing.T) {
	s := newStack(t, storagetest.SQLite(t), map[string]string{"SMTP_HOST": "127.0.0.1", "SMTP_PORT": "1", "SMTP_FROM": "recargas@example.com"})
	a := s.do("POST", webhookPath, invoice("RECCARRIER5", 5, carriertest.SubscriberNoBalance), serviceKey())
	a.expect(t, http.StatusCreated)
	job := waitNotification(t, s, a.str("transaction_id"), "retryable")
	if le, _ := job["last_error"].(string); !strings.Contains(le, "connect to 127.0.0.1:1") {
		t.Errorf("last_error %v, want the connection failure", job["last_error"])
	}
	m := s.do("GET", "/metrics", nil, nil).raw
	if !strings.Contains(m, "topup_notifications_waiting 1\n") || strings.Contains(m, "topup_notifications_oldest_waiting_seconds 0\n") {
		t.Errorf("/metrics does not show one job waiting with an age:\n%s", grepLines(m, "topup_notifications"))
	}
}

func grepLines(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// The service as make run starts it (development defaults, no SMTP_HOST, in a fresh directory):
// a refused webhook top-up leaves one .eml under ./data/outbox/.
func TestMakeRunLeavesTheEmailInDataOutbox(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cmd := storagetest.StartChild(t, map[string]string{"APP_ENV": "development", "PORT": port, "RECARGAS_RECONCILE_INTERVAL": "0"})
	base := "http://127.0.0.1:" + port
	body := `{"invoice_number":"001-001-000000777","invoice_code":"FAC-777","product_code":"RECCARRIER3","subscriber_id":"` +
		carriertest.SubscriberNoBalance + `","amount":3,"notification_email":"sucursal@example.com","source_xml_hash":"` + strings.Repeat("ab", 32) + `"}`
	deadline := time.Now().Add(15 * time.Second)
	posted := false
	for time.Now().Before(deadline) {
		if !posted {
			req, _ := http.NewRequest("POST", base+webhookPath, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("x-service-key", config.DevTopupServiceKey)
			if res, err := http.DefaultClient.Do(req); err == nil {
				res.Body.Close()
				if res.StatusCode != http.StatusCreated {
					t.Fatalf("webhook: %d", res.StatusCode)
				}
				posted = true
			}
		}
		if files, _ := filepath.Glob(filepath.Join(dir, "data", "outbox", "*.eml")); posted && len(files) == 1 {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "data", "outbox", "*"))
	t.Fatalf("posted %v; ./data/outbox holds %v, want one .eml; output:\n%s", posted, files, cmd.Stdout)
}

// `topup worker` sends the e-mails of jobs queued by another process, without serving HTTP, and
// stops on SIGTERM.
func TestWorkerCommandSendsQueuedEmails(t *testing.T) {
	tg := storagetest.SQLite(t)
	if err := migrate(t.Context(), tg.DB); err != nil {
		t.Fatal(err)
	}
	q, err := jobs.New(tg.DB, nil, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	rec := &topup.Transaction{ID: uuid.Must(uuid.NewV7()), Source: topup.SourceWorkflowWebhook, Quantity: 1, Status: topup.StatusFailed,
		SubscriberID: carriertest.SubscriberNoBalance, NotificationEmail: "branch@example.com", CreatedAt: now, UpdatedAt: now}
	n := &topup.Notification{Event: topup.KindRechargeFailed, Recipients: []string{"branch@example.com"}, TransactionID: rec.ID.String(),
		Source: rec.Source, Status: rec.Status, SubscriberID: rec.SubscriberID, OccurredAt: now}
	if err := topup.NewStore(tg.DB, q).Insert(t.Context(), rec, n); err != nil {
		t.Fatal(err)
	}

	mailSrv := smtptest.NewServer(t)
	env := smtpEnv(mailSrv)
	env["APP_ENV"], env["DATABASE_URL"] = "development", tg.URL
	cmd := storagetest.StartChild(t, env, "worker")
	msgs := mailSrv.WaitMessages(t, 1, 20*time.Second)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("worker stopped with %v: %s", err, cmd.Stdout)
	}
	if len(msgs) != 1 || !slices.Equal(msgs[0].To, []string{"branch@example.com"}) || !bytes.Contains(msgs[0].Data, []byte(rec.ID.String())) {
		t.Fatalf("messages %+v, want one to branch@example.com about %s", msgs, rec.ID)
	}
}
