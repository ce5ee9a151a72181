package topup

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/shopspring/decimal"

	"github.com/platform/integrations/internal/jobs"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// recordingSender keeps every notification handed to it.
type recordingSender struct {
	mu   sync.Mutex
	sent []Notification
}

func (r *recordingSender) Send(_ context.Context, d Delivery) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, d.Notification)
	return nil
}

func (r *recordingSender) sentFor(txID string) []Notification {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Notification
	for _, n := range r.sent {
		if n.TransactionID == txID {
			out = append(out, n)
		}
	}
	return out
}

// TestNotificationJobWithoutRecipients: a status change that announces something always
// inserts its job, even with nobody to tell; the worker then completes that job without
// calling the Sender. Before, the job was not inserted at all when the recipient list was
// empty (the decision was taken at insert time).
func TestNotificationJobWithoutRecipients(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		e := newEnv(t, tg, Config{ThrottleLimit: 100})
		e.svc.cfg.OperationsEmail = "" // no OPERATIONS_EMAIL

		sender := &recordingSender{}
		workers := river.NewWorkers()
		if err := AddNotificationWorkers(workers, sender); err != nil {
			t.Fatal(err)
		}
		worker, err := jobs.New(tg.DB, workers, jobs.Config{
			Queues: map[string]int{NotificationQueue: 1}, PollInterval: 20 * time.Millisecond, FetchCooldown: 10 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := worker.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = worker.Stop(ctx)
		})

		five := decimal.RequireFromString("5.00")
		cases := []struct {
			name       string
			run        func(t *testing.T) *Transaction
			kind       string
			recipients []string
		}{
			{"manual top-up by an operator without e-mail", func(t *testing.T) *Transaction {
				op := operator("no-mail")
				op.Email = ""
				rec, err := e.svc.Recharge(t.Context(), manual(op, "593991234567"))
				if err != nil {
					t.Fatal(err)
				}
				return rec
			}, KindRechargeSuccess, nil},
			{"webhook rejection without notification_email", func(t *testing.T) *Transaction {
				_, err := e.svc.Webhook(t.Context(), WebhookRequest{
					InvoiceNumber: "001-001-000000901", ProductCode: "RECCARRIER77", SubscriberID: "593991234567",
					Amount: &five, SourceXMLHash: "no-recipient-hash-1", Payload: []byte(`{}`),
				})
				var re *RejectedError
				if !errors.As(err, &re) {
					t.Fatalf("err = %v, want *RejectedError", err)
				}
				return re.Transaction
			}, KindRechargeInvalidInvoice, nil},
			{"manual top-up by an operator with e-mail", func(t *testing.T) *Transaction {
				rec, err := e.svc.Recharge(t.Context(), manual(operator("with-mail"), "593991234567"))
				if err != nil {
					t.Fatal(err)
				}
				return rec
			}, KindRechargeSuccess, []string{"with-mail@example.com"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				rec := c.run(t)
				id := rec.ID.String()
				// The job exists and ends completed.
				deadline := time.Now().Add(10 * time.Second)
				var job *rivertype.JobRow
				for job == nil && time.Now().Before(deadline) {
					rows, err := worker.JobsByState(t.Context(), rivertype.JobStateCompleted, 1000)
					if err != nil {
						t.Fatal(err)
					}
					for _, r := range rows {
						if n, err := e.store.Notifications(t.Context(), rec.ID); err == nil && len(n) == 1 && n[0].ID == r.ID {
							job = r
						}
					}
					if job == nil {
						time.Sleep(20 * time.Millisecond)
					}
				}
				notes, err := e.store.Notifications(t.Context(), rec.ID)
				if err != nil {
					t.Fatal(err)
				}
				if len(notes) != 1 || notes[0].Kind != c.kind {
					t.Fatalf("jobs = %+v, want one %s", notes, c.kind)
				}
				if job == nil {
					t.Fatalf("job %s not completed: %+v", c.kind, notes)
				}
				if !equal(notes[0].Recipients, c.recipients) {
					t.Fatalf("recipients = %v, want %v", notes[0].Recipients, c.recipients)
				}
				sent := sender.sentFor(id)
				if len(c.recipients) == 0 && len(sent) != 0 {
					t.Fatalf("a notification without recipients was sent: %+v", sent)
				}
				if len(c.recipients) > 0 && (len(sent) != 1 || !equal(sent[0].Recipients, c.recipients)) {
					t.Fatalf("sent = %+v, want one to %v", sent, c.recipients)
				}
			})
		}
	})
}
